package naming_test

import (
	"fmt"

	"github.com/protolab/protolab/workbench/naming"
)

// ExampleScoreUnit names a unit whose five top tokens carry label A four times (base rate 0.4): purity 0.8,
// excess (0.8 − 0.4)/(1 − 0.4) = 2/3, p-value 3·Pr[Bin(5, 0.4) ≥ 4] = 0.26 with three eligible labels.
func ExampleScoreUnit() {
	ts := &naming.Tokens{
		Names: []string{"A", "B", "C"},
		Of:    [][]int32{{0}, {0}, {0}, {0, 1}, {1}, {}, {}, {2}, {}, {}},
		Doc:   []int32{0, 0, 1, 1, 2, 2, 3, 3, 4, 4},
	}
	s := naming.ScoreUnit([]int{0, 1, 2, 3, 4}, ts, ts.BaseRates(),
		naming.ScoreParams{MinPurity: 0.5, Alpha: 0.3, ThemeExcess: 0.25})
	fmt.Printf("%s purity %.2f excess %.3f p %.3f named %v\n", s.Label, s.Purity, s.Excess, s.PValue, s.Named)
	// Output: A purity 0.80 excess 0.667 p 0.261 named true
}
