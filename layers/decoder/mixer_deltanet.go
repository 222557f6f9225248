package decoder

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/deltanet"
	"github.com/protolab/protolab/layers/hook"
)

// MixerDeltaNet is the Config.Mixer value for DeltaNet, linear attention with the delta rule (layers/deltanet).
const MixerDeltaNet = "deltanet"

// deltaNetMixer adapts layers/deltanet to the Mixer interface. Its state is [convState, S].
type deltaNetMixer struct {
	cfg   deltanet.Config
	width int
}

// newDeltaNetMixer returns the DeltaNet mixer of block `layer` for a decoder of the given width and depth. Zero
// init_std and output_init_std of mc are filled as for attention: initStd and initStd/√(2·numLayers).
func newDeltaNetMixer(mc deltanet.Config, width, numLayers, layer int, initStd float64) (Mixer, error) {
	if mc.InitStd == 0 {
		mc.InitStd = initStd
	}
	if mc.OutputInitStd == 0 {
		mc.OutputInitStd = initStd / math.Sqrt(2*float64(numLayers))
	}
	if err := mc.Validate(width); err != nil {
		return nil, errors.WithMessagef(err, "decoder: deltanet (layer %d)", layer)
	}
	return deltaNetMixer{cfg: mc, width: width}, nil
}

func (m deltaNetMixer) Forward(ctx *context.Context, x *Node) *Node {
	return hook.Emit(ctx.In(deltanet.Scope), ProbeMixOut, deltanet.Mixer(ctx, m.cfg, x))
}

// StateShapes ignores maxLen: the state has a fixed size.
func (m deltaNetMixer) StateShapes(batch, _ int, dtype dtypes.DType) []shapes.Shape {
	return deltanet.StateShapes(m.cfg, m.width, batch, dtype)
}

// Step ignores pos: the recurrence needs no position.
func (m deltaNetMixer) Step(ctx *context.Context, x, _ *Node, state []*Node) (*Node, []*Node) {
	y, s := deltanet.Step(ctx, m.cfg, x, state)
	return hook.Emit(ctx.In(deltanet.Scope), ProbeMixOut, y), s
}

func (m deltaNetMixer) NumParams() int { return m.cfg.NumParams(m.width) }

func (m deltaNetMixer) FLOPsPerToken(T int) float64 { return m.cfg.FLOPsPerToken(m.width, T) }
