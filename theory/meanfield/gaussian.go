package meanfield

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/protolab/protolab/theory/prior"
)

// GaussianOptimalMSE returns the optimal MSE of L unit-norm measurements of θ ~ N(0, I_D) with independent noise
// of variance τ², eq. (4.3): D − L/(1 + τ²) for L ≤ D (orthonormal keys) and D/(1 + L/(Dτ²)) for L ≥ D (a unit-norm
// tight frame). The two branches agree at L = D. Adaptive designs cannot do better (eq. 4.2). Panics if D < 1,
// L < 0 or τ² ≤ 0.
func GaussianOptimalMSE(d, layers int, tau2 float64) float64 {
	checkGaussian("GaussianOptimalMSE", d, layers, tau2)
	if layers <= d {
		return float64(d) - float64(layers)/(1+tau2)
	}
	return float64(d) / (1 + float64(layers)/(float64(d)*tau2))
}

// GaussianLinearKeyMSE returns the MSE of L linear keys read from one context with the best linear readout, eq.
// (4.4): GaussianOptimalMSE for L ≤ D, then flat at Dτ²/(1 + τ²) for L ≥ D, because every linear-key statistic is a
// linear function of the same D-vector (1/N)Σ_i x_i y_i. With τ² = GaussianTau2 it is exact for Model C on real
// tokens. Panics like GaussianOptimalMSE.
func GaussianLinearKeyMSE(d, layers int, tau2 float64) float64 {
	return GaussianOptimalMSE(d, min(layers, d), tau2)
}

// NormalizedKeyTau2 returns the prior-averaged noise variance (D − 1 + s²D/(D − 2))/N of the unbiased MLP key
// f(x) = D·uᵀx/‖x‖² on N Gaussian tokens (spec §4.1), against (D + 1 + s²)/N for the linear key uᵀx. With L ≤ D
// orthonormal u's and a linear readout the MSE is GaussianOptimalMSE(D, L, NormalizedKeyTau2). Panics unless D > 2.
func NormalizedKeyTau2(d int, s float64, n int) float64 {
	if d <= 2 {
		panic(fmt.Sprintf("meanfield.NormalizedKeyTau2: D=%d, want > 2 (E[1/‖x‖²] is infinite)", d))
	}
	fd := float64(d)
	return (fd - 1 + s*s*fd/(fd-2)) / float64(n)
}

// OptimalGaussianDesign returns L unit-norm keys u_1…u_L ∈ R^D ([L][D]) attaining GaussianOptimalMSE: the first L
// standard basis vectors for L ≤ D, and a harmonic tight frame (Σ_ℓ u_ℓu_ℓᵀ = (L/D)·I) for L > D, whose rows are
// [1/√D (D odd)], √(2/D)·(cos, sin)(2π j ℓ/L) for j = 1…⌊D/2⌋. Panics if D < 1 or L < 0.
func OptimalGaussianDesign(d, layers int) [][]float64 {
	checkGaussian("OptimalGaussianDesign", d, layers, 1)
	// Any orthonormal set is optimal for L ≤ D (eq. 4.3 is then a sum of independent scalar problems); beyond D the
	// precision must be a multiple of I, which a tight frame gives for every L, divisible by D or not.
	u := make([][]float64, layers)
	for l := range u {
		u[l] = make([]float64, d)
		if layers <= d {
			u[l][l] = 1
			continue
		}
		// For L > D the frequencies 2j < L and j ± j′ ≢ 0 (mod L), so the rows are orthogonal with norm² L/D.
		i := 0
		if d%2 == 1 {
			u[l][0] = 1 / math.Sqrt(float64(d))
			i = 1
		}
		for j := 1; j <= d/2; j++ {
			angle := 2 * math.Pi * float64(j*l) / float64(layers)
			u[l][i] = math.Sqrt(2/float64(d)) * math.Cos(angle)
			u[l][i+1] = math.Sqrt(2/float64(d)) * math.Sin(angle)
			i += 2
		}
	}
	return u
}

// DesignMSE returns tr (I + Σ_ℓ u_ℓu_ℓᵀ/τ²)^{−1}, the posterior MSE of any design u ([L][D]) under θ ~ N(0, I_D)
// with independent N(0, τ²) noise, eq. (4.2). It does not depend on the observed values. Panics on ragged rows,
// D < 1 or τ² ≤ 0.
func DesignMSE(u [][]float64, d int, tau2 float64) float64 {
	checkGaussian("DesignMSE", d, len(u), tau2)
	// The posterior precision is the prior's I plus one rank-one term per key.
	prec := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		prec.SetSym(i, i, 1)
	}
	for _, row := range u {
		if len(row) != d {
			panic(fmt.Sprintf("meanfield.DesignMSE: key of length %d, want D=%d", len(row), d))
		}
		prec.SymRankOne(prec, 1/tau2, mat.NewVecDense(d, row))
	}
	return traceInverse(prec, "DesignMSE")
}

// GaussianMC configures a Monte Carlo estimate of the Bayes (posterior-mean) readout's MSE on the Gaussian prior
// in the measurement model, spec §4.1 and §8 item 5.
type GaussianMC struct {
	// Dim is D ≥ 1. Spec: 8.
	Dim int `json:"dim"`
	// Tau is τ > 0, the measurement-noise std.
	Tau float64 `json:"tau"`
	// Measurements is L ≥ 1.
	Measurements int `json:"measurements"`
	// Adaptive chooses each key from the values measured so far (data-dependent orthonormal bases, one per cycle of
	// D layers); otherwise the keys are OptimalGaussianDesign(D, L). The adaptive design is optimal when L ≤ D or D
	// divides L, where both must give GaussianOptimalMSE: adaptivity cannot help (eq. 4.2).
	Adaptive bool `json:"adaptive"`
	// Contexts is ≥ 2.
	Contexts int `json:"contexts"`
	// Seed fixes every random draw.
	Seed uint64 `json:"seed"`
}

// GaussianBayesMC estimates E‖θ − E[θ | m_1…m_L]‖² for the design of c, updating the exact Gaussian posterior one
// measurement at a time (a Kalman step).
func GaussianBayesMC(c GaussianMC) (Estimate, error) {
	if c.Dim < 1 || !(c.Tau > 0) || c.Measurements < 1 || c.Contexts < 2 {
		return Estimate{}, fmt.Errorf("meanfield.GaussianBayesMC: dim=%d tau=%g measurements=%d contexts=%d, want ≥ 1, > 0, ≥ 1, ≥ 2",
			c.Dim, c.Tau, c.Measurements, c.Contexts)
	}
	design := OptimalGaussianDesign(c.Dim, c.Measurements)
	g := prior.NewGaussian(c.Dim)
	est := monteCarlo(c.Contexts, c.Seed, 1, func() sampler {
		k := newKalman(c.Dim)
		theta := make([]float64, c.Dim)
		var keys [][]float64
		return func(rng *rand.Rand, out []float64) {
			g.Sample(rng, theta)
			k.reset()
			keys = keys[:0]
			past := 0.0
			for l := 0; l < c.Measurements; l++ {
				u := design[l]
				// The adaptive key must be orthogonal to the keys of its own cycle only, so that every complete
				// cycle adds I to the precision.
				if c.Adaptive {
					u = adaptiveKey(keys[l-l%c.Dim:], c.Dim, past)
					keys = append(keys, u)
				}
				m := dot(u, theta) + c.Tau*rng.NormFloat64()
				k.observe(u, m, c.Tau*c.Tau)
				past += m
			}
			out[0] = sqDist(theta, k.mean)
		}
	})
	return est[0], nil
}

// adaptiveKey returns a unit vector orthogonal to the keys of the current cycle (prev, orthonormal), built by
// Gram–Schmidt from a direction that depends on the values measured so far (through past).
func adaptiveKey(prev [][]float64, d int, past float64) []float64 {
	u := make([]float64, d)
	for j := range u {
		u[j] = math.Cos(float64(j+1) * (1 + past))
	}
	for try := 0; ; try++ {
		for _, p := range prev {
			a := dot(u, p)
			for j := range u {
				u[j] -= a * p[j]
			}
		}
		if norm := math.Sqrt(dot(u, u)); norm > 1e-6 {
			for j := range u {
				u[j] /= norm
			}
			return u
		}
		// Degenerate direction: restart from a standard basis vector (one of them is never in a proper subspace).
		clear(u)
		u[try%d] = 1
	}
}

// kalman is the exact posterior N(mean, cov) of θ ~ N(0, I_D) after scalar measurements uᵀθ + N(0, τ²).
type kalman struct {
	mean []float64 // [D]
	cov  []float64 // [D, D]
	pu   []float64 // [D] scratch: cov·u
}

// newKalman allocates the state for dimension d.
func newKalman(d int) *kalman {
	k := &kalman{mean: make([]float64, d), cov: make([]float64, d*d), pu: make([]float64, d)}
	k.reset()
	return k
}

// reset returns to the prior N(0, I).
func (k *kalman) reset() {
	d := len(k.mean)
	clear(k.mean)
	clear(k.cov)
	for i := 0; i < d; i++ {
		k.cov[i*d+i] = 1
	}
}

// observe conditions on m = uᵀθ + N(0, τ²): cov ← cov − (cov u)(cov u)ᵀ/(uᵀcov u + τ²), and likewise the mean.
func (k *kalman) observe(u []float64, m, tau2 float64) {
	d := len(k.mean)
	for i := 0; i < d; i++ {
		k.pu[i] = dot(k.cov[i*d:(i+1)*d], u)
	}
	// s is the predictive variance of m; the innovation is its standardised surprise.
	s := dot(u, k.pu) + tau2
	innov := (m - dot(u, k.mean)) / s
	for i := 0; i < d; i++ {
		k.mean[i] += k.pu[i] * innov
		for j := 0; j < d; j++ {
			k.cov[i*d+j] -= k.pu[i] * k.pu[j] / s
		}
	}
}

// GaussianTokenMC configures a Monte Carlo estimate on real tokens for the Gaussian prior (spec §4.1): keys read
// the statistics of N tokens of eq. (2.1) and a linear readout estimates θ.
type GaussianTokenMC struct {
	// Dim is D ≥ 1 (> 2 with NormalizedKeys).
	Dim int `json:"dim"`
	// Tokens is N ≥ 1. Spec: 128.
	Tokens int `json:"tokens"`
	// LabelNoise is s ≥ 0. Spec: 0.1.
	LabelNoise float64 `json:"label_noise"`
	// Measurements is estimates for L = 1…Measurements.
	Measurements int `json:"measurements"`
	// NormalizedKeys uses the MLP key f(x) = D·x_l/‖x‖² instead of the linear key x_l (then Measurements ≤ D).
	NormalizedKeys bool `json:"normalized_keys"`
	// Contexts is ≥ 2.
	Contexts int `json:"contexts"`
	// Seed fixes every random draw.
	Seed uint64 `json:"seed"`
}

// GaussianLinearReadoutMC estimates the MSE of Model C's ideal form on real tokens: the keys of OptimalGaussianDesign(D, L),
// each statistic read from the same context, and the best linear readout. For linear keys that readout is
// θ̂ = P_L v/(1 + τ²) with v = (1/N)Σ_i x_i y_i, P_L the projector on the keys' span and τ² = GaussianTau2, so the
// expectation is GaussianLinearKeyMSE exactly (it saturates at L = D). With NormalizedKeys it is
// GaussianOptimalMSE(D, L, NormalizedKeyTau2). Entry L − 1 is for L = 1…Measurements.
func GaussianLinearReadoutMC(c GaussianTokenMC) ([]Estimate, error) {
	if c.Dim < 1 || c.Tokens < 1 || c.LabelNoise < 0 || c.Measurements < 1 || c.Contexts < 2 ||
		(c.NormalizedKeys && (c.Dim <= 2 || c.Measurements > c.Dim)) {
		return nil, fmt.Errorf("meanfield.GaussianLinearReadoutMC: dim=%d tokens=%d label_noise=%g measurements=%d normalized=%v contexts=%d out of range",
			c.Dim, c.Tokens, c.LabelNoise, c.Measurements, c.NormalizedKeys, c.Contexts)
	}
	tau2 := GaussianTau2(c.Dim, c.LabelNoise, c.Tokens)
	if c.NormalizedKeys {
		tau2 = NormalizedKeyTau2(c.Dim, c.LabelNoise, c.Tokens)
	}
	g := prior.NewGaussian(c.Dim)
	return monteCarlo(c.Contexts, c.Seed, c.Measurements, func() sampler {
		theta, v := make([]float64, c.Dim), make([]float64, c.Dim)
		var tok *prior.Tokens
		return func(rng *rand.Rand, out []float64) {
			g.Sample(rng, theta)
			tok = prior.SampleTokens(rng, theta, c.Tokens, c.LabelNoise, tok)
			// v = (1/N)Σ_i x_i y_i (times N here) holds everything a linear key can read from the context.
			clear(v)
			for i := 0; i < tok.N; i++ {
				x := tok.Row(i)
				w := tok.Y[i]
				if c.NormalizedKeys {
					w *= float64(c.Dim) / dot(x, x)
				}
				for j := range v {
					v[j] += x[j] * w
				}
			}
			// With L ≤ D keys e_1…e_L the projector keeps the first L coordinates; beyond D it is the identity.
			sq := dot(theta, theta)
			for l := range out {
				if l < c.Dim {
					e := theta[l] - v[l]/float64(c.Tokens)/(1+tau2)
					sq += e*e - theta[l]*theta[l]
				}
				out[l] = sq
			}
		}
	}), nil
}

// checkGaussian panics on arguments outside the domain of the Gaussian closed forms.
func checkGaussian(who string, d, layers int, tau2 float64) {
	if d < 1 || layers < 0 || !(tau2 > 0) {
		panic(fmt.Sprintf("meanfield.%s: D=%d, L=%d, τ²=%g; want D ≥ 1, L ≥ 0, τ² > 0", who, d, layers, tau2))
	}
}

// traceInverse returns tr A^{−1} of a symmetric positive-definite matrix; panics (naming who) if A is not.
func traceInverse(a *mat.SymDense, who string) float64 {
	var chol mat.Cholesky
	if !chol.Factorize(a) {
		panic(fmt.Sprintf("meanfield.%s: matrix is not positive definite", who))
	}
	var inv mat.SymDense
	if err := chol.InverseTo(&inv); err != nil {
		panic(fmt.Sprintf("meanfield.%s: %v", who, err))
	}
	tr := 0.0
	for i := 0; i < inv.SymmetricDim(); i++ {
		tr += inv.At(i, i)
	}
	return tr
}

// sqDist returns ‖a − b‖².
func sqDist(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		d := v - b[i]
		s += d * d
	}
	return s
}
