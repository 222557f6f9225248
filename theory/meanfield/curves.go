package meanfield

import (
	"fmt"
	"math"

	"github.com/protolab/protolab/theory/prior"
)

// TreeCurveConfig configures TreeCurves, the tree-prior theory curves of spec §6 item 2. Start from
// DefaultTreeCurveConfig.
type TreeCurveConfig struct {
	// Prior is the tree prior. Spec: K = 8 (6 for fast runs), α = 0.6.
	Prior prior.Tree `json:"prior"`
	// Tau is τ of the measurement model; 0 means √TokenTau2(Prior, LabelNoise, Tokens), the §4.7 convention
	// (≈ 0.11 at K = 6 or 8, N = 128, s = 0.1). The §4.7 K = 8 table uses τ = 0.05.
	Tau float64 `json:"tau"`
	// Tokens is N ≥ 1: it sets τ when Tau is 0 and the per-node noise of LMMSETokens. Spec: 128.
	Tokens int `json:"tokens"`
	// LabelNoise is s ≥ 0. Spec: 0.1.
	LabelNoise float64 `json:"label_noise"`
	// MaxMeasurements is the largest M; 0 means K. The adaptive curves stop at M = K.
	MaxMeasurements int `json:"max_measurements"`
	// Contexts is the number of Monte Carlo contexts of the adaptive and non-adaptive estimates; 0 skips them.
	Contexts int `json:"contexts"`
	// BoundContexts is the number of contexts of the full-data Bayes bound at N = Tokens; 0 skips it. Each costs
	// O(2^K·N).
	BoundContexts int `json:"bound_contexts"`
	// Seed fixes every random draw of the Monte Carlo curves and the bound.
	Seed uint64 `json:"seed"`
}

// DefaultTreeCurveConfig returns the spec's defaults: K = 8, α = 0.6, N = 128, s = 0.1, τ derived from the tokens,
// M = 1…K, 2000 contexts, no bound.
func DefaultTreeCurveConfig() TreeCurveConfig {
	return TreeCurveConfig{Prior: prior.DefaultTree(), Tokens: 128, LabelNoise: 0.1, Contexts: 2000, Seed: 1}
}

// TreeCurves holds MSE-vs-M curves on the tree prior; every slice is indexed by M − 1 for M = 1…len(M).
type TreeCurves struct {
	// Config is the configuration, with Tau and MaxMeasurements resolved.
	Config TreeCurveConfig `json:"config"`
	// M is 1…MaxMeasurements.
	M []int `json:"m"`
	// AdaptiveNoiseless is MSE_A(M), eq. (4.5); 0 beyond K.
	AdaptiveNoiseless []float64 `json:"adaptive_noiseless"`
	// NonAdaptiveNoiseless is MSE_NA(M), eq. (4.6).
	NonAdaptiveNoiseless []float64 `json:"non_adaptive_noiseless"`
	// PowerLaw is eq. (4.7).
	PowerLaw []float64 `json:"power_law"`
	// LMMSE is MSE_C(M) at the constant τ², eq. (4.8).
	LMMSE []float64 `json:"lmmse"`
	// LMMSETokens is MSE_C(M) with the per-node τ_n² of real tokens.
	LMMSETokens []float64 `json:"lmmse_tokens"`
	// Adaptive is AdaptiveMC at τ; min(MaxMeasurements, K) entries.
	Adaptive []Estimate `json:"adaptive,omitempty"`
	// NonAdaptive is NonAdaptiveMC at τ.
	NonAdaptive []Estimate `json:"non_adaptive,omitempty"`
	// Bound is TreeBayesBound at N = Tokens.
	Bound *Estimate `json:"bound,omitempty"`
}

// ComputeTreeCurves evaluates every tree-prior curve of c. Returns an error naming the bad field.
func ComputeTreeCurves(c TreeCurveConfig) (*TreeCurves, error) {
	if err := c.Prior.Validate(); err != nil {
		return nil, fmt.Errorf("meanfield.ComputeTreeCurves: %w", err)
	}
	if c.Tokens < 1 || c.LabelNoise < 0 || c.Tau < 0 || c.MaxMeasurements < 0 || c.MaxMeasurements > c.Prior.Dim() {
		return nil, fmt.Errorf("meanfield.ComputeTreeCurves: tokens=%d label_noise=%g tau=%g max_measurements=%d out of range",
			c.Tokens, c.LabelNoise, c.Tau, c.MaxMeasurements)
	}
	// Resolve the derived fields first, so that the returned Config states what was computed.
	if c.Tau == 0 {
		c.Tau = math.Sqrt(TokenTau2(c.Prior, c.LabelNoise, c.Tokens))
	}
	if c.MaxMeasurements == 0 {
		c.MaxMeasurements = c.Prior.Depth
	}
	r := &TreeCurves{Config: c}
	for m := 1; m <= c.MaxMeasurements; m++ {
		r.M = append(r.M, m)
		r.AdaptiveNoiseless = append(r.AdaptiveNoiseless, AdaptiveNoiseless(c.Prior, m))
		r.NonAdaptiveNoiseless = append(r.NonAdaptiveNoiseless, NonAdaptiveNoiseless(c.Prior, m))
		r.PowerLaw = append(r.PowerLaw, PowerLaw(c.Prior, m))
		r.LMMSE = append(r.LMMSE, LMMSE(c.Prior, m, c.Tau*c.Tau))
		r.LMMSETokens = append(r.LMMSETokens, LMMSETokens(c.Prior, m, c.LabelNoise, c.Tokens))
	}
	if c.Contexts > 0 {
		// Both strategies share the seed: their curves then use the same leaves and are compared pairwise.
		mc := TreeMC{Prior: c.Prior, Tau: c.Tau, Measurements: min(c.MaxMeasurements, c.Prior.Depth),
			Contexts: c.Contexts, Seed: c.Seed}
		var err error
		if r.Adaptive, err = AdaptiveMC(mc); err != nil {
			return nil, err
		}
		mc.Measurements = c.MaxMeasurements
		if r.NonAdaptive, err = NonAdaptiveMC(mc); err != nil {
			return nil, err
		}
	}
	if c.BoundContexts > 0 {
		b, err := TreeBayesBound(c.Prior, FullDataMC{Tokens: c.Tokens, LabelNoise: c.LabelNoise,
			Contexts: c.BoundContexts, Seed: c.Seed})
		if err != nil {
			return nil, err
		}
		r.Bound = &b
	}
	return r, nil
}

// GaussianCurveConfig configures GaussianCurves, the Gaussian-prior theory curves of spec §6 item 1. Start from
// DefaultGaussianCurveConfig.
type GaussianCurveConfig struct {
	// Dim is D ≥ 3. Spec: 8.
	Dim int `json:"dim"`
	// Tokens is N ≥ 1. Spec: 128.
	Tokens int `json:"tokens"`
	// LabelNoise is s ≥ 0. Spec: 0.1.
	LabelNoise float64 `json:"label_noise"`
	// MaxMeasurements is the largest M; 0 means 2D (the spec plots M = 1…16 at D = 8).
	MaxMeasurements int `json:"max_measurements"`
	// BoundContexts is the number of contexts of the full-data MMSE (ridge) floor; 0 skips it.
	BoundContexts int `json:"bound_contexts"`
	// Seed fixes every random draw of the Monte Carlo curves and the bound.
	Seed uint64 `json:"seed"`
}

// DefaultGaussianCurveConfig returns the spec's defaults: D = 8, N = 128, s = 0.1, M = 1…16, no bound.
func DefaultGaussianCurveConfig() GaussianCurveConfig {
	return GaussianCurveConfig{Dim: 8, Tokens: 128, LabelNoise: 0.1, Seed: 1}
}

// GaussianCurves holds MSE-vs-M curves on the Gaussian prior; slices are indexed by M − 1.
type GaussianCurves struct {
	// Config is the configuration, with MaxMeasurements resolved.
	Config GaussianCurveConfig `json:"config"`
	// Tau2 is GaussianTau2(D, s, N) = (D + 1 + s²)/N.
	Tau2 float64 `json:"tau2"`
	// M is 1…MaxMeasurements.
	M []int `json:"m"`
	// Optimal is GaussianOptimalMSE at Tau2, eq. (4.3): the theory curve (its L ≥ D branch needs fresh noise per
	// measurement, which one context does not give: an idealised reference).
	Optimal []float64 `json:"optimal"`
	// LinearKey is GaussianLinearKeyMSE at Tau2, eq. (4.4): Model C's exact curve on tokens, flat beyond D.
	LinearKey []float64 `json:"linear_key"`
	// NormalizedKey is GaussianOptimalMSE at NormalizedKeyTau2 (the MLP key D·uᵀx/‖x‖²): a level that trained A and B
	// may reach below LinearKey; beyond D it is idealised like Optimal.
	NormalizedKey []float64 `json:"normalized_key"`
	// Bound is FullDataLMMSE, the Bayes floor of §4.6 (ridge regression), when BoundContexts > 0.
	Bound *Estimate `json:"bound,omitempty"`
}

// ComputeGaussianCurves evaluates every Gaussian-prior curve of c. Returns an error naming the bad field.
func ComputeGaussianCurves(c GaussianCurveConfig) (*GaussianCurves, error) {
	if c.Dim < 3 || c.Tokens < 1 || c.LabelNoise < 0 || c.MaxMeasurements < 0 || c.BoundContexts < 0 {
		return nil, fmt.Errorf("meanfield.ComputeGaussianCurves: dim=%d tokens=%d label_noise=%g max_measurements=%d bound_contexts=%d out of range",
			c.Dim, c.Tokens, c.LabelNoise, c.MaxMeasurements, c.BoundContexts)
	}
	if c.MaxMeasurements == 0 {
		c.MaxMeasurements = 2 * c.Dim
	}
	r := &GaussianCurves{Config: c, Tau2: GaussianTau2(c.Dim, c.LabelNoise, c.Tokens)}
	nk := NormalizedKeyTau2(c.Dim, c.LabelNoise, c.Tokens)
	for m := 1; m <= c.MaxMeasurements; m++ {
		r.M = append(r.M, m)
		r.Optimal = append(r.Optimal, GaussianOptimalMSE(c.Dim, m, r.Tau2))
		r.LinearKey = append(r.LinearKey, GaussianLinearKeyMSE(c.Dim, m, r.Tau2))
		r.NormalizedKey = append(r.NormalizedKey, GaussianOptimalMSE(c.Dim, m, nk))
	}
	if c.BoundContexts > 0 {
		if c.LabelNoise == 0 {
			return nil, fmt.Errorf("meanfield.ComputeGaussianCurves: the bound needs label_noise > 0")
		}
		b, err := FullDataLMMSE(prior.NewGaussian(c.Dim), FullDataMC{Tokens: c.Tokens, LabelNoise: c.LabelNoise,
			Contexts: max(c.BoundContexts, 2), Seed: c.Seed})
		if err != nil {
			return nil, err
		}
		r.Bound = &b
	}
	return r, nil
}
