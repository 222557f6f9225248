package influence

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/pkg/errors"
)

// TopK returns the indices of the k largest scores, largest first; ties go to the lower index. k is clipped to
// len(scores).
func TopK(scores []float64, k int) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx[:min(k, len(idx))]
}

// Overlap returns |a ∩ b| / k for two top-k lists (k = len(a) = len(b); 0 for empty lists). Panics if the lengths
// differ.
func Overlap(a, b []int) float64 {
	if len(a) != len(b) {
		panic(errors.Errorf("influence.Overlap: lengths %d and %d", len(a), len(b)))
	}
	if len(a) == 0 {
		return 0
	}
	in := make(map[int]bool, len(a))
	for _, x := range a {
		in[x] = true
	}
	n := 0
	for _, x := range b {
		if in[x] {
			n++
		}
	}
	return float64(n) / float64(len(a))
}

// Ranks returns the ranks 1…n of x, ties given their average rank.
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

// Pearson returns the Pearson correlation of x and y; NaN when either is constant or shorter than 2. Panics if
// the lengths differ.
func Pearson(x, y []float64) float64 {
	if len(x) != len(y) {
		panic(errors.Errorf("influence.Pearson: lengths %d and %d", len(x), len(y)))
	}
	if len(x) < 2 {
		return math.NaN()
	}
	mx, my := mean(x), mean(y)
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

// Spearman returns the Spearman rank correlation of x and y (Pearson of the average ranks); NaN when either is
// constant. Panics if the lengths differ.
func Spearman(x, y []float64) float64 { return Pearson(Ranks(x), Ranks(y)) }

// MeanCI returns the mean of xs (NaNs skipped) and a percentile bootstrap confidence interval at the given level
// (e.g. 0.95) from reps resamples with a fixed seed. With fewer than 2 values the interval is the mean itself.
func MeanCI(xs []float64, level float64, reps int, seed uint64) (m, lo, hi float64) {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	m = mean(v)
	if len(v) < 2 || reps < 2 {
		return m, m, m
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	means := make([]float64, reps)
	for r := range means {
		s := 0.0
		for range v {
			s += v[rng.IntN(len(v))]
		}
		means[r] = s / float64(len(v))
	}
	sort.Float64s(means)
	alpha := (1 - level) / 2
	at := func(q float64) float64 {
		i := int(math.Floor(q * float64(reps-1)))
		return means[max(0, min(reps-1, i))]
	}
	return m, at(alpha), at(1 - alpha)
}

// LDS returns the linear datamodeling score: for each query q, the Spearman correlation over the M subsets between
// the predicted Σ_{s∈subset m} scores[q][s] and −losses[m][q] (the negated query loss of the model retrained on
// subset m; minus because positive influence means helpful), and their mean over queries (NaNs skipped).
// subsets[m] lists training-sequence indices. It fails on inconsistent sizes or fewer than 3 subsets.
func LDS(scores [][]float64, subsets [][]int, losses [][]float64) (meanLDS float64, perQuery []float64, err error) {
	M := len(subsets)
	if M < 3 || len(losses) != M {
		return math.NaN(), nil, errors.Errorf("influence.LDS: %d subsets and %d loss rows; want equal and ≥ 3", M, len(losses))
	}
	perQuery = make([]float64, len(scores))
	for q, sc := range scores {
		pred, actual := make([]float64, M), make([]float64, M)
		for m, sub := range subsets {
			if len(losses[m]) != len(scores) {
				return math.NaN(), nil, errors.Errorf("influence.LDS: loss row %d has %d queries, want %d", m, len(losses[m]), len(scores))
			}
			for _, s := range sub {
				if s < 0 || s >= len(sc) {
					return math.NaN(), nil, errors.Errorf("influence.LDS: subset %d names sequence %d outside [0, %d)", m, s, len(sc))
				}
				pred[m] += sc[s]
			}
			actual[m] = -losses[m][q]
		}
		perQuery[q] = Spearman(pred, actual)
	}
	meanLDS, _, _ = MeanCI(perQuery, 0.95, 0, 0)
	return meanLDS, perQuery, nil
}
