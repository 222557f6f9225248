package stats_test

import (
	"fmt"
	"math"

	"github.com/protolab/protolab/workbench/stats"
)

func ExampleMean() {
	fmt.Println(stats.Mean([]float64{1, 2, 3, 4}))
	// Output: 2.5
}

func ExampleVariance() {
	// Σ(x − 2.5)² = 5 over n − 1 = 3.
	fmt.Printf("%.4f\n", stats.Variance([]float64{1, 2, 3, 4}))
	// Output: 1.6667
}

func ExampleStdDev() {
	fmt.Printf("%.4f = √(5/3)\n", stats.StdDev([]float64{1, 2, 3, 4}))
	// Output: 1.2910 = √(5/3)
}

func ExampleMeanSE() {
	m, se := stats.MeanSE([]float64{3, 8})
	fmt.Println(m, se) // se = |3 − 8|/2 for two values
	m, se = stats.MeanSE([]float64{7})
	fmt.Println(m, se) // one value has no standard error
	// Output:
	// 5.5 2.5
	// 7 NaN
}

func ExampleMedian() {
	fmt.Println(stats.Median([]float64{3, 1, 2}), stats.Median([]float64{4, 1, 3, 2}))
	// Output: 2 2.5
}

func ExampleMeanCI() {
	m, lo, hi := stats.MeanCI([]float64{2, 2, math.NaN(), 2}, 0.95, 1000, 1)
	fmt.Println(m, lo, hi) // NaNs are skipped; a constant sample has a zero-width interval
	// Output: 2 2 2
}

func ExampleRanks() {
	fmt.Println(stats.Ranks([]float64{-1, 2, 2, 5}))
	// Output: [1 2.5 2.5 4]
}

func ExamplePearson() {
	fmt.Println(stats.Pearson([]float64{1, 2, 3}, []float64{1, 3, 2}))
	// Output: 0.5
}

func ExampleSpearman() {
	// Ranks (1 2 3 4) and (1 3 2 4): 1 − 6·2/(4·15).
	fmt.Printf("%.4f\n", stats.Spearman([]float64{1, 2, 3, 4}, []float64{10, 30, 20, 40}))
	// Output: 0.8000
}

func ExampleTopK() {
	fmt.Println(stats.TopK([]float64{1, 3, 3, 0, 2}, 3))
	// Output: [1 2 4]
}

func ExampleOverlap() {
	a := stats.TopK([]float64{0.4, 0.3, 0.2, 0.1}, 2)
	b := stats.TopK([]float64{0.4, 0.1, 0.3, 0.2}, 2)
	fmt.Println(a, b, stats.Overlap(a, b))
	// Output: [0 1] [0 2] 0.5
}

func ExampleSpearmanTopK() {
	x, y := []float64{3, 2, 1, 0}, []float64{2, 3, 1, 9}
	// The union of the top-2 sets is {0, 1, 3}, on which the two orders are reversed.
	fmt.Println(stats.SpearmanTopK(x, y, 2))
	// Output: -1
}

func ExampleSoftmax() {
	fmt.Printf("%.2f\n", stats.Softmax([]float64{1000, 1000 + math.Log(3)}))
	// Output: [0.25 0.75]
}

func ExampleJensenShannon() {
	fmt.Printf("%.6f = ln 2\n", stats.JensenShannon([]float64{1, 0}, []float64{0, 1}))
	// Output: 0.693147 = ln 2
}

func ExampleGini() {
	fmt.Println(stats.Gini([]float64{1, 1, 1, 1}), stats.Gini([]float64{0, 0, 1, 0}))
	// Output: 0 0.75
}

func ExampleBinomialTail() {
	// Pr[Bin(4, ½) ≥ 2] = (6 + 4 + 1)/16.
	fmt.Printf("%.4f = %.4f\n", stats.BinomialTail(2, 4, 0.5), 11.0/16)
	// Output: 0.6875 = 0.6875
}
