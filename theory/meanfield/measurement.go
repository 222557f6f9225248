package meanfield

import (
	"fmt"

	"github.com/protolab/protolab/theory/prior"
)

// Statistic returns the linear-attention statistic φ = (1/N) Σ_i (uᵀx_i)·y_i of one key direction u over a context,
// eq. (3.1) with ψ(z; u) = (uᵀx)·y. Panics if len(u) ≠ D.
func Statistic(tok *prior.Tokens, u []float64) float64 {
	if len(u) != tok.D {
		panic(fmt.Sprintf("meanfield.Statistic: len(u)=%d, want D=%d", len(u), tok.D))
	}
	// Uniform attention weights 1/N: the mean-field statistic is an average over the context, key times value.
	sum := 0.0
	for i := 0; i < tok.N; i++ {
		sum += dot(u, tok.Row(i)) * tok.Y[i]
	}
	return sum / float64(tok.N)
}

// StatisticMean returns E[φ | θ] = uᵀθ, eq. (3.3). Panics on a length mismatch.
func StatisticMean(u, theta []float64) float64 { return dot(u, theta) }

// StatisticVar returns Var[φ | θ] = (‖u‖²(‖θ‖² + s²) + (uᵀθ)²)/N for N Gaussian tokens with label noise s, eq. (3.4).
func StatisticVar(u, theta []float64, s float64, n int) float64 {
	return StatisticCov(u, u, theta, s, n)
}

// StatisticCov returns Cov[φ_u, φ_u′ | θ] = ((uᵀu′)(‖θ‖² + s²) + (uᵀθ)(u′ᵀθ))/N for two keys read from the same
// context, eq. (3.5). It follows from Isserlis' theorem for x ~ N(0, I).
func StatisticCov(u, u2, theta []float64, s float64, n int) float64 {
	// Per token, E[(uᵀx)(u′ᵀx)y²] = (uᵀu′)(‖θ‖² + s²) + 2(uᵀθ)(u′ᵀθ); subtracting the product of the means leaves
	// one (uᵀθ)(u′ᵀθ), and averaging N i.i.d. tokens divides by N.
	return (dot(u, u2)*(dot(theta, theta)+s*s) + dot(u, theta)*dot(u2, theta)) / float64(n)
}

// PriorTau2 returns the prior-averaged noise variance of a unit-norm measurement whose signal has prior second
// moment signal2 = E(uᵀθ)², eq. (3.6): τ² = (E‖θ‖² + s² + E(uᵀθ)²)/N.
func PriorTau2(p prior.Prior, signal2, s float64, n int) float64 {
	return (p.MeanSquaredNorm() + s*s + signal2) / float64(n)
}

// GaussianTau2 returns τ² = (D + 1 + s²)/N, eq. (3.6) for the Gaussian prior, where E(uᵀθ)² = 1 for every unit u.
func GaussianTau2(d int, s float64, n int) float64 {
	return PriorTau2(prior.NewGaussian(d), 1, s, n)
}

// NodeTau2 returns τ_n² = (E‖θ‖² + s² + λ_n)/N, eq. (3.6) for the tree prior and the fixed key e_n (λ_n includes
// the normalisation c²). With a linear readout it makes MSE_C exact on real tokens, eq. (4.8).
func NodeTau2(t prior.Tree, node int, s float64, n int) float64 {
	return PriorTau2(t, t.NodeVariance(node), s, n)
}

// TokenTau2 returns (E‖θ‖² + s²)/N: eq. (3.6) without the E(uᵀθ)² term. It is the constant τ² that the spec's §4.7
// tree tables and the hand-wired Model A (§8 item 7) use.
func TokenTau2(p prior.Prior, s float64, n int) float64 {
	return PriorTau2(p, 0, s, n)
}

// dot returns aᵀb; panics on a length mismatch.
func dot(a, b []float64) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("meanfield: dot of lengths %d and %d", len(a), len(b)))
	}
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
