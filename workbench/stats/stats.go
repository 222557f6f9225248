package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Mean returns x̄ = (1/n) Σ x_i (doc.go, equation 1); NaN for an empty slice.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// Variance returns the sample variance Σ (x_i − x̄)² / (n − 1) (equation 2); NaN for fewer than two values.
func Variance(x []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	m := Mean(x)
	ss := 0.0
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return ss / float64(len(x)-1)
}

// StdDev returns the sample standard deviation √Variance (equation 3); NaN for fewer than two values.
func StdDev(x []float64) float64 { return math.Sqrt(Variance(x)) }

// MeanSE returns the mean and its standard error √(s²/n) with the n − 1 sample variance s² (equation 4). The mean is
// NaN for an empty slice and the error NaN for fewer than two values.
func MeanSE(x []float64) (mean, se float64) {
	return Mean(x), math.Sqrt(Variance(x) / float64(len(x)))
}

// MeanSEOrZero is MeanSE for values stored as JSON, which has no NaN: the mean is 0 for an empty slice and the error
// 0 for fewer than two values. A NaN among the values still gives NaN (the data is not hidden).
func MeanSEOrZero(x []float64) (mean, se float64) {
	switch len(x) {
	case 0:
		return 0, 0
	case 1:
		return x[0], 0
	}
	return MeanSE(x)
}

// Median returns the middle value of x, or the mean of the two middle values for an even count (equation 5); NaN
// for an empty slice. x is not reordered.
func Median(x []float64) float64 {
	n := len(x)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MeanCI returns the mean of xs (NaNs skipped) and a percentile bootstrap confidence interval at the given level
// (e.g. 0.95) from reps resamples with a fixed seed (equation 6). With fewer than 2 values, or reps < 2, the interval
// is the mean itself; with no value all three are NaN.
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
	m = Mean(v)
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
	slices.Sort(means)
	alpha := (1 - level) / 2
	at := func(q float64) float64 {
		i := int(math.Floor(q * float64(reps-1)))
		return means[max(0, min(reps-1, i))]
	}
	return m, at(alpha), at(1 - alpha)
}
