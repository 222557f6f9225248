package deltanet

import (
	"math"

	"github.com/pkg/errors"
)

// Config configures a DeltaNet mixer. Start from DefaultConfig; Validate checks it against a model width.
type Config struct {
	// NumHeads is H; > 0.
	NumHeads int `json:"num_heads"`
	// HeadDim is d_k = d_v, the key and value width of one head; 0 means D/H (then H must divide D).
	HeadDim int `json:"head_dim"`
	// ConvSize is the kernel length of the causal depthwise ShortConv on q, k and v; ≥ 1. fla: 4.
	ConvSize int `json:"conv_size"`
	// ChunkSize is C, the chunk length of the chunkwise training form (eq. 6–10); a power of two. 1 gives the
	// token-by-token recurrence (eq. 4–5). Sequences shorter than C use the smallest power of two ≥ T. Every C gives
	// the same result up to rounding; 32 was the fastest on the pure-Go backend at T = 256 and 1024 (fla uses 64).
	ChunkSize int `json:"chunk_size"`
	// NormEpsilon is the ε of the per-head output RMSNorm; > 0. fla: 1e-5.
	NormEpsilon float64 `json:"norm_epsilon"`
	// InitStd is the standard deviation of the normal initialisation of the q, k, v and β projections;
	// 0 means PyTorch's nn.Linear default U(±1/√D). A decoder sets it from its init policy (decoder.Config.Init).
	InitStd float64 `json:"init_std"`
	// OutputInitStd is the standard deviation for the output projection; 0 means InitStd (or, when that is 0 too,
	// U(±1/√(H·d_v))). A decoder sets it from its init policy.
	OutputInitStd float64 `json:"output_init_std"`
}

// DefaultConfig returns the defaults of fla's DeltaNet layer (docs/spec/protot.md §9.2): 4 heads of width D/4,
// ShortConv of length 4, output RMSNorm ε = 1e-5, PyTorch's default initialisation; chunk length 32.
func DefaultConfig() Config {
	return Config{NumHeads: 4, ConvSize: 4, ChunkSize: 32, NormEpsilon: 1e-5}
}

// HeadSize returns d_k = d_v for a model of the given width, with the zero value resolved.
func (c Config) HeadSize(width int) int {
	if c.HeadDim == 0 && c.NumHeads > 0 {
		return width / c.NumHeads
	}
	return c.HeadDim
}

// Validate reports the first problem of the configuration for a model of the given width, naming the field (its
// JSON key) and its value.
func (c Config) Validate(width int) error {
	finiteNonNeg := func(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }
	switch {
	case width <= 0:
		return errors.Errorf("deltanet: width=%d, want > 0", width)
	case c.NumHeads <= 0:
		return errors.Errorf("deltanet: num_heads=%d, want > 0", c.NumHeads)
	case c.HeadDim < 0:
		return errors.Errorf("deltanet: head_dim=%d, want ≥ 0 (0 means width/num_heads)", c.HeadDim)
	case c.HeadDim == 0 && width%c.NumHeads != 0:
		return errors.Errorf("deltanet: num_heads=%d does not divide width=%d (set head_dim explicitly)",
			c.NumHeads, width)
	case c.ConvSize < 1:
		return errors.Errorf("deltanet: conv_size=%d, want ≥ 1", c.ConvSize)
	case c.ChunkSize < 1 || c.ChunkSize&(c.ChunkSize-1) != 0:
		return errors.Errorf("deltanet: chunk_size=%d, want a power of two ≥ 1", c.ChunkSize)
	case !(c.NormEpsilon > 0) || math.IsInf(c.NormEpsilon, 0):
		return errors.Errorf("deltanet: norm_epsilon=%g, want a finite value > 0", c.NormEpsilon)
	case !finiteNonNeg(c.InitStd):
		return errors.Errorf("deltanet: init_std=%g, want a finite value ≥ 0 (0 means PyTorch's default)", c.InitStd)
	case !finiteNonNeg(c.OutputInitStd):
		return errors.Errorf("deltanet: output_init_std=%g, want a finite value ≥ 0 (0 means init_std)",
			c.OutputInitStd)
	}
	return nil
}

// NumParams returns the number of parameters of one layer at the given width:
// 3·D·H·d (q, k, v) + 3·H·d·ConvSize (convolutions) + D·H (β) + d (output norm gain) + H·d·D (output).
func (c Config) NumParams(width int) int {
	D, H, d := width, c.NumHeads, c.HeadSize(width)
	return 3*D*H*d + 3*H*d*c.ConvSize + D*H + d + H*d*D
}

// FLOPsPerToken returns the forward matrix-product FLOPs per token of a sequence of T tokens as Mix computes
// them (a multiply-add is 2 FLOPs): the projections 2·D·(3·H·d + H) + 2·H·d·D, and per head and token of a chunk
// of length C' = min(C, T rounded up to a power of two): the inverse of eq. (7) by block doubling,
// (2/3)·C'² + C'·d, W and U 2·C'·2d, QKᵀ and its product with U′ 2·C'·2d, and the three state products of
// eq. (8)–(10) 3·2·d² (d = d_k = d_v).
func (c Config) FLOPsPerToken(width, T int) float64 {
	D, H, d := float64(width), float64(c.NumHeads), float64(c.HeadSize(width))
	C := float64(effectiveChunk(c.ChunkSize, T))
	perHead := 2.0/3*C*C + C*d + 4*C*d + 4*C*d + 6*d*d
	return 2*D*(3*H*d+H) + 2*H*d*D + H*perHead
}

// effectiveChunk returns the chunk length used for T tokens: chunk, or the smallest power of two ≥ T when that
// is smaller.
func effectiveChunk(chunk, T int) int {
	c := 1
	for c < T && c < chunk {
		c *= 2
	}
	return c
}
