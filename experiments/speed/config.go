// Package speed is the ProtoT throughput and decoding study (docs/spec/protot.md §7.2): one decoder per mixer
// (attention, ProtoT, DeltaNet, Mamba) trained at context lengths T with B·T fixed, and decoded one token at a time
// with a state (or KV cache) of each capacity, measured beside theory/cost's predictions at the machine's measured
// rates. Every configuration is timed as §7.2 says, untimed warm-up steps then the median of the timed ones, and
// keeps the spread of its repetitions (Spread: quartiles and extremes) for the tables, the charts' bands and the
// claims' bootstrap intervals. models/timing times each configuration and gives its predictions (timing.CostModel,
// timing.TrainBytes); this package chooses the configurations, keeps the rows and judges them. Claims turns a stored
// result into the scorecard's rows: the training slowdown against attention, training tokens/s and decoding time per
// token against the context (log-log slopes, with their rules fixed in claims.go), the fastest decoder and the
// decode crossover. `protolab run speed` runs both benchmarks (the presets' ModeBoth), `protolab bench
// throughput|decode` one of them; notebook 10 shows them (Notebook).
package speed

import (
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/deltanet"
	"github.com/protolab/protolab/layers/mamba"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/workbench/run"
)

// MixerAttentionChunked is the benchmark's name for the decoder's attention mixer computed in blocks
// (attention.kind=chunked, with the block_size of Config.Attention): a row of its own beside "attention", which the
// presets run in the full form (attention.kind=full). Decoding has one form (attention.Step), so this mixer has no
// decoding rows.
const MixerAttentionChunked = "attention_chunked"

// Values of Config.Mode.
const (
	ModeThroughput = "throughput" // training tokens/s and peak memory against the context
	ModeDecode     = "decode"     // milliseconds per generated token against the context
	ModeBoth       = "both"       // throughput, then decode: the study's protocol (the presets' mode)
)

// Config configures the throughput and decoding benchmarks of docs/spec/protot.md §7.2 (our protocol for the CPU):
// one decoder per mixer, trained at several context lengths T with B·T fixed, and decoded one token at a time with
// a state (or KV cache) sized for each context. Start from Tiny, Small, Paper or Quick.
type Config struct {
	// Mode is ModeBoth (the presets: both benchmarks), ModeThroughput (training tokens/s and peak memory against T)
	// or ModeDecode (time per generated token against the context).
	Mode     string   `json:"mode"`
	Mixers   []string `json:"mixers"`   // decoder mixers to compare (decoder.KnownMixers, MixerAttentionChunked)
	Contexts []int    `json:"contexts"` // context lengths T, ascending; the first is the reference of the ratios
	// DecodeContexts are the contexts of the decoding benchmark, ascending; empty means contexts. Decoding one token
	// costs far less than a training step at the same context, so it reaches longer ones.
	DecodeContexts []int `json:"decode_contexts,omitempty"`
	// TokenBudget is B·T, the tokens of one training step; B = TokenBudget/T (at least 1).
	TokenBudget  int    `json:"token_budget"`
	Width        int    `json:"width"`         // D
	NumLayers    int    `json:"num_layers"`    // L
	Vocab        int    `json:"vocab"`         // V
	Steps        int    `json:"steps"`         // timed training steps per configuration (spec §7.2: 10); > 0
	Warmup       int    `json:"warmup"`        // untimed steps first, the first compiles (spec §7.2: 3); ≥ 1
	DecodeTokens int    `json:"decode_tokens"` // timed decoding steps per configuration (spec §7.2: 10); > 0
	DType        string `json:"dtype"`         // "float32" or "float64"
	Seed         uint64 `json:"seed"`          // weights and token draws
	// MaxMemoryGB skips a training configuration whose estimated peak memory exceeds it (the reason is recorded),
	// and is the Go runtime's soft memory limit during the runs; > 0.
	MaxMemoryGB float64 `json:"max_memory_gb"`
	// MaxSeconds stops timing a configuration after the first timed step that ends past this many seconds since
	// the configuration started (compilation included); ≤ 0 means no limit.
	MaxSeconds float64          `json:"max_seconds"`
	Attention  attention.Config `json:"attention"` // the "attention" and "attention_chunked" mixers
	ProtoT     protot.Config    `json:"protot"`    // the "protot" mixer
	DeltaNet   deltanet.Config  `json:"deltanet"`  // the "deltanet" mixer
	Mamba      mamba.Config     `json:"mamba"`     // the "mamba" mixer
}

// Tiny takes seconds on a CPU: the tests and the notebook smoke run use it. Both benchmarks, two contexts, two
// timed steps.
func Tiny() Config {
	c := Small()
	c.Contexts, c.DecodeContexts = []int{16, 64}, nil
	c.TokenBudget = 128
	c.Width, c.NumLayers, c.Vocab = 32, 2, 64
	c.Attention.NumHeads, c.DeltaNet.NumHeads = 2, 2
	c.ProtoT.NumPrototypes, c.ProtoT.ChunkSize = 8, 16
	c.DeltaNet.ChunkSize = 8
	c.Steps, c.Warmup, c.DecodeTokens = 2, 1, 3
	c.MaxMemoryGB = 2
	return c
}

// Small is the study's protocol v2 (docs/PROTOCOL.md, "speed"; docs/spec/protot.md §7.2 on our CPU): both
// benchmarks, each configuration timed as the spec says, 3 untimed warm-up steps then 10 timed ones, reported as
// the median with its spread (quartiles and extremes). The decoder is D = 128, 4 layers, V = 4,096, 4 heads,
// float32, with each mixer; training at T ∈ {256, 1024, 4096, 8192} with 8,192 tokens per step (B = 32 … 1),
// decoding at T ∈ {256, …, 32768} (the paper's crossover is at 32k). ProtoT uses chunks of 16 tokens, faster on
// the pure-Go backend than the spec's 64 (layers/decoder's BenchmarkProtoTForwardBackward); the prefix mean is
// exact whatever the chunk. A configuration runs when its estimated peak memory fits in 10 GB (full attention at
// long contexts does not: its score tensors), and stops timing after 600 s. "attention" is the full form
// (attention.kind=full, as measured before the chunked form existed); MixerAttentionChunked runs the same decoder
// with attention.kind=chunked (blocks of attention.DefaultBlockSize) at every training context. Protocol v1 (D = 64,
// L = 2, V = 2,048, 4,096 tokens per step, decoding at the training contexts) is Small at commit 8706f7f.
//
// Budget: 13 training steps per (mixer, context), then the decoding steps and a compilation per decoding
// configuration. `protolab cost` estimates its compute; the result's provenance records the seconds each mode took.
func Small() Config {
	pt := protot.DefaultConfig()
	pt.ChunkSize = 16
	att := attention.DefaultConfig()
	att.RoPEBase = 10_000
	att.Kind = attention.KindFull // "attention" is the full form; MixerAttentionChunked the chunked one
	return Config{
		Mode:           ModeBoth,
		Mixers:         append(slices.Clone(decoder.KnownMixers), MixerAttentionChunked),
		Contexts:       []int{256, 1024, 4096, 8192},
		DecodeContexts: []int{256, 1024, 4096, 8192, 16384, 32768},
		TokenBudget:    8192,
		Width:          128,
		NumLayers:      4,
		Vocab:          4096,
		Steps:          10,
		Warmup:         3,
		DecodeTokens:   10,
		DType:          "float32",
		Seed:           1,
		MaxMemoryGB:    10,
		MaxSeconds:     600,
		Attention:      att,
		ProtoT:         pt,
		DeltaNet:       deltanet.DefaultConfig(),
		Mamba:          mamba.DefaultConfig(),
	}
}

// Paper is the paper's backbone (docs/spec/protot.md §3: D = 256, L = 6, V = 16,384) at the §7.2 contexts up to
// 32k with 32·256 tokens per step, the spec's ProtoT chunk of 64, 3 warm-ups and the median of 10 timed steps, and
// 128 decoded tokens per context; meant for a GPU with XLA.
func Paper() Config {
	c := Small()
	c.Contexts, c.DecodeContexts = []int{1024, 2048, 4096, 8192, 16384, 32768}, nil
	c.TokenBudget = 32 * 256
	c.Width, c.NumLayers, c.Vocab = 256, 6, 16_384
	c.ProtoT = protot.DefaultConfig()
	c.Attention = attention.DefaultConfig()
	c.Attention.Kind = attention.KindFull
	c.Steps, c.Warmup, c.DecodeTokens = 10, 3, 128
	c.MaxMemoryGB = 64
	c.MaxSeconds = 0
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// Quick is what a notebook computes at the Small preset when the protocol (Small) has not been run and stored: the
// same decoder and contexts with one warm-up and one timed training step per configuration (10 timed decoding
// steps), and at most 120 s of timing per configuration — a few minutes on 2 cores. Its ratios answer the same
// questions with more noise and no spread worth the name; `protolab run speed --preset small` runs the protocol.
func Quick() Config {
	c := Small()
	c.Steps, c.Warmup, c.DecodeTokens = 1, 1, 10
	c.MaxSeconds = 120
	return c
}

// ModelConfig returns the decoder of the benchmark with the given mixer, its decoding capacity set to the longest
// context. MixerAttentionChunked is the attention mixer with attention.kind=chunked.
func (c Config) ModelConfig(mixer string) decoder.Config {
	m := decoder.DefaultConfig()
	m.Mixer = mixer
	m.VocabSize, m.Width, m.NumLayers, m.DType = c.Vocab, c.Width, c.NumLayers, c.DType
	m.Attention, m.ProtoT, m.DeltaNet, m.Mamba = c.Attention, c.ProtoT, c.DeltaNet, c.Mamba
	if mixer == MixerAttentionChunked {
		m.Mixer, m.Attention.Kind = decoder.MixerAttention, attention.KindChunked
	}
	m.MaxLen = 1
	for _, T := range append(slices.Clone(c.Contexts), c.DecodeContexts...) {
		m.MaxLen = max(m.MaxLen, T)
	}
	return m
}

// decodeContexts returns the contexts of the decoding benchmark: decode_contexts, or contexts when it is empty.
func (c Config) decodeContexts() []int {
	if len(c.DecodeContexts) > 0 {
		return c.DecodeContexts
	}
	return c.Contexts
}

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	switch {
	case c.Mode != ModeThroughput && c.Mode != ModeDecode && c.Mode != ModeBoth:
		return errors.Errorf("mode=%q, want %q, %q or %q", c.Mode, ModeBoth, ModeThroughput, ModeDecode)
	case len(c.Mixers) == 0:
		return errors.New("mixers is empty")
	case len(c.Contexts) == 0:
		return errors.New("contexts is empty")
	case c.TokenBudget <= 0:
		return errors.Errorf("token_budget=%d, want > 0", c.TokenBudget)
	case c.Steps <= 0:
		return errors.Errorf("steps=%d, want > 0", c.Steps)
	case c.Warmup < 1:
		return errors.Errorf("warmup=%d, want ≥ 1 (the first step compiles)", c.Warmup)
	case c.DecodeTokens <= 0:
		return errors.Errorf("decode_tokens=%d, want > 0", c.DecodeTokens)
	case !(c.MaxMemoryGB > 0):
		return errors.Errorf("max_memory_gb=%g, want > 0", c.MaxMemoryGB)
	}
	for i, T := range c.Contexts {
		if T < 2 || (i > 0 && T <= c.Contexts[i-1]) {
			return errors.Errorf("contexts=%v, want ascending values ≥ 2", c.Contexts)
		}
	}
	for i, T := range c.DecodeContexts {
		if T < 2 || (i > 0 && T <= c.DecodeContexts[i-1]) {
			return errors.Errorf("decode_contexts=%v, want ascending values ≥ 2 (or empty: contexts)", c.DecodeContexts)
		}
	}
	seen := map[string]bool{}
	for _, m := range c.Mixers {
		if seen[m] {
			return errors.Errorf("mixers=%v lists %q twice", c.Mixers, m)
		}
		seen[m] = true
		if err := c.ModelConfig(m).Validate(); err != nil {
			return err
		}
	}
	return nil
}
