package mamba

import (
	"math"

	"github.com/pkg/errors"
)

// Config configures a Mamba-1 mixer. Start from DefaultConfig; Validate checks it against a model width.
type Config struct {
	// Expand sets the inner width d_in = Expand·D; > 0. Mamba: 2 (spec: no cap on d_in).
	Expand int `json:"expand"`
	// StateSize is N, the SSM state size per channel; > 0. Mamba: 16.
	StateSize int `json:"state_size"`
	// ConvSize is d_conv, the kernel length of the causal depthwise convolution; ≥ 1. Mamba: 4.
	ConvSize int `json:"conv_size"`
	// DTRank is the rank of the Δ projection; 0 means ⌈D/16⌉.
	DTRank int `json:"dt_rank"`
	// DTMin and DTMax bound the log-uniform draw of the initial step Δ = softplus(b_dt); 0 < dt_min ≤ dt_max.
	// Mamba: 1e-3 and 0.1.
	DTMin float64 `json:"dt_min"`
	DTMax float64 `json:"dt_max"`
	// DTFloor is the floor applied to the initial Δ before inverting the softplus; > 0. Mamba: 1e-4.
	DTFloor float64 `json:"dt_floor"`
	// ChunkSize is Q, the chunk length of the two-level scan (doc.go, eq. 8–10); 0 means ⌈√T⌉, which minimises the
	// number of sequential steps Q + T/Q. Any Q gives the same result up to rounding; Q ≥ T is the plain scan.
	ChunkSize int `json:"chunk_size"`
	// InitStd is the standard deviation of the normal initialisation of in_proj and x_proj; 0 means PyTorch's
	// nn.Linear default U(±1/√fan_in). A decoder sets it from its init policy (decoder.Config.Init).
	InitStd float64 `json:"init_std"`
	// OutputInitStd is the standard deviation for out_proj; 0 means InitStd (or, when that is 0 too,
	// U(±1/√d_in)). A decoder sets it from its init policy.
	OutputInitStd float64 `json:"output_init_std"`
}

// DefaultConfig returns Mamba-1's defaults (docs/spec/protot.md §9.3; mamba_simple.py): expand 2, N = 16, d_conv = 4,
// dt_rank ⌈D/16⌉, Δ initialised log-uniform in [1e-3, 0.1] with floor 1e-4, chunk length ⌈√T⌉, PyTorch's default
// initialisation of the projections.
func DefaultConfig() Config {
	return Config{Expand: 2, StateSize: 16, ConvSize: 4, DTMin: 1e-3, DTMax: 0.1, DTFloor: 1e-4}
}

// Inner returns d_in = Expand·width.
func (c Config) Inner(width int) int { return c.Expand * width }

// Rank returns the Δ projection rank for a model of the given width, with the zero value resolved (⌈D/16⌉).
func (c Config) Rank(width int) int {
	if c.DTRank == 0 {
		return (width + 15) / 16
	}
	return c.DTRank
}

// Validate reports the first problem of the configuration for a model of the given width, naming the field (its
// JSON key) and its value.
func (c Config) Validate(width int) error {
	finite := func(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }
	switch {
	case width <= 0:
		return errors.Errorf("mamba: width=%d, want > 0", width)
	case c.Expand <= 0:
		return errors.Errorf("mamba: expand=%d, want > 0", c.Expand)
	case c.StateSize <= 0:
		return errors.Errorf("mamba: state_size=%d, want > 0", c.StateSize)
	case c.ConvSize < 1:
		return errors.Errorf("mamba: conv_size=%d, want ≥ 1", c.ConvSize)
	case c.DTRank < 0:
		return errors.Errorf("mamba: dt_rank=%d, want ≥ 0 (0 means ⌈width/16⌉)", c.DTRank)
	case !(c.DTMin > 0) || !finite(c.DTMin):
		return errors.Errorf("mamba: dt_min=%g, want a finite value > 0", c.DTMin)
	case !(c.DTMax >= c.DTMin) || !finite(c.DTMax):
		return errors.Errorf("mamba: dt_max=%g, want a finite value ≥ dt_min=%g", c.DTMax, c.DTMin)
	case !(c.DTFloor > 0) || !finite(c.DTFloor):
		return errors.Errorf("mamba: dt_floor=%g, want a finite value > 0", c.DTFloor)
	case c.ChunkSize < 0:
		return errors.Errorf("mamba: chunk_size=%d, want ≥ 0 (0 means ⌈√T⌉)", c.ChunkSize)
	case !(c.InitStd >= 0) || !finite(c.InitStd):
		return errors.Errorf("mamba: init_std=%g, want a finite value ≥ 0 (0 means PyTorch's default)", c.InitStd)
	case !(c.OutputInitStd >= 0) || !finite(c.OutputInitStd):
		return errors.Errorf("mamba: output_init_std=%g, want a finite value ≥ 0 (0 means init_std)", c.OutputInitStd)
	}
	return nil
}

// NumParams returns the number of parameters of one layer at the given width, with d = d_in, R = dt_rank:
// D·2d (in_proj) + d·d_conv + d (conv) + d·(R + 2N) (x_proj) + R·d + d (dt_proj, dt_bias) + d·N (a_log) + d (d_skip)
// + d·D (out_proj).
func (c Config) NumParams(width int) int {
	D, d, R, N, K := width, c.Inner(width), c.Rank(width), c.StateSize, c.ConvSize
	return D*2*d + d*K + d + d*(R+2*N) + R*d + d + d*N + d + d*D
}

// FLOPsPerToken returns the forward matrix-product FLOPs per token (a multiply-add is 2 FLOPs), independent of T:
// the projections 2·D·2d + 2·d·(R+2N) + 2·R·d + 2·d·D and the read-outs y = h·c of eq. (6), 2·d·N, counted once more
// for the inter-chunk term of eq. (10). The elementwise scan (about 6·d·N operations per token) is not counted.
func (c Config) FLOPsPerToken(width, T int) float64 {
	D, d, R, N := float64(width), float64(c.Inner(width)), float64(c.Rank(width)), float64(c.StateSize)
	return 2*D*2*d + 2*d*(R+2*N) + 2*R*d + 2*d*D + 2*2*d*N
}

// chunkFor returns the chunk length used for T tokens: ChunkSize, or ⌈√T⌉ when it is 0, capped at T.
func (c Config) chunkFor(T int) int {
	q := c.ChunkSize
	if q == 0 {
		q = int(math.Ceil(math.Sqrt(float64(T))))
	}
	return max(1, min(q, T))
}
