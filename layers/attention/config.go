package attention

import (
	"math"
	"slices"
	"strings"

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
	// Kind selects how a full pass (Mix, Mixer) computes the attention weights: KindFull (the [B, H, T, T] weights
	// at once; autodiff keeps them, and several tensors of that size, for the backward pass), KindChunked
	// (AttendCausalChunked: blocks of BlockSize positions with an online softmax and a hand-written backward
	// pass, memory linear in T) or KindAuto: chunked when T ≥ ChunkedMinLen. "" means KindAuto. Both forms use
	// the same variables and agree to rounding, so a checkpoint trained with one runs with the other. Decoding
	// (Step) and a pass with a layers/hook hook attached (which reads the weights) always use the full form.
	Kind string `json:"kind,omitempty"`
	// BlockSize is C, the query and key block length of the chunked form; ≥ 0, 0 means DefaultBlockSize. Any
	// C ≥ 1 gives the same result (C ≥ T is one masked block). Per layer about T/C blocks of B·H·C² weights are
	// live at once, and the graph has (T/C)² block pairs to build and schedule.
	BlockSize int `json:"block_size,omitempty"`
	// ChunkedMinLen is the context length from which KindAuto uses the chunked form; ≥ 0, 0 means
	// DefaultChunkedMinLen.
	ChunkedMinLen int `json:"chunked_min_len,omitempty"`
}

// Values of Config.Kind.
const (
	KindAuto    = "auto"    // chunked from ChunkedMinLen positions on, full below
	KindFull    = "full"    // the [T, T] weights at once
	KindChunked = "chunked" // blocks with an online softmax (AttendCausalChunked)
)

// KnownKinds lists the values Config.Kind accepts ("" means KindAuto).
var KnownKinds = []string{KindAuto, KindFull, KindChunked}

// DefaultBlockSize is the block length of the chunked form when Config.BlockSize is 0. It was chosen on the pure-Go
// backend with BenchmarkMixer_ForwardBackward (tokens per CPU-second and peak memory of one layer's training step
// at several T and C): shorter blocks were faster at short contexts, but the number of block pairs to build and
// schedule grows as (T/C)², and 256 was the fastest at the long contexts the chunked form is for. The speed study's
// attention_chunked rows (protolab run speed) store the whole decoder's figures.
const DefaultBlockSize = 256

// DefaultChunkedMinLen is the context length from which KindAuto chunks when Config.ChunkedMinLen is 0: two blocks
// of DefaultBlockSize, the shortest context at which the chunked form keeps fewer scores per head (O(T·C) rather than
// O(T²)); below it a context is one or two blocks and the hand-written backward pass only adds work. The rule is
// about memory: whether the chunked form is also faster depends on the backend and the machine, which the speed
// study's attention and attention_chunked rows (protolab run speed) and BenchmarkMixer_ForwardBackward measure per
// wall and CPU second; set attention.kind or attention.chunked_min_len to choose by them.
const DefaultChunkedMinLen = 512

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
	case c.Kind != "" && !slices.Contains(KnownKinds, c.Kind):
		return errors.Errorf("attention: kind=%q is unknown; known kinds: %s (\"\" means %s)", c.Kind,
			strings.Join(KnownKinds, ", "), KindAuto)
	case c.BlockSize < 0:
		return errors.Errorf("attention: block_size=%d, want ≥ 1 (0 means %d)", c.BlockSize, DefaultBlockSize)
	case c.ChunkedMinLen < 0:
		return errors.Errorf("attention: chunked_min_len=%d, want ≥ 1 (0 means %d)", c.ChunkedMinLen,
			DefaultChunkedMinLen)
	}
	return nil
}

// Block returns the chunked form's block length C with the zero value resolved (BlockSize, or DefaultBlockSize).
func (c Config) Block() int {
	if c.BlockSize == 0 {
		return DefaultBlockSize
	}
	return c.BlockSize
}

// Chunked reports whether a full pass over T positions uses the chunked form: Kind is KindChunked, or KindAuto
// (or "") and T ≥ ChunkedMinLen (DefaultChunkedMinLen when 0).
func (c Config) Chunked(T int) bool {
	switch c.Kind {
	case KindChunked:
		return true
	case KindFull:
		return false
	}
	return T >= c.ChunkThreshold()
}

// ChunkThreshold returns the context length from which KindAuto chunks, with the zero value resolved
// (ChunkedMinLen, or DefaultChunkedMinLen).
func (c Config) ChunkThreshold() int {
	if c.ChunkedMinLen == 0 {
		return DefaultChunkedMinLen
	}
	return c.ChunkedMinLen
}

// NumParams returns the number of parameters one attention layer of this configuration has at the given width:
// D·(H + 2·H_kv)·D_h for q, k, v plus H·D_h·D for o.
func (c Config) NumParams(width int) int {
	dh := c.HeadSize(width)
	return width*(c.NumHeads+2*c.KVHeads())*dh + c.NumHeads*dh*width
}
