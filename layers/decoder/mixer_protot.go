package decoder

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/protot"
)

// MixerProtoT is the Config.Mixer value for the Prototype Transformer mixer (layers/protot).
const MixerProtoT = "protot"

// protoTMixer adapts layers/protot to the Mixer interface for block `layer`: the layer index selects ProtoT's
// shared routing (layer 0) and value convolution (layers 0 and 1). Its state is protot.StateShapes: the memory
// [B, R, D_v+1] and, in convolution layers, the last K−1 values [B, K−1, D_v]; neither grows with maxLen.
type protoTMixer struct {
	cfg          protot.Config
	width, layer int
}

// newProtoTMixer returns the ProtoT mixer of block `layer` for a model of the given width, or the configuration's
// error. The mixer's initialisation is protot's own (PyTorch's defaults, as in the official code), so the
// decoder's init_std does not reach it.
func newProtoTMixer(mc protot.Config, width, layer int) (Mixer, error) {
	if err := mc.Validate(width); err != nil {
		return nil, errors.WithMessagef(err, "decoder: protot (layer %d)", layer)
	}
	return protoTMixer{cfg: mc, width: width, layer: layer}, nil
}

func (m protoTMixer) Forward(ctx *context.Context, x *Node) *Node {
	y, _ := protot.Mixer(ctx, m.cfg, m.layer, x)
	return y
}

func (m protoTMixer) StateShapes(batch, _ int, dtype dtypes.DType) []shapes.Shape {
	return protot.StateShapes(m.cfg, m.width, m.layer, batch, dtype)
}

func (m protoTMixer) Step(ctx *context.Context, x, pos *Node, state []*Node) (*Node, []*Node) {
	y, s, _ := protot.Step(ctx, m.cfg, m.layer, x, pos, state)
	return y, s
}

func (m protoTMixer) NumParams() int { return m.cfg.NumParams(m.width, m.layer) }

func (m protoTMixer) FLOPsPerToken(T int) float64 { return m.cfg.FLOPsPerToken(m.width, m.layer, T) }
