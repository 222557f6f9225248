package prism

import (
	"math"

	"github.com/pkg/errors"
)

// Values of Config.ActivationScale (docs/spec/prism.md §2.1).
const (
	// ScaleCos is a_{t,i} = ReLU(s_{t,i}) ∈ [0, 1]; the prototypes carry the scale.
	ScaleCos = "cos"
	// ScaleNorm is a_{t,i} = ReLU(s_{t,i})·‖z_t‖/(‖p_i‖ + ε): ẑ is a sum of unit directions scaled by ‖z_t‖.
	ScaleNorm = "norm"
)

// Values of Config.Residual, the two residual-gradient variants of docs/spec/prism.md §2.2.
const (
	// ResidualAutodiff is variant (a): r_t = z_t − ẑ_t with ordinary autodiff, so l_t = W z_t and the
	// cross-entropy sends no gradient to the bank.
	ResidualAutodiff = "autodiff"
	// ResidualStopGrad is variant (b): the logits use r_t = z_t − stopgrad(ẑ_t); forward values are identical, and
	// the cross-entropy reaches the bank through a and p, and z through the cosine as well as directly.
	ResidualStopGrad = "stopgrad"
)

// Values of Config.Dist, the distance of the clustering losses R1 and R2 (docs/spec/prism.md §3).
const (
	// DistCos is dist(u, v) = 1 − cos(u, v), matching the cosine activation.
	DistCos = "cos"
	// DistSqL2 is dist(u, v) = ‖u − v‖² (Li et al. 2018).
	DistSqL2 = "sqL2"
)

// Values of Config.ClusterGrad, the gradient routing of R1 and R2 (docs/spec/prism.md §3).
const (
	// ClusterGradSplit stops gradients VQ-VAE style: R1 moves only the bank, R2 moves only the backbone.
	ClusterGradSplit = "split"
	// ClusterGradBoth lets both terms move both the bank and the backbone (Li et al. 2018).
	ClusterGradBoth = "both"
)

// MaxTopK is the largest k Validate accepts: the top-k selection unrolls k rounds of ArgMax at graph-build time.
const MaxTopK = 64

// Eps is the ε of the cosine denominator ‖z‖·‖p‖ + ε, of the scale-free reconstruction loss ‖r‖²/(‖z‖² + ε) and
// of the norm activation scale ‖z‖/(‖p‖ + ε) (docs/spec/prism.md §2.1, §3; our choice).
const Eps = 1e-6

// Config configures the PRISM prototype head and its losses. Start from DefaultConfig; Validate checks it.
type Config struct {
	// NumPrototypes is K, the size of the prototype bank; > 0. Spec §12: 4096 (sweep 8D–16D); PRISM-1.6B: 16,384.
	NumPrototypes int `json:"num_prototypes"`
	// TopK is k, the number of prototypes selected per token; in [1, min(K, MaxTopK)]. Spec §12: 16 (ablate 8).
	TopK int `json:"top_k"`
	// ActivationScale is ScaleCos ("cos", the default) or ScaleNorm ("norm"; switch to it if reconstruction stalls).
	ActivationScale string `json:"activation_scale"`
	// Residual is ResidualAutodiff ("autodiff", the default, the literal reading) or ResidualStopGrad ("stopgrad").
	Residual string `json:"residual"`
	// RecWeight is λ_rec, the weight of L_REC; ≥ 0. Spec §3: 0.1 (sweep 0.01, 0.1, 1).
	RecWeight float64 `json:"rec_weight"`
	// R1Weight is λ_1, the weight of L_R1 (each prototype near some token); ≥ 0. Spec §3: 0.1.
	R1Weight float64 `json:"r1_weight"`
	// R2Weight is λ_2, the weight of L_R2 (each token near some prototype); ≥ 0. Spec §3: 0.1.
	R2Weight float64 `json:"r2_weight"`
	// RecNorm selects the scale-free L_REC = mean_t ‖r_t‖²/(‖z_t‖² + ε) (true, the default); false gives
	// mean_t ‖r_t‖² (Li et al.).
	RecNorm bool `json:"rec_norm"`
	// R1Nearest is m: L_R1 averages dist(p_j, z_t) over the m nearest tokens of each prototype; ≥ 1. Default 1
	// (the minimum).
	R1Nearest int `json:"r1_nearest"`
	// Dist is DistCos ("cos", the default) or DistSqL2 ("sqL2"), the distance of L_R1 and L_R2.
	Dist string `json:"dist"`
	// ClusterGrad is ClusterGradSplit ("split", the default) or ClusterGradBoth ("both").
	ClusterGrad string `json:"cluster_grad"`
	// InitStd is the standard deviation of the N(0, σ²) entries Head gives a new bank; > 0. Spec §2.3's option
	// draws N(0, 0.02²); its default schedule overwrites the bank with K sampled hidden states after a CE-only
	// warm-up, which the training code does.
	InitStd float64 `json:"init_std"`
	// CoverageThreshold is τ of the thresholded coverage fractions (spec §4); in [−1, 1]. Spec: 0.9.
	CoverageThreshold float64 `json:"coverage_threshold"`
}

// DefaultConfig returns the small-scale plan of docs/spec/prism.md §12: K = 4096, k = 16, cosine-ReLU activations,
// residual variant (a) "autodiff", CE + REC + R1 + R2 with λ_rec = λ_1 = λ_2 = 0.1 (§3), scale-free L_REC, m = 1,
// cosine distance, "split" gradient routing; a N(0, 0.02²) bank at creation (§2.3) and τ = 0.9 (§4).
func DefaultConfig() Config {
	return Config{
		NumPrototypes:     4096,
		TopK:              16,
		ActivationScale:   ScaleCos,
		Residual:          ResidualAutodiff,
		RecWeight:         0.1,
		R1Weight:          0.1,
		R2Weight:          0.1,
		RecNorm:           true,
		R1Nearest:         1,
		Dist:              DistCos,
		ClusterGrad:       ClusterGradSplit,
		InitStd:           0.02,
		CoverageThreshold: 0.9,
	}
}

// Validate reports the first problem of the configuration, naming the field (its JSON key) and value.
func (c Config) Validate() error {
	weight := func(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }
	switch {
	case c.NumPrototypes <= 0:
		return errors.Errorf("prism: num_prototypes=%d, want > 0", c.NumPrototypes)
	case c.TopK < 1 || c.TopK > c.NumPrototypes || c.TopK > MaxTopK:
		return errors.Errorf("prism: top_k=%d, want 1 ≤ top_k ≤ min(num_prototypes=%d, %d)", c.TopK, c.NumPrototypes, MaxTopK)
	case c.ActivationScale != ScaleCos && c.ActivationScale != ScaleNorm:
		return errors.Errorf("prism: activation_scale=%q, want %q or %q", c.ActivationScale, ScaleCos, ScaleNorm)
	case c.Residual != ResidualAutodiff && c.Residual != ResidualStopGrad:
		return errors.Errorf("prism: residual=%q, want %q or %q", c.Residual, ResidualAutodiff, ResidualStopGrad)
	case !weight(c.RecWeight):
		return errors.Errorf("prism: rec_weight=%g, want a finite value ≥ 0", c.RecWeight)
	case !weight(c.R1Weight):
		return errors.Errorf("prism: r1_weight=%g, want a finite value ≥ 0", c.R1Weight)
	case !weight(c.R2Weight):
		return errors.Errorf("prism: r2_weight=%g, want a finite value ≥ 0", c.R2Weight)
	case c.R1Nearest < 1:
		return errors.Errorf("prism: r1_nearest=%d, want ≥ 1", c.R1Nearest)
	case c.Dist != DistCos && c.Dist != DistSqL2:
		return errors.Errorf("prism: dist=%q, want %q or %q", c.Dist, DistCos, DistSqL2)
	case c.ClusterGrad != ClusterGradSplit && c.ClusterGrad != ClusterGradBoth:
		return errors.Errorf("prism: cluster_grad=%q, want %q or %q", c.ClusterGrad, ClusterGradSplit, ClusterGradBoth)
	case !(c.InitStd > 0) || math.IsInf(c.InitStd, 0):
		return errors.Errorf("prism: init_std=%g, want a finite value > 0", c.InitStd)
	case !(c.CoverageThreshold >= -1 && c.CoverageThreshold <= 1):
		return errors.Errorf("prism: coverage_threshold=%g, want a value in [-1, 1]", c.CoverageThreshold)
	}
	return nil
}

// NumParams returns the parameters the head adds to a model of the given width: K·D (the bank; W is shared).
func (c Config) NumParams(width int) int { return c.NumPrototypes * width }

// FLOPsPerToken returns the forward matrix-product FLOPs per token of the head at width D and vocabulary V (a
// multiply-add is 2 FLOPs): 2·D·K for the cosines against the whole bank, 4·k·D for the selected cosines and the
// reconstruction, and 2·D·V for the logits. The losses add O(k·D + D) per token besides the cosines they share.
func (c Config) FLOPsPerToken(width, vocab int) float64 {
	D, K, k, V := float64(width), float64(c.NumPrototypes), float64(c.TopK), float64(vocab)
	return 2*D*K + 4*k*D + 2*D*V
}
