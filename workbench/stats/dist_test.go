package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSoftmax_ClosedFormAndLargeLogits: softmax(0, ln 3) = (¼, ¾), and the same after adding 1000 to both logits
// (exp(1000) overflows; the max subtraction keeps it finite).
func TestSoftmax_ClosedFormAndLargeLogits(t *testing.T) {
	require.InDeltaSlice(t, []float64{0.25, 0.75}, Softmax([]float64{0, math.Log(3)}), 1e-15)
	big := Softmax([]float64{1000, 1000 + math.Log(3)})
	require.InDeltaSlice(t, []float64{0.25, 0.75}, big, 1e-13)
	require.Equal(t, []float64{1, 0}, Softmax([]float64{-1e300, math.Inf(-1)}))
	s := Softmax([]float64{0.3, -2, 5, 5, 1})
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	require.InDelta(t, 1, sum, 1e-15, "rows sum to 1")
	require.Equal(t, s[2], s[3])
}

// TestJensenShannon_ClosedForms: disjoint supports give ln 2, equal distributions 0, and p = (½, ½), q = (1, 0),
// m = (¾, ¼) give ½·½·ln(4/3) + ½·ln(4/3) = ¾·ln(4/3).
func TestJensenShannon_ClosedForms(t *testing.T) {
	require.InDelta(t, math.Ln2, JensenShannon([]float64{1, 0}, []float64{0, 1}), 1e-15)
	require.Zero(t, JensenShannon([]float64{0.2, 0.3, 0.5}, []float64{0.2, 0.3, 0.5}))
	require.InDelta(t, 0.75*math.Log(4.0/3), JensenShannon([]float64{0.5, 0.5}, []float64{1, 0}), 1e-15)
	p, q := []float64{0.1, 0.6, 0.3}, []float64{0.5, 0.2, 0.3}
	require.InDelta(t, JensenShannon(p, q), JensenShannon(q, p), 1e-15)
	require.Panics(t, func() { JensenShannon(p, q[:2]) })
}

// TestGini_EqualAndOneHot: 0 for equal values, (n − 1)/n for one-hot, 2·|1 − 3|/(2·2·4) = ¼ for (1, 3).
func TestGini_EqualAndOneHot(t *testing.T) {
	require.Zero(t, Gini([]float64{0.25, 0.25, 0.25, 0.25}))
	require.InDelta(t, 3.0/4, Gini([]float64{0, 0, 1, 0}), 1e-15)
	require.InDelta(t, 4.0/5, Gini([]float64{0, 0, 0, 0, 7}), 1e-15)
	require.InDelta(t, 0.25, Gini([]float64{1, 3}), 1e-15)
	require.Zero(t, Gini(nil))
	require.Zero(t, Gini([]float64{0, 0}))
}

// TestBinomialTail_ExactSum: Pr[X ≥ k] against Σ_{j≥k} C(n, j) qʲ (1−q)ⁿ⁻ʲ with integer binomial coefficients, for
// every k of n = 12, and the edge cases.
func TestBinomialTail_ExactSum(t *testing.T) {
	for _, c := range []struct {
		n int
		q float64
	}{{12, 0.3}, {12, 0.5}, {5, 0.9}, {20, 0.05}} {
		for k := 0; k <= c.n+1; k++ {
			want, binom := 0.0, 1.0 // binom = C(n, j), updated as C(n, j+1) = C(n, j)·(n−j)/(j+1)
			for j := 0; j <= c.n; j++ {
				if j >= k {
					want += binom * math.Pow(c.q, float64(j)) * math.Pow(1-c.q, float64(c.n-j))
				}
				binom = binom * float64(c.n-j) / float64(j+1)
			}
			require.InDelta(t, want, BinomialTail(k, c.n, c.q), 1e-13, "n=%d q=%g k=%d", c.n, c.q, k)
		}
	}
	require.InDelta(t, 11.0/16, BinomialTail(2, 4, 0.5), 1e-15) // (6 + 4 + 1)/16
	require.Equal(t, 1.0, BinomialTail(-1, 4, 0.5))
	require.Zero(t, BinomialTail(5, 4, 0.5))
	require.Zero(t, BinomialTail(1, 4, 0))
	require.Equal(t, 1.0, BinomialTail(4, 4, 1))
}
