package decoder

import (
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/hook"
)

// Mixer is the sequence mixer of one decoder block: the only part of a block that moves information between
// positions. Implementations open their own sub-scope (named after the mixer, e.g. "attention") under the
// block's context, and must be causal.
type Mixer interface {
	// Forward maps the normalised residual stream x [B, T, D] to the mixer output [B, T, D] for a whole sequence.
	Forward(scope *model.Scope, x *Node) *Node
	// StateShapes returns the shapes of the decoding state of one layer for a batch and a capacity of maxLen
	// positions (a KV cache for attention, a fixed-size state for recurrent mixers).
	StateShapes(batch, maxLen int, dtype dtypes.DType) []shapes.Shape
	// Step processes the token at position pos (an integer scalar): x [B, 1, D] and the state (shapes from
	// StateShapes) → the output [B, 1, D], equal to Forward's output at pos after steps 0…pos, and the new state.
	Step(scope *model.Scope, x, pos *Node, state []*Node) (*Node, []*Node)
	// NumParams returns the number of trainable parameters the mixer creates.
	NumParams() int
	// FLOPsPerToken returns the forward matrix-product FLOPs per token for a sequence of T tokens.
	FLOPsPerToken(T int) float64
}

// ProbeMixOut is the probe name (layers/hook) of every mixer's output [B, T, D], under the mixer's scope
// ("block_01.attention.mix_out", "block_01.protot.mix_out"); patchable.
const ProbeMixOut = "mix_out"

// NewMixer returns the mixer of block `layer` (0-based; mixers may differ by layer) selected by cfg.Mixer, with
// the initialisation of cfg.Init: its configuration's init_std and output_init_std are set to
// cfg.ProjectionStds(). It returns an error naming the known mixers when cfg.Mixer is unknown, an error when the
// mixer's configuration sets init_std or output_init_std itself (the policy sets them), or the mixer's
// configuration error.
func NewMixer(cfg Config, layer int) (Mixer, error) {
	switch cfg.Mixer {
	case MixerAttention:
		ac := cfg.Attention
		if err := setInit(cfg, "attention", &ac.InitStd, &ac.OutputInitStd); err != nil {
			return nil, err
		}
		if err := ac.Validate(cfg.Width); err != nil {
			return nil, errors.WithMessage(err, "decoder") // "decoder: attention: <field>=…"
		}
		return attentionMixer{cfg: ac, width: cfg.Width}, nil
	case MixerProtoT:
		pc := cfg.ProtoT
		if err := setInit(cfg, "protot", &pc.InitStd, &pc.OutputInitStd); err != nil {
			return nil, err
		}
		return newProtoTMixer(pc, cfg.Width, layer)
	case MixerDeltaNet:
		return newRecurrentMixer(deltaNetLayer, cfg.DeltaNet, cfg, layer)
	case MixerMamba:
		return newRecurrentMixer(mambaLayer, cfg.Mamba, cfg, layer)
	}
	return nil, errors.Errorf("decoder: mixer=%q (layer %d) is unknown; known mixers: %s",
		cfg.Mixer, layer, strings.Join(KnownMixers, ", "))
}

// setInit sets a mixer configuration's init_std and output_init_std (key is the configuration's JSON key) to
// cfg.ProjectionStds(), so that one policy initialises every mixer. It returns an error naming the key when the
// configuration already sets either: a decoder's mixers are initialised by its policy only.
func setInit(cfg Config, key string, initStd, outputInitStd *float64) error {
	if *initStd != 0 || *outputInitStd != 0 {
		return errors.Errorf("decoder: %s.init_std=%g, %s.output_init_std=%g: the decoder's init policy sets them; "+
			"leave both 0 and choose init (%q or %q) and init_std instead", key, *initStd, key, *outputInitStd,
			InitPyTorch, InitGPT2)
	}
	*initStd, *outputInitStd = cfg.ProjectionStds()
	return nil
}

// attentionMixer adapts layers/attention to the Mixer interface. Its state is [kCache, vCache].
type attentionMixer struct {
	cfg   attention.Config
	width int
}

func (m attentionMixer) Forward(scope *model.Scope, x *Node) *Node {
	return hook.Emit(scope.At(attention.Scope), ProbeMixOut, attention.Mixer(scope, m.cfg, x))
}

func (m attentionMixer) StateShapes(batch, maxLen int, dtype dtypes.DType) []shapes.Shape {
	return attention.CacheShapes(m.cfg, m.width, batch, maxLen, dtype)
}

func (m attentionMixer) Step(scope *model.Scope, x, pos *Node, state []*Node) (*Node, []*Node) {
	if len(state) != 2 {
		panic(errors.Errorf("decoder: attention mixer state has %d tensors, want 2 (key and value caches)", len(state)))
	}
	y, k, v := attention.Step(scope, m.cfg, x, pos, state[0], state[1])
	return hook.Emit(scope.At(attention.Scope), ProbeMixOut, y), []*Node{k, v}
}

func (m attentionMixer) NumParams() int { return m.cfg.NumParams(m.width) }

// FLOPsPerToken counts the q, k, v and o projections, 2·D·(H+2H_kv)·D_h + 2·H·D_h·D, and the scores and the
// weighted sum, 2·2·S·H·D_h for S keys per query: in the full form S = T (the whole T×T score matrix is computed,
// masked entries included); in the chunked form (attention.Config.Chunked) S is the mean over queries of the end
// of the query's block, the key blocks at or below the diagonal.
func (m attentionMixer) FLOPsPerToken(T int) float64 {
	D, H, Hkv, Dh := float64(m.width), float64(m.cfg.NumHeads), float64(m.cfg.KVHeads()), float64(m.cfg.HeadSize(m.width))
	keys := float64(T)
	if m.cfg.Chunked(T) {
		C, sum := m.cfg.Block(), 0
		for t := 0; t < T; t++ {
			sum += min((t/C+1)*C, T) // the end of t's block
		}
		keys = float64(sum) / float64(T)
	}
	return 2*D*(H+2*Hkv)*Dh + 2*H*Dh*D + 4*keys*H*Dh
}
