package prior

import (
	"fmt"
	"math/rand/v2"
)

// Prior is what the Monte Carlo code needs from a prior over θ ∈ R^D: its dimension, an exact sampler and its
// second moments. Gaussian and Tree implement it.
type Prior interface {
	// Dim returns D.
	Dim() int
	// Sample draws θ into dst (length D; nil is allocated) and returns it.
	Sample(rng *rand.Rand, dst []float64) []float64
	// MeanSquaredNorm returns E‖θ‖².
	MeanSquaredNorm() float64
	// Variance returns Var θ_i for the 0-based coordinate i (both priors have diagonal covariance and zero mean).
	Variance(i int) float64
}

// Gaussian is the isotropic Gaussian prior θ ~ N(0, I_D) of spec §2.1, eq. (2.2).
type Gaussian struct {
	D int `json:"d"` // D ≥ 1. Spec: 8 for the Gaussian experiments.
}

// NewGaussian returns the Gaussian prior in dimension d.
func NewGaussian(d int) Gaussian { return Gaussian{D: d} }

// Validate reports whether the dimension is positive.
func (g Gaussian) Validate() error {
	if g.D < 1 {
		return fmt.Errorf("prior.Gaussian: dim=%d, want ≥ 1", g.D)
	}
	return nil
}

// Dim returns D.
func (g Gaussian) Dim() int { return g.D }

// MeanSquaredNorm returns E‖θ‖² = D.
func (g Gaussian) MeanSquaredNorm() float64 { return float64(g.D) }

// Variance returns 1, the variance of every coordinate.
func (g Gaussian) Variance(int) float64 { return 1 }

// Sample draws θ ~ N(0, I_D) into dst (length D; nil is allocated) and returns it.
func (g Gaussian) Sample(rng *rand.Rand, dst []float64) []float64 {
	dst = prepare(dst, g.D, "prior.Gaussian.Sample")
	for i := range dst {
		dst[i] = rng.NormFloat64()
	}
	return dst
}
