package sae

import (
	"math"

	"github.com/pkg/errors"
)

// Kinds of encoder (Config.Kind).
const (
	KindReLUL1 = "relu_l1" // ReLU encoder, L1 penalty on the codes
	KindTopK   = "topk"    // ReLU of the K largest pre-activations, no penalty
)

// MaxK is the largest Config.K Validate accepts: the top-k selection unrolls K rounds of ArgMax at graph-build time.
const MaxK = 256

// Eps is ε of the dictionary normalisation (1).
const Eps = 1e-12

// Config configures a sparse autoencoder. Start from DefaultConfig and set Width.
type Config struct {
	// Width is D, the input width; > 0.
	Width int `json:"width"`
	// Features is F, the dictionary size; 0 means 8·D (docs/spec/protot.md §7.3).
	Features int `json:"features"`
	// Kind is the encoder: KindReLUL1 ("relu_l1") or KindTopK ("topk").
	Kind string `json:"kind"`
	// K is the number of features kept per input by "topk"; in [1, min(F, MaxK)]. Ignored by "relu_l1".
	K int `json:"k"`
	// L1 is λ, the weight of the L1 penalty of "relu_l1" (its starting value when TargetL0 > 0); ≥ 0.
	L1 float64 `json:"l1"`
	// TargetL0 is L0*: with "relu_l1", training adapts λ so that the mean L0 approaches it (equation 7); 0 keeps
	// λ fixed; ≥ 0.
	TargetL0 float64 `json:"target_l0"`
	// L1Rate is η, the per-step rate of λ's adaptation; ≥ 0.
	L1Rate float64 `json:"l1_rate"`
	// InitSeed seeds the initial dictionary (encoder and decoder start tied).
	InitSeed int64 `json:"init_seed"`
}

// DefaultConfig returns the SAE of docs/spec/protot.md §7.3 for the default decoder width D = 256: a ReLU SAE with
// F = 8·D, λ starting at 1e−3 and adapted towards a mean L0 of 32 at rate 0.01 per step; K = 32 if switched to
// "topk".
func DefaultConfig() Config {
	return Config{Width: 256, Kind: KindReLUL1, K: 32, L1: 1e-3, TargetL0: 32, L1Rate: 0.01}
}

// NumFeatures returns F with the zero value resolved.
func (c Config) NumFeatures() int {
	if c.Features == 0 {
		return 8 * c.Width
	}
	return c.Features
}

// Validate reports the first problem of the configuration, naming the field (its JSON key) and value.
func (c Config) Validate() error {
	finiteNonNeg := func(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }
	switch {
	case c.Width <= 0:
		return errors.Errorf("sae: width=%d, want > 0", c.Width)
	case c.Features < 0:
		return errors.Errorf("sae: features=%d, want ≥ 0 (0 means 8·width)", c.Features)
	case c.Kind != KindReLUL1 && c.Kind != KindTopK:
		return errors.Errorf("sae: kind=%q, want %q or %q", c.Kind, KindReLUL1, KindTopK)
	case c.Kind == KindTopK && (c.K < 1 || c.K > c.NumFeatures() || c.K > MaxK):
		return errors.Errorf("sae: k=%d, want 1 ≤ k ≤ min(features=%d, %d)", c.K, c.NumFeatures(), MaxK)
	case !finiteNonNeg(c.L1):
		return errors.Errorf("sae: l1=%g, want a finite value ≥ 0", c.L1)
	case !finiteNonNeg(c.TargetL0):
		return errors.Errorf("sae: target_l0=%g, want a finite value ≥ 0", c.TargetL0)
	case !finiteNonNeg(c.L1Rate):
		return errors.Errorf("sae: l1_rate=%g, want a finite value ≥ 0", c.L1Rate)
	case c.Kind == KindReLUL1 && c.TargetL0 > 0 && c.L1 == 0:
		return errors.New("sae: l1=0 with target_l0 > 0: the multiplicative adaptation (7) needs λ > 0 to start")
	}
	return nil
}

// NumParams returns the number of trainable parameters, 2·D·F + F + D.
func (c Config) NumParams() int {
	D, F := c.Width, c.NumFeatures()
	return 2*D*F + F + D
}
