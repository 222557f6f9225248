package protot

import (
	"math"

	"github.com/pkg/errors"
)

// Numerics modes of the discounted prefix mean (docs/spec/protot.md §4.5), the values of Config.Numerics.
const (
	// NumericsExact computes equation (3) as written, in the model's dtype.
	NumericsExact = "exact"
	// NumericsReference reproduces the official code's float32 arithmetic: weights (1−β)/(β^j + 1e−12), one running
	// sum, then a rescale by β^(t−1). It attenuates short-half-life channels on long sequences (doc.go, "Numerics").
	NumericsReference = "reference"
)

// Parallel forms of the prefix mean (docs/spec/protot.md §4.1, §4.2), the values of Config.Form.
const (
	// FormAuto uses FormDense when T ≤ Config.DenseMaxLen and FormChunked otherwise.
	FormAuto = "auto"
	// FormDense is Form A: one R×T×T decay matrix.
	FormDense = "dense"
	// FormChunked is Form B: R×Q×Q decay matrices inside chunks of Q tokens plus a carried chunk state.
	FormChunked = "chunked"
)

// Config configures the ProtoT mixer of every layer of a model; the layer index passed to Mixer, Mix and Step
// selects the layer-dependent parts (shared routing, the value convolution, the first τ_w). Start from
// DefaultConfig; Validate checks it against a model width.
type Config struct {
	// NumPrototypes is R, the number of prototypes (channels) per layer; > 0. Paper: 32.
	NumPrototypes int `json:"num_prototypes"`
	// ValueWidth is D_v, the width of the low-rank value; 0 means D/2 (the official code's C/2; set it to D for
	// the full-rank ablation).
	ValueWidth int `json:"value_width"`
	// DecayInit is the initial β_k = σ(γ_k) of every prototype, in (0, 1). Official code: 0.9.
	DecayInit float64 `json:"decay_init"`
	// DecayInitMax spreads the initial decays over the prototypes: 0 means every β_k starts at DecayInit (the
	// official code); a value in (DecayInit, 1) spaces the initial half-lives h_k = ln ½ / ln β_k geometrically
	// from DecayInit's (k = 0) to DecayInitMax's (k = R−1), so that some channels start with a long memory.
	// Omitted from JSON when 0, so that configs written before the field existed, and the cache keys hashed from
	// them, are unchanged.
	DecayInitMax float64 `json:"decay_init_max,omitempty"`
	// WriteTempInit is the initial write temperature τ_w of layers without shared routing; ≠ 0. Official: 1.
	WriteTempInit float64 `json:"write_temp_init"`
	// SharedWriteTempInit is the initial τ_w of the shared-routing layers (layer 0); ≠ 0. Official: 3, which makes
	// the initial routing softer, not sharper as the official comment says.
	SharedWriteTempInit float64 `json:"shared_write_temp_init"`
	// ReadTempInit is the initial read temperature τ_r; ≠ 0. Official: 1.
	ReadTempInit float64 `json:"read_temp_init"`
	// AlphaInit is the initial output gate α. Official: 1 (--PROTO_ALPHA_INIT).
	AlphaInit float64 `json:"alpha_init"`
	// SharedRoutingLayers is the number of leading layers that read with the write routing (ρ = π) and have no
	// read query W_r nor τ_r; ≥ 0. Official: 1 (layer 0 only).
	SharedRoutingLayers int `json:"shared_routing_layers"`
	// ConvLayers is the number of leading layers whose value is mixed with a causal depthwise convolution,
	// v ← ½v + ½·conv(v); ≥ 0. Official: 2 (layers 0 and 1).
	ConvLayers int `json:"conv_layers"`
	// ConvKernel is the convolution's kernel length K; ≥ 2 when ConvLayers > 0. Official: 5.
	ConvKernel int `json:"conv_kernel"`
	// Numerics is NumericsExact ("exact", the default) or NumericsReference ("reference").
	Numerics string `json:"numerics"`
	// Form is the parallel (training) form of the prefix mean: FormAuto, FormDense or FormChunked. All forms give
	// the same result up to rounding.
	Form string `json:"form"`
	// ChunkSize is Q, the chunk length of FormChunked; > 0. Spec default 64.
	ChunkSize int `json:"chunk_size"`
	// DenseMaxLen is the longest sequence for which FormAuto picks FormDense; ≥ 0.
	DenseMaxLen int `json:"dense_max_len"`
	// InitStd is the standard deviation of the normal initialisation of W_V and W_r; 0 (the default) means
	// PyTorch's nn.Linear default U(±1/√D), the official code's (docs/spec/protot.md §2.4). A decoder sets it from
	// its init policy (decoder.Config.Init).
	InitStd float64 `json:"init_std"`
	// OutputInitStd is the standard deviation of the normal initialisation of W_U, the projection into the residual
	// stream; 0 means InitStd (or, when that is 0 too, U(±1/√D_v)). A decoder sets it from its init policy.
	OutputInitStd float64 `json:"output_init_std"`
}

// DefaultConfig returns the official code's mixer (docs/spec/protot.md §2.2, §2.3): R = 32, D_v = D/2, β = 0.9,
// τ_w = 1 (3 in layer 0), τ_r = 1, α = 1, shared routing in layer 0, a kernel-5 value convolution in layers 0 and
// 1, exact numerics, chunks of Q = 64 with the dense form for T ≤ 64.
func DefaultConfig() Config {
	return Config{
		NumPrototypes:       32,
		DecayInit:           0.9,
		WriteTempInit:       1,
		SharedWriteTempInit: 3,
		ReadTempInit:        1,
		AlphaInit:           1,
		SharedRoutingLayers: 1,
		ConvLayers:          2,
		ConvKernel:          5,
		Numerics:            NumericsExact,
		Form:                FormAuto,
		ChunkSize:           64,
		DenseMaxLen:         64,
	}
}

// Dv returns D_v for a model of the given width, with the zero value resolved (ValueWidth, or width/2).
func (c Config) Dv(width int) int {
	if c.ValueWidth == 0 {
		return width / 2
	}
	return c.ValueWidth
}

// SharedRouting reports whether layer reads with its write routing (ρ = π; no W_r, no τ_r).
func (c Config) SharedRouting(layer int) bool { return layer < c.SharedRoutingLayers }

// HasConv reports whether layer mixes its value with the causal depthwise convolution.
func (c Config) HasConv(layer int) bool { return layer < c.ConvLayers }

// ChunkLen returns the chunk length the parallel form uses for a sequence of T tokens: T (one chunk, the dense
// Form A) or ChunkSize (Form B), following Form.
func (c Config) ChunkLen(T int) int {
	switch {
	case c.Form == FormDense, c.Form == FormAuto && T <= c.DenseMaxLen, c.ChunkSize >= T:
		return T
	}
	return c.ChunkSize
}

// Validate reports the first problem of the configuration for a model of the given width, naming the field (its
// JSON key) and value.
func (c Config) Validate(width int) error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case width <= 0:
		return errors.Errorf("protot: width=%d, want > 0", width)
	case c.NumPrototypes <= 0:
		return errors.Errorf("protot: num_prototypes=%d, want > 0", c.NumPrototypes)
	case c.ValueWidth < 0:
		return errors.Errorf("protot: value_width=%d, want ≥ 0 (0 means width/2)", c.ValueWidth)
	case c.Dv(width) <= 0:
		return errors.Errorf("protot: value width %d (value_width=%d, width=%d), want > 0", c.Dv(width), c.ValueWidth, width)
	case !(c.DecayInit > 0 && c.DecayInit < 1):
		return errors.Errorf("protot: decay_init=%g, want a value in (0, 1)", c.DecayInit)
	case c.DecayInitMax != 0 && !(c.DecayInitMax > c.DecayInit && c.DecayInitMax < 1):
		return errors.Errorf("protot: decay_init_max=%g, want 0 or a value in (decay_init=%g, 1)", c.DecayInitMax,
			c.DecayInit)
	case !finite(c.WriteTempInit) || c.WriteTempInit == 0:
		return errors.Errorf("protot: write_temp_init=%g, want a finite non-zero value", c.WriteTempInit)
	case !finite(c.SharedWriteTempInit) || c.SharedWriteTempInit == 0:
		return errors.Errorf("protot: shared_write_temp_init=%g, want a finite non-zero value", c.SharedWriteTempInit)
	case !finite(c.ReadTempInit) || c.ReadTempInit == 0:
		return errors.Errorf("protot: read_temp_init=%g, want a finite non-zero value", c.ReadTempInit)
	case !finite(c.AlphaInit):
		return errors.Errorf("protot: alpha_init=%g, want a finite value", c.AlphaInit)
	case c.SharedRoutingLayers < 0:
		return errors.Errorf("protot: shared_routing_layers=%d, want ≥ 0", c.SharedRoutingLayers)
	case c.ConvLayers < 0:
		return errors.Errorf("protot: conv_layers=%d, want ≥ 0", c.ConvLayers)
	case c.ConvLayers > 0 && c.ConvKernel < 2:
		return errors.Errorf("protot: conv_kernel=%d, want ≥ 2 when conv_layers=%d > 0", c.ConvKernel, c.ConvLayers)
	case c.Numerics != NumericsExact && c.Numerics != NumericsReference:
		return errors.Errorf("protot: numerics=%q, want %q or %q", c.Numerics, NumericsExact, NumericsReference)
	case c.Form != FormAuto && c.Form != FormDense && c.Form != FormChunked:
		return errors.Errorf("protot: form=%q, want %q, %q or %q", c.Form, FormAuto, FormDense, FormChunked)
	case c.ChunkSize <= 0:
		return errors.Errorf("protot: chunk_size=%d, want > 0", c.ChunkSize)
	case c.DenseMaxLen < 0:
		return errors.Errorf("protot: dense_max_len=%d, want ≥ 0", c.DenseMaxLen)
	case !(c.InitStd >= 0) || !finite(c.InitStd):
		return errors.Errorf("protot: init_std=%g, want a finite value ≥ 0 (0 means PyTorch's default)", c.InitStd)
	case !(c.OutputInitStd >= 0) || !finite(c.OutputInitStd):
		return errors.Errorf("protot: output_init_std=%g, want a finite value ≥ 0 (0 means init_std)",
			c.OutputInitStd)
	}
	return nil
}

// NumParams returns the number of trainable parameters of layer `layer` at the given width:
// R·D (P) + 2·D·D_v (W_V, W_U) + R (γ) + 2 (τ_w, α), plus D·D + 1 (W_r, τ_r) without shared routing and
// D_v·K (conv kernel) in convolution layers.
func (c Config) NumParams(width, layer int) int {
	D, R, Dv := width, c.NumPrototypes, c.Dv(width)
	n := R*D + 2*D*Dv + R + 2
	if !c.SharedRouting(layer) {
		n += D*D + 1
	}
	if c.HasConv(layer) {
		n += Dv * c.ConvKernel
	}
	return n
}

// FLOPsPerToken returns the forward matrix-product FLOPs per token of layer `layer` for a sequence of T tokens
// (a multiply-add is 2 FLOPs), as Mix computes the output (DiscountedRead): the write logits 2·D·R, the value
// 2·D·D_v, the output 2·D_v·D, the read logits 2·D·R unless routing is shared (P·W_r is formed once per call), and
// the memory with chunks of Q = ChunkLen(T): 2·Q·(2R + D_v) for the mass, the chunk weights and their product with
// the values (full Q×Q blocks), plus 4·R·D_v for the chunk states and their read when there is more than one
// chunk. The trace's num and M cost more but are evaluated only when asked for.
func (c Config) FLOPsPerToken(width, layer, T int) float64 {
	D, R, Dv := float64(width), float64(c.NumPrototypes), float64(c.Dv(width))
	f := 2*D*R + 4*D*Dv
	if !c.SharedRouting(layer) {
		f += 2 * D * R
	}
	q := c.ChunkLen(T)
	f += 2 * float64(q) * (2*R + Dv)
	if q < T {
		f += 4 * R * Dv
	}
	return f
}

// DecayLogitInit returns the initial γ_k = logit(β_k) of the R prototypes: logit(DecayInit) for every k, or with
// DecayInitMax set the logits of β_k = 2^(−1/h_k), h_k = h_0·(h_{R−1}/h_0)^(k/(R−1)) with h_0 and h_{R−1} the
// half-lives of DecayInit and DecayInitMax (h_k = h_0 when R = 1).
func (c Config) DecayLogitInit() []float64 {
	R := c.NumPrototypes
	out := make([]float64, R)
	logit := func(b float64) float64 { return math.Log(b / (1 - b)) }
	if c.DecayInitMax == 0 {
		for k := range out {
			out[k] = logit(c.DecayInit)
		}
		return out
	}
	h0, h1 := math.Ln2/-math.Log(c.DecayInit), math.Ln2/-math.Log(c.DecayInitMax)
	for k := range out {
		f := 0.0
		if R > 1 {
			f = float64(k) / float64(R-1)
		}
		h := h0 * math.Pow(h1/h0, f)
		out[k] = logit(math.Exp(-math.Ln2 / h))
	}
	return out
}
