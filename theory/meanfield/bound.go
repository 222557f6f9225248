package meanfield

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/protolab/protolab/theory/prior"
)

// FullDataMC configures the unconstrained estimates of spec §4.6, which see all N tokens (X, y) of eq. (2.1)
// instead of a few channels. Every model's MSE must lie above the Bayes bound.
type FullDataMC struct {
	// Tokens is N ≥ 1.
	Tokens int `json:"tokens"`
	// LabelNoise is s > 0. Spec: 0.1.
	LabelNoise float64 `json:"label_noise"`
	// Contexts is the number of Monte Carlo contexts (≥ 2). The Bayes bound's error is heavy-tailed: use ≥ 50,000.
	Contexts int `json:"contexts"`
	// Seed fixes every random draw.
	Seed uint64 `json:"seed"`
}

// validate checks the configuration.
func (c FullDataMC) validate(who string) error {
	if c.Tokens < 1 || !(c.LabelNoise > 0) || c.Contexts < 2 {
		return fmt.Errorf("meanfield.%s: tokens=%d label_noise=%g contexts=%d, want ≥ 1, > 0, ≥ 2",
			who, c.Tokens, c.LabelNoise, c.Contexts)
	}
	return nil
}

// TreeBayesBound estimates the unconstrained Bayes MSE E‖θ − θ̂‖² of the tree prior from full data, eq. (4.10):
// w_σ ∝ exp(−‖y − Xθ_σ‖²/(2s²)) over all 2^K leaves and θ̂ = Σ_σ w_σθ_σ/Σ_σ w_σ. It is the floor of every model.
func TreeBayesBound(t prior.Tree, c FullDataMC) (Estimate, error) {
	if err := t.Validate(); err != nil {
		return Estimate{}, fmt.Errorf("meanfield.TreeBayesBound: %w", err)
	}
	if err := c.validate("TreeBayesBound"); err != nil {
		return Estimate{}, err
	}
	n, d, kk := c.Tokens, t.Dim(), t.Depth
	est := monteCarlo(c.Contexts, c.Seed, 1, func() sampler {
		cols := make([]float64, d*n)       // [D, N]: column j is coordinate j of every x_i.
		resid := make([]float64, (kk+1)*n) // [K+1, N]: y − Xθ over the path prefix, per level.
		logw := make([]float64, t.NumLeaves())
		amp := make([]float64, kk+1)
		for k := 1; k <= kk; k++ {
			amp[k] = t.Amplitude(k)
		}
		post := NewPosterior(t, 1)
		return func(rng *rand.Rand, out []float64) {
			leaf := t.SampleLeaf(rng)
			// Every coordinate of x enters the likelihood of some leaf, so all D columns are drawn.
			for i := range cols {
				cols[i] = rng.NormFloat64()
			}
			y := resid[:n]
			for i := range y {
				y[i] = c.LabelNoise * rng.NormFloat64()
			}
			for k := 1; k <= kk; k++ {
				v := float64(2*t.Bit(leaf, k)-1) * amp[k]
				col := cols[(t.PathNode(leaf, k)-1)*n:][:n]
				for i := range y {
					y[i] += v * col[i]
				}
			}
			// Depth-first over the tree: level k's residual subtracts the level-k term from level k−1's, so the 2^K
			// residuals ‖y − Xθ_σ‖² cost O(2^{K+1}·N) instead of O(2^K·K·N).
			var walk func(node, k int)
			walk = func(node, k int) {
				prev := resid[(k-1)*n:][:n]
				if k > kk {
					logw[node-t.NumLeaves()] = -dot(prev, prev) / (2 * c.LabelNoise * c.LabelNoise)
					return
				}
				cur, col := resid[k*n:][:n], cols[(node-1)*n:][:n]
				for b, sign := range [2]float64{-1, 1} {
					for i := range cur {
						cur[i] = prev[i] - sign*amp[k]*col[i]
					}
					walk(2*node+b, k+1)
				}
			}
			walk(1, 1)
			post.setLogWeights(logw)
			out[0] = post.SquaredError(leaf)
		}
	})
	return est[0], nil
}

// FullDataLMMSE estimates the MSE of the best linear estimator of θ from full data, eq. (4.11):
// E_X tr (Λ^{−1} + XᵀX/s²)^{−1} with Λ = Cov θ (diagonal for both priors). For the Gaussian prior this is the MMSE
// itself (ridge regression, E tr[s²(XᵀX + s²I)^{−1}]); for the tree prior it is the linear baseline above the Bayes
// bound. Each context costs O(N·D² + D³).
func FullDataLMMSE(p prior.Prior, c FullDataMC) (Estimate, error) {
	if err := c.validate("FullDataLMMSE"); err != nil {
		return Estimate{}, err
	}
	d, n := p.Dim(), c.Tokens
	est := monteCarlo(c.Contexts, c.Seed, 1, func() sampler {
		x := mat.NewDense(n, d, nil)
		a := mat.NewSymDense(d, nil)
		return func(rng *rand.Rand, out []float64) {
			for i := 0; i < n; i++ {
				for j := 0; j < d; j++ {
					x.Set(i, j, rng.NormFloat64())
				}
			}
			// A = Λ^{−1} + XᵀX/s² is the posterior precision of the Gaussian with the prior's covariance; the
			// LMMSE error given X is tr A^{−1} whatever the prior's higher moments.
			a.SymOuterK(1/(c.LabelNoise*c.LabelNoise), x.T())
			for j := 0; j < d; j++ {
				a.SetSym(j, j, a.At(j, j)+1/p.Variance(j))
			}
			out[0] = traceInverse(a, "FullDataLMMSE")
		}
	})
	return est[0], nil
}
