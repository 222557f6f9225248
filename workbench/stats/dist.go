package stats

import (
	"math"

	"github.com/pkg/errors"
)

// Softmax returns softmax(logits), computed with the maximum subtracted so that large logits do not overflow
// (doc.go, equation 13).
func Softmax(logits []float64) []float64 {
	m := math.Inf(-1)
	for _, x := range logits {
		m = math.Max(m, x)
	}
	out := make([]float64, len(logits))
	sum := 0.0
	for i, x := range logits {
		out[i] = math.Exp(x - m)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// JensenShannon returns the Jensen–Shannon divergence of two distributions over the same support, in nats
// (equation 14): ½ KL(p‖m) + ½ KL(q‖m) with m = ½(p + q), terms with a zero probability contributing 0. It lies in
// [0, ln 2]. Panics if the lengths differ.
func JensenShannon(p, q []float64) float64 {
	if len(p) != len(q) {
		panic(errors.Errorf("stats.JensenShannon: lengths %d and %d", len(p), len(q)))
	}
	js := 0.0
	for i := range p {
		m := 0.5 * (p[i] + q[i])
		if p[i] > 0 {
			js += 0.5 * p[i] * math.Log(p[i]/m)
		}
		if q[i] > 0 {
			js += 0.5 * q[i] * math.Log(q[i]/m)
		}
	}
	return math.Max(0, js)
}

// Gini returns the Gini coefficient Σ_i Σ_j |x_i − x_j| / (2 n Σ x) of non-negative values (equation 15): 0 when all
// are equal, (n−1)/n when one holds everything; 0 for an empty or all-zero input.
func Gini(x []float64) float64 {
	sum := 0.0
	for _, v := range x {
		sum += v
	}
	if len(x) == 0 || !(sum > 0) {
		return 0
	}
	d := 0.0
	for _, a := range x {
		for _, b := range x {
			d += math.Abs(a - b)
		}
	}
	return d / (2 * float64(len(x)) * sum)
}

// BinomialTail returns Pr[X ≥ k] for X ~ Binomial(n, q), summed term by term through log-gamma (equation 16): 1 for
// k ≤ 0 or q ≥ 1, 0 for k > n or q ≤ 0.
func BinomialTail(k, n int, q float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	case q <= 0:
		return 0
	case q >= 1:
		return 1
	}
	lgN, _ := math.Lgamma(float64(n + 1))
	sum := 0.0
	for j := k; j <= n; j++ {
		a, _ := math.Lgamma(float64(j + 1))
		b, _ := math.Lgamma(float64(n - j + 1))
		sum += math.Exp(lgN - a - b + float64(j)*math.Log(q) + float64(n-j)*math.Log1p(-q))
	}
	return math.Min(1, sum)
}
