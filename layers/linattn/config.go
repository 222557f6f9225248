package linattn

import (
	"math"

	"github.com/pkg/errors"
)

// Model kinds (spec §5).
const (
	KindA = "a" // deep: M layers, one MLP-key channel each, keys read the workspace (adaptive)
	KindB = "b" // shallow: one layer, M MLP-key heads (non-adaptive), MLP readout
	KindC = "c" // linear: one layer, M linear keys, linear readout
	// KindAPrime is A′ (spec §5, "easier to train"): deep like A, but the keys are linear (x_i) and an MLP of the
	// workspace makes each layer's query, so the adaptive choice is made once per context rather than per token.
	KindAPrime = "a_prime"
)

// Activations of the MLPs.
const (
	GELU = "gelu" // exact GELU, x·Φ(x) with the normal CDF Φ written through erf
	ReLU = "relu"
)

// Config configures one model. Start from DefaultConfig.
type Config struct {
	// Kind is KindA, KindB, KindC or KindAPrime.
	Kind string `json:"kind"`
	// Measurements is M > 0: the number of layers of A and A′, the number of channels (heads) of B and C.
	Measurements int `json:"measurements"`
	// Hidden is H > 0, the hidden width of every key (A, B) or query (A′) MLP. Spec §5: 128.
	Hidden int `json:"hidden"`
	// ReadoutHidden is the hidden width of the readout MLP (A, B); 0 means Hidden.
	ReadoutHidden int `json:"readout_hidden"`
	// Activation is GELU (spec) or ReLU.
	Activation string `json:"activation"`
	// InitScale is s > 0 of the variance-scaling initialisation: weights ~ N(0, s/fan_in), biases 0. von Oswald et
	// al. use 0.002/L; 1 is LeCun-normal.
	InitScale float64 `json:"init_scale"`
	// WorkspaceGain is g > 0 of eq. (8), the constant the workspace is multiplied by where it enters an MLP (A's keys,
	// A's and B's readout); 0 means 1. It does not change the function class (W_p and W_1 absorb it), only the
	// optimisation: the statistics are small (|φ_ℓ| ≈ α^{ℓ−1} on the tree prior) and gating a key on them needs
	// large weights, which Adam reaches only after about |w|/lr steps.
	WorkspaceGain float64 `json:"workspace_gain"`
	// KeyGain is g_k > 0 of eq. (8) for the workspace where it enters model A's key MLPs; 0 means WorkspaceGain.
	// Every readout and A′'s query MLPs keep WorkspaceGain. Gating a key on small statistics needs workspace
	// weights far larger than the x-weights; the readout needs nothing of the kind, and one gain for both slows
	// one of them (package doc, eq. 8).
	KeyGain float64 `json:"key_gain"`
}

// Gain returns the workspace gain g with the zero value resolved.
func (c Config) Gain() float64 {
	if c.WorkspaceGain == 0 {
		return 1
	}
	return c.WorkspaceGain
}

// KeyGainOrDefault returns g_k with the zero value resolved (KeyGain, or Gain when it is 0).
func (c Config) KeyGainOrDefault() float64 {
	if c.KeyGain == 0 {
		return c.Gain()
	}
	return c.KeyGain
}

// DefaultConfig returns model A with 4 layers, H = 128 (spec §5), GELU and LeCun-normal initialisation.
func DefaultConfig() Config {
	return Config{Kind: KindA, Measurements: 4, Hidden: 128, Activation: GELU, InitScale: 1}
}

// OutHidden returns the readout MLP's hidden width with the zero value resolved.
func (c Config) OutHidden() int {
	if c.ReadoutHidden == 0 {
		return c.Hidden
	}
	return c.ReadoutHidden
}

// Validate reports the first problem of the configuration, naming the field by its JSON key.
func (c Config) Validate() error {
	switch {
	case c.Kind != KindA && c.Kind != KindB && c.Kind != KindC && c.Kind != KindAPrime:
		return errors.Errorf("linattn: kind=%q, want %q, %q, %q or %q", c.Kind, KindA, KindB, KindC, KindAPrime)
	case c.Measurements <= 0:
		return errors.Errorf("linattn: measurements=%d, want > 0", c.Measurements)
	case c.Kind != KindC && c.Hidden <= 0:
		return errors.Errorf("linattn: hidden=%d, want > 0 for kind %q", c.Hidden, c.Kind)
	case c.ReadoutHidden < 0:
		return errors.Errorf("linattn: readout_hidden=%d, want ≥ 0 (0 means hidden)", c.ReadoutHidden)
	case c.Activation != GELU && c.Activation != ReLU:
		return errors.Errorf("linattn: activation=%q, want %q or %q", c.Activation, GELU, ReLU)
	case !(c.InitScale > 0) || math.IsInf(c.InitScale, 0):
		return errors.Errorf("linattn: init_scale=%g, want a finite value > 0", c.InitScale)
	case !(c.WorkspaceGain >= 0) || math.IsInf(c.WorkspaceGain, 0):
		return errors.Errorf("linattn: workspace_gain=%g, want a finite value ≥ 0 (0 means 1)", c.WorkspaceGain)
	case !(c.KeyGain >= 0) || math.IsInf(c.KeyGain, 0):
		return errors.Errorf("linattn: key_gain=%g, want a finite value ≥ 0 (0 means workspace_gain)", c.KeyGain)
	}
	return nil
}

// NumParams returns the number of trainable parameters of the model for inputs of dimension d.
func (c Config) NumParams(d int) int {
	M, H, Ho := c.Measurements, c.Hidden, c.OutHidden()
	readout := M*Ho + Ho + Ho*d + d
	switch c.Kind {
	case KindA:
		n := readout
		for l := 1; l <= M; l++ {
			n += (d+l-1)*H + H + H + 1
		}
		return n
	case KindB:
		return M*(d*H+H+H+1) + readout
	case KindAPrime:
		n := readout + d
		for l := 2; l <= M; l++ {
			n += (l-1)*H + H + H*d + d
		}
		return n
	}
	return 2 * M * d
}
