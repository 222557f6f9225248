package decoder

import (
	"math"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/deltanet"
	"github.com/protolab/protolab/layers/mamba"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/layers/protot"
)

// Config configures a LLaMA-style decoder language model. Start from DefaultConfig; Validate checks it.
type Config struct {
	// VocabSize is V; > 0.
	VocabSize int `json:"vocab_size"`
	// Width is D, the residual stream width; > 0.
	Width int `json:"width"`
	// NumLayers is L, the number of blocks; > 0.
	NumLayers int `json:"num_layers"`
	// FFNHidden is F, the SwiGLU inner width; 0 means the LLaMA rule: 8D/3 rounded up to a multiple of 32
	// (352 at D=128, 704 at D=256; docs/spec/protot.md's 2.7 ratio gives 688 at D=256: set it explicitly for that).
	FFNHidden int `json:"ffn_hidden"`
	// TieEmbeddings makes the LM head reuse the token embedding [V, D] (no "lm_head" scope then).
	TieEmbeddings bool `json:"tie_embeddings"`
	// NormEpsilon is the ε of every RMSNorm; > 0.
	NormEpsilon float64 `json:"norm_epsilon"`
	// Mixer names the sequence mixer of every block; one of KnownMixers.
	Mixer string `json:"mixer"`
	// Attention configures the "attention" mixer (layers/attention). Its init_std and output_init_std must stay 0:
	// Init sets them (see Init).
	Attention attention.Config `json:"attention"`
	// ProtoT configures the "protot" mixer (layers/protot); init_std and output_init_std as for attention.
	ProtoT protot.Config `json:"protot"`
	// DeltaNet configures the "deltanet" mixer (layers/deltanet); init_std and output_init_std as for attention.
	DeltaNet deltanet.Config `json:"deltanet"`
	// Mamba configures the "mamba" mixer (layers/mamba); init_std and output_init_std as for attention.
	Mamba mamba.Config `json:"mamba"`
	// DropFFN removes the SwiGLU FFN sub-block (and its norm) from every block, as Mamba-only stacks do
	// (docs/spec/protot.md §9.3). Default false.
	DropFFN bool `json:"drop_ffn"`
	// MaxLen is the decoding capacity: the number of positions StateShapes allocates when given maxLen ≤ 0; > 0.
	MaxLen int `json:"max_len"`
	// Init is the initialisation policy of every projection of the model, the mixer's, the FFN's and an untied LM
	// head's (doc.go, "Initialisation"): InitPyTorch ("pytorch", the default; "" means it too), U(±1/√fan_in),
	// PyTorch's nn.Linear default, which the official ProtoT code keeps for every Linear (docs/spec/protot.md §2.4);
	// or InitGPT2 ("gpt2"), N(0, σ²) with σ = InitStd, and N(0, σ²/(2L)) for the projections that write into the
	// residual stream (ResidualInitStd).
	Init string `json:"init"`
	// InitStd is σ, the standard deviation of the N(0, σ²) token embedding under every policy, and of the
	// projections under InitGPT2; > 0. Norm gains start at 1.
	InitStd float64 `json:"init_std"`
	// DType is the dtype of the variables and activations: "float32" or "float64".
	DType string `json:"dtype"`
}

// KnownMixers lists the values Config.Mixer accepts.
var KnownMixers = []string{MixerAttention, MixerProtoT, MixerDeltaNet, MixerMamba}

// Initialisation policies, the values of Config.Init (doc.go, "Initialisation").
const (
	// InitPyTorch draws every projection from U(±1/√fan_in): docs/spec/protot.md §2.4, the official code's.
	InitPyTorch = "pytorch"
	// InitGPT2 draws every projection from N(0, σ²), and those that write into the residual stream from
	// N(0, σ²/(2L)) (GPT-2's scaling), σ = Config.InitStd.
	InitGPT2 = "gpt2"
)

// KnownInits lists the values Config.Init accepts besides "" (which means InitPyTorch).
var KnownInits = []string{InitPyTorch, InitGPT2}

// MixerAttention is the Config.Mixer value for causal multi-head attention with RoPE (layers/attention).
const MixerAttention = "attention"

// DefaultConfig returns the ProtoT paper's LLaMA baseline backbone (docs/spec/protot.md §2.1, §9.1, §10):
// V = 16,384, D = 256, L = 6, tied embeddings, RMSNorm ε = 2⁻²³, attention with 4 heads and θ = 500,000,
// F from the LLaMA rule, the spec's PyTorch initialisation with an N(0, 0.02²) embedding, float32, decoding capacity
// 1,024 positions.
func DefaultConfig() Config {
	return Config{
		VocabSize:     16_384,
		Width:         256,
		NumLayers:     6,
		TieEmbeddings: true,
		NormEpsilon:   0x1p-23,
		Mixer:         MixerAttention,
		Attention:     attention.DefaultConfig(),
		ProtoT:        protot.DefaultConfig(),
		DeltaNet:      deltanet.DefaultConfig(),
		Mamba:         mamba.DefaultConfig(),
		MaxLen:        1024,
		Init:          InitPyTorch,
		InitStd:       0.02,
		DType:         "float32",
	}
}

// NoDecay returns the variable path elements (scope or variable names) that must not be weight-decayed in a model
// of this configuration, for an optimizer's exemption list: the norm scopes attn_norm, ffn_norm and final_norm
// (their gains), the configured mixer's own list (protot.NoDecay, deltanet.NoDecay, mamba.NoDecay; attention has
// none) and the PRISM head's bank (prism.NoDecay), which only a PrismHead model has. Each entry is a whole path
// element; the rank ≤ 1 entries document the spec's groups (docs/spec/protot.md §2.5), though an optimizer that
// never decays rank ≤ 1 variables needs only the others. Duplicates are dropped; the order is fixed. It does not
// validate c (an unknown mixer adds nothing).
func (c Config) NoDecay() []string {
	out := []string{ScopeAttnNorm, ScopeFFNNorm, ScopeFinalNorm}
	switch c.Mixer {
	case MixerProtoT:
		out = append(out, protot.NoDecay()...)
	case MixerDeltaNet:
		out = append(out, deltanet.NoDecay()...)
	case MixerMamba:
		out = append(out, mamba.NoDecay()...)
	}
	for _, name := range prism.NoDecay() {
		if !slices.Contains(out, name) { // ProtoT's and PRISM's banks share the name "prototypes"
			out = append(out, name)
		}
	}
	return out
}

// FFNWidth returns F with the zero value resolved: FFNHidden, or ⌈8D/3⌉ rounded up to a multiple of 32.
func (c Config) FFNWidth() int {
	if c.FFNHidden != 0 {
		return c.FFNHidden
	}
	f := (8*c.Width + 2) / 3 // ⌈8D/3⌉
	return (f + 31) / 32 * 32
}

// ResidualInitStd returns σ/√(2L), the initialisation standard deviation of the projections that write into
// the residual stream under InitGPT2.
func (c Config) ResidualInitStd() float64 {
	return c.InitStd / math.Sqrt(2*float64(c.NumLayers))
}

// ProjectionStds returns the standard deviations of the normal initialisation of the projections under the
// configured policy: inStd for those that read the residual stream (q, k, v, W_V, W_r, in_proj, x_proj, β, FFN gate
// and up, an untied LM head) and outStd for those that write into it (attention's o, W_U, out_proj, FFN down).
// Both are 0 under InitPyTorch, which every layer reads as U(±1/√fan_in); under InitGPT2 they are σ and σ/√(2L).
// This is the one place where the policy becomes numbers: NewMixer passes them to the mixer's configuration as
// init_std and output_init_std, and the FFN and the LM head use them directly.
func (c Config) ProjectionStds() (inStd, outStd float64) {
	if c.Init == InitGPT2 {
		return c.InitStd, c.ResidualInitStd()
	}
	return 0, 0
}

// DTypeOf returns the gomlx dtype named by DType; it panics on an unknown name (Validate reports it).
func (c Config) DTypeOf() dtypes.DType {
	switch c.DType {
	case "float32":
		return dtypes.Float32
	case "float64":
		return dtypes.Float64
	}
	panic(errors.Errorf("decoder: dtype=%q, want \"float32\" or \"float64\"", c.DType))
}

// Validate reports the first problem of the configuration, naming the field (its JSON key) and value.
func (c Config) Validate() error {
	finitePositive := func(x float64) bool { return x > 0 && !math.IsInf(x, 0) }
	switch {
	case c.VocabSize <= 0:
		return errors.Errorf("decoder: vocab_size=%d, want > 0", c.VocabSize)
	case c.Width <= 0:
		return errors.Errorf("decoder: width=%d, want > 0", c.Width)
	case c.NumLayers <= 0:
		return errors.Errorf("decoder: num_layers=%d, want > 0", c.NumLayers)
	case c.FFNHidden < 0:
		return errors.Errorf("decoder: ffn_hidden=%d, want ≥ 0 (0 means 8·width/3 rounded up to a multiple of 32)",
			c.FFNHidden)
	case !finitePositive(c.NormEpsilon):
		return errors.Errorf("decoder: norm_epsilon=%g, want a finite value > 0", c.NormEpsilon)
	case c.MaxLen <= 0:
		return errors.Errorf("decoder: max_len=%d, want > 0", c.MaxLen)
	case c.Init != "" && !slices.Contains(KnownInits, c.Init):
		return errors.Errorf("decoder: init=%q, want %q (the spec's, the default) or %q", c.Init, InitPyTorch,
			InitGPT2)
	case !finitePositive(c.InitStd):
		return errors.Errorf("decoder: init_std=%g, want a finite value > 0", c.InitStd)
	case c.DType != "float32" && c.DType != "float64":
		return errors.Errorf("decoder: dtype=%q, want \"float32\" or \"float64\"", c.DType)
	}
	for l := 0; l < c.NumLayers; l++ {
		if _, err := NewMixer(c, l); err != nil {
			return err
		}
	}
	return nil
}

// NumParams returns the number of trainable parameters, computed from the configuration:
// V·D (embedding) + L·(mixer + 2D norm gains + 3·D·F) + D (final norm) + V·D unless tied; with DropFFN each
// block has one norm gain and no FFN.
// Panics if the configuration is invalid.
func (c Config) NumParams() int {
	if err := c.Validate(); err != nil {
		panic(errors.WithMessage(err, "decoder.Config.NumParams"))
	}
	D, F, V := c.Width, c.FFNWidth(), c.VocabSize
	n := V*D + D
	for l := 0; l < c.NumLayers; l++ {
		m, _ := NewMixer(c, l)
		n += m.NumParams() + D
		if !c.DropFFN {
			n += D + 3*D*F
		}
	}
	if !c.TieEmbeddings {
		n += V * D
	}
	return n
}

// FLOPsPerToken returns the forward-pass floating-point operations per token of a sequence of T tokens,
// counting only matrix products (a multiply-add is 2 FLOPs): per layer the mixer's count plus 3·2·D·F for the
// FFN (unless DropFFN), then 2·D·V for the LM head. A training step (forward and backward) costs about 3× this.
// Panics if the configuration is invalid.
func FLOPsPerToken(cfg Config, T int) float64 {
	if err := cfg.Validate(); err != nil {
		panic(errors.WithMessage(err, "decoder.FLOPsPerToken"))
	}
	D, F, V := float64(cfg.Width), float64(cfg.FFNWidth()), float64(cfg.VocabSize)
	total := 2 * D * V
	for l := 0; l < cfg.NumLayers; l++ {
		m, _ := NewMixer(cfg, l)
		total += m.FLOPsPerToken(T)
		if !cfg.DropFFN {
			total += 6 * D * F
		}
	}
	return total
}
