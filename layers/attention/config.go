package attention

import (
	"math"

	"github.com/pkg/errors"
)

// Config configures causal multi-head attention. Start from DefaultConfig; Validate checks it against a model width.
type Config struct {
	// NumHeads is H, the number of query heads; > 0.
	NumHeads int `json:"num_heads"`
	// NumKVHeads is H_kv, the number of key/value heads; 0 means H. When smaller than H it must divide H
	// (grouped-query attention: query head h reads key/value head h / (H/H_kv)).
	NumKVHeads int `json:"num_kv_heads"`
	// HeadDim is D_h, the width of one head; 0 means D/H (then H must divide D). Must be even: RoPE rotates pairs.
	HeadDim int `json:"head_dim"`
	// RoPEBase is θ in ω_i = θ^(-2i/D_h); > 1. Default 500,000, the LLaMA-3 value that docs/spec/protot.md §9.1
	// prescribes for the baseline; 10,000 (the original RoPE value) resolves short contexts more finely.
	RoPEBase float64 `json:"rope_base"`
	// InitStd is the standard deviation of the normal initialisation of the q, k and v projections; 0 (the
	// default) means PyTorch's nn.Linear default U(±1/√D). A decoder sets it from its init policy
	// (decoder.Config.Init).
	InitStd float64 `json:"init_std"`
	// OutputInitStd is the standard deviation for the output projection o; 0 means InitStd (or, when that is 0
	// too, U(±1/√(H·D_h))). A decoder sets it from its init policy (σ/√(2L) under GPT-2's scaling).
	OutputInitStd float64 `json:"output_init_std"`
}

// DefaultConfig returns the configuration of the ProtoT paper's LLaMA baseline (docs/spec/protot.md §9.1): 4 heads,
// no grouped-query attention, head width D/H, RoPE θ = 500,000, PyTorch's default initialisation (§2.4).
func DefaultConfig() Config {
	return Config{NumHeads: 4, RoPEBase: 500_000}
}

// KVHeads returns H_kv with the zero value resolved (NumKVHeads, or NumHeads when it is 0).
func (c Config) KVHeads() int {
	if c.NumKVHeads == 0 {
		return c.NumHeads
	}
	return c.NumKVHeads
}

// HeadSize returns D_h for a model of the given width, with the zero value resolved (HeadDim, or width/NumHeads).
func (c Config) HeadSize(width int) int {
	if c.HeadDim == 0 && c.NumHeads > 0 {
		return width / c.NumHeads
	}
	return c.HeadDim
}

// Validate reports the first problem of the configuration for a model of the given width, naming the field
// (its JSON key) and its value.
func (c Config) Validate(width int) error {
	switch {
	case width <= 0:
		return errors.Errorf("attention: width=%d, want > 0", width)
	case c.NumHeads <= 0:
		return errors.Errorf("attention: num_heads=%d, want > 0", c.NumHeads)
	case c.NumKVHeads < 0:
		return errors.Errorf("attention: num_kv_heads=%d, want ≥ 0 (0 means num_heads)", c.NumKVHeads)
	case c.NumHeads%c.KVHeads() != 0:
		return errors.Errorf("attention: num_kv_heads=%d does not divide num_heads=%d", c.NumKVHeads, c.NumHeads)
	case c.HeadDim < 0:
		return errors.Errorf("attention: head_dim=%d, want ≥ 0 (0 means width/num_heads)", c.HeadDim)
	case c.HeadDim == 0 && width%c.NumHeads != 0:
		return errors.Errorf("attention: num_heads=%d does not divide width=%d (set head_dim explicitly)",
			c.NumHeads, width)
	case c.HeadSize(width)%2 != 0:
		return errors.Errorf("attention: head width %d (head_dim=%d, width=%d, num_heads=%d) must be even for RoPE",
			c.HeadSize(width), c.HeadDim, width, c.NumHeads)
	case !(c.RoPEBase > 1) || math.IsInf(c.RoPEBase, 0):
		return errors.Errorf("attention: rope_base=%g, want a finite value > 1", c.RoPEBase)
	case !(c.InitStd >= 0) || math.IsInf(c.InitStd, 0):
		return errors.Errorf("attention: init_std=%g, want a finite value ≥ 0 (0 means PyTorch's default)",
			c.InitStd)
	case !(c.OutputInitStd >= 0) || math.IsInf(c.OutputInitStd, 0):
		return errors.Errorf("attention: output_init_std=%g, want a finite value ≥ 0 (0 means init_std)",
			c.OutputInitStd)
	}
	return nil
}

// NumParams returns the number of parameters one attention layer of this configuration has at the given width:
// D·(H + 2·H_kv)·D_h for q, k, v plus H·D_h·D for o.
func (c Config) NumParams(width int) int {
	dh := c.HeadSize(width)
	return width*(c.NumHeads+2*c.KVHeads())*dh + c.NumHeads*dh*width
}
