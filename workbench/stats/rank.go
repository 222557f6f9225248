package stats

import (
	"math"
	"slices"
	"sort"

	"github.com/pkg/errors"
)

// Ranks returns the ranks 1…n of x, smallest first, ties given the average of the ranks they span (equation 7).
func Ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for m := i; m <= j; m++ {
			r[idx[m]] = avg
		}
		i = j + 1
	}
	return r
}

// Pearson returns the Pearson correlation of x and y (equation 8); NaN when either is constant or shorter than 2.
// Panics if the lengths differ.
func Pearson(x, y []float64) float64 {
	if len(x) != len(y) {
		panic(errors.Errorf("stats.Pearson: lengths %d and %d", len(x), len(y)))
	}
	if len(x) < 2 {
		return math.NaN()
	}
	mx, my := Mean(x), Mean(y)
	sxy, sxx, syy := 0.0, 0.0, 0.0
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// Spearman returns the Spearman rank correlation of x and y, the Pearson correlation of their average ranks
// (equation 9); NaN when either is constant or shorter than 2. Panics if the lengths differ.
func Spearman(x, y []float64) float64 { return Pearson(Ranks(x), Ranks(y)) }

// TopK returns the indices of the k largest values of x, largest first; ties go to the lower index (equation 10).
// k is clipped to [0, len(x)].
func TopK(x []float64, k int) []int {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] > x[idx[b]] })
	return idx[:max(0, min(k, len(idx)))]
}

// Overlap returns |a ∩ b| / len(a) for two top-k index lists of equal length (equation 11); 0 for empty lists.
// Panics if the lengths differ.
func Overlap(a, b []int) float64 {
	if len(a) != len(b) {
		panic(errors.Errorf("stats.Overlap: lengths %d and %d", len(a), len(b)))
	}
	if len(a) == 0 {
		return 0
	}
	in := make(map[int]bool, len(a))
	for _, v := range a {
		in[v] = true
	}
	n := 0
	for _, v := range b {
		if in[v] {
			n++
		}
	}
	return float64(n) / float64(len(a))
}

// SpearmanTopK returns the Spearman correlation of x and y over the union of their top-k indices (equation 12); NaN
// when either is constant there (a union of one index, or equal values). Panics if the lengths differ.
func SpearmanTopK(x, y []float64, k int) float64 {
	if len(x) != len(y) {
		panic(errors.Errorf("stats.SpearmanTopK: lengths %d and %d", len(x), len(y)))
	}
	union := append(TopK(x, k), TopK(y, k)...)
	slices.Sort(union)
	union = slices.Compact(union)
	a, b := make([]float64, len(union)), make([]float64, len(union))
	for n, i := range union {
		a[n], b[n] = x[i], y[i]
	}
	return Spearman(a, b)
}
