package prior

import (
	"fmt"
	"math/rand/v2"
)

// Tokens is one regression context of eq. (2.1): N tokens z_i = (x_i, y_i) drawn given θ.
type Tokens struct {
	N int       // number of tokens.
	D int       // dimension of x.
	X []float64 // [N, D] row-major: X[i*D+j] is coordinate j of x_i.
	Y []float64 // [N]: y_i = θᵀx_i + s·ξ_i.
}

// Row returns x_i as a slice of X (no copy).
func (c *Tokens) Row(i int) []float64 { return c.X[i*c.D : (i+1)*c.D] }

// SampleTokens draws a context of eq. (2.1) for the given θ (length D): x_i ~ N(0, I_D) and y_i = θᵀx_i + s·ξ_i with
// ξ_i ~ N(0, 1). It reuses dst when it is non-nil (reallocating its slices if the shape changed) and returns it.
// Panics if n < 1 or s < 0.
func SampleTokens(rng *rand.Rand, theta []float64, n int, s float64, dst *Tokens) *Tokens {
	if n < 1 || s < 0 {
		panic(fmt.Sprintf("prior.SampleTokens: n=%d, s=%g; want n ≥ 1 and s ≥ 0", n, s))
	}
	d := len(theta)
	if dst == nil {
		dst = &Tokens{}
	}
	if dst.N != n || dst.D != d || len(dst.X) != n*d || len(dst.Y) != n {
		*dst = Tokens{N: n, D: d, X: make([]float64, n*d), Y: make([]float64, n)}
	}
	for i := 0; i < n; i++ {
		x := dst.Row(i)
		y := 0.0
		for j := range x {
			x[j] = rng.NormFloat64()
			y += theta[j] * x[j]
		}
		dst.Y[i] = y + s*rng.NormFloat64()
	}
	return dst
}
