package stats

import (
	"math"
	"slices"
)

// Spread summarises N repeated measurements (timings, for example: the speed study keeps one per configuration):
// the median, the quartiles Q1 and Q3 (the interquartile range) and the extremes.
type Spread struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Q1     float64 `json:"q1"`
	Median float64 `json:"median"`
	Q3     float64 `json:"q3"`
	Max    float64 `json:"max"`
}

// NewSpread returns the spread of x, with quantiles interpolated linearly between order statistics (Quantile); the
// zero Spread for an empty x.
func NewSpread(x []float64) Spread {
	if len(x) == 0 {
		return Spread{}
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return Spread{N: len(s), Min: s[0], Q1: quantileSorted(s, 0.25), Median: quantileSorted(s, 0.5),
		Q3: quantileSorted(s, 0.75), Max: s[len(s)-1]}
}

// Quantile returns the q-quantile of x (q in [0, 1]) by linear interpolation between order statistics: with the
// sorted values x₍₀₎ ≤ … ≤ x₍ₙ₋₁₎ and h = (n−1)·q, x₍⌊h⌋₎ + (h − ⌊h⌋)·(x₍⌊h⌋₊₁₎ − x₍⌊h⌋₎) (Hyndman and Fan's type 7,
// numpy's default; q = ½ is the median). NaN for an empty x. x is not reordered.
func Quantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return quantileSorted(s, q)
}

func quantileSorted(s []float64, q float64) float64 {
	h := float64(len(s)-1) * q
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
