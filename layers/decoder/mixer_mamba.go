package decoder

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/hook"
	"github.com/protolab/protolab/layers/mamba"
)

// MixerMamba is the Config.Mixer value for the Mamba-1 selective state-space mixer (layers/mamba).
const MixerMamba = "mamba"

// mambaMixer adapts layers/mamba to the Mixer interface. Its state is [convState, h].
type mambaMixer struct {
	cfg   mamba.Config
	width int
}

// newMambaMixer returns the Mamba mixer of block `layer` for a decoder of the given width and depth. Zero init_std
// and output_init_std of mc are filled as for attention: initStd (in_proj, x_proj) and initStd/√(2·numLayers)
// (out_proj). dt_proj, the biases, a_log and d_skip keep Mamba's own initialisation.
func newMambaMixer(mc mamba.Config, width, numLayers, layer int, initStd float64) (Mixer, error) {
	if mc.InitStd == 0 {
		mc.InitStd = initStd
	}
	if mc.OutputInitStd == 0 {
		mc.OutputInitStd = initStd / math.Sqrt(2*float64(numLayers))
	}
	if err := mc.Validate(width); err != nil {
		return nil, errors.WithMessagef(err, "decoder: mamba (layer %d)", layer)
	}
	return mambaMixer{cfg: mc, width: width}, nil
}

func (m mambaMixer) Forward(ctx *context.Context, x *Node) *Node {
	return hook.Emit(ctx.In(mamba.Scope), ProbeMixOut, mamba.Mixer(ctx, m.cfg, x))
}

// StateShapes ignores maxLen: the state has a fixed size.
func (m mambaMixer) StateShapes(batch, _ int, dtype dtypes.DType) []shapes.Shape {
	return mamba.StateShapes(m.cfg, m.width, batch, dtype)
}

// Step ignores pos: the recurrence needs no position.
func (m mambaMixer) Step(ctx *context.Context, x, _ *Node, state []*Node) (*Node, []*Node) {
	y, s := mamba.Step(ctx, m.cfg, x, state)
	return hook.Emit(ctx.In(mamba.Scope), ProbeMixOut, y), s
}

func (m mambaMixer) NumParams() int { return m.cfg.NumParams(m.width) }

func (m mambaMixer) FLOPsPerToken(T int) float64 { return m.cfg.FLOPsPerToken(m.width, T) }
