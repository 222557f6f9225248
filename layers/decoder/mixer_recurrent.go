package decoder

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/deltanet"
	"github.com/protolab/protolab/layers/hook"
	"github.com/protolab/protolab/layers/mamba"
)

// This file adapts the fixed-state recurrent layers (layers/deltanet, layers/mamba) to the Mixer interface with one
// generic type: the layers differ only in their functions and configuration type.

// MixerDeltaNet is the Config.Mixer value for DeltaNet, linear attention with the delta rule (layers/deltanet).
const MixerDeltaNet = "deltanet"

// MixerMamba is the Config.Mixer value for the Mamba-1 selective state-space mixer (layers/mamba).
const MixerMamba = "mamba"

// recurrentConfig is what the adapter needs of a recurrent layer's configuration.
type recurrentConfig interface {
	Validate(width int) error
	NumParams(width int) int
	FLOPsPerToken(width, T int) float64
}

// recurrentLayer holds a recurrent layer package's entry points. Its state has a fixed size, so StateShapes
// ignores maxLen, and the recurrence needs no position, so Step ignores pos.
type recurrentLayer[C recurrentConfig] struct {
	name        string // the Config.Mixer value, used in error messages
	scope       string // the layer's sub-scope; ProbeMixOut is emitted under it
	mixer       func(scope *model.Scope, cfg C, x *Node) *Node
	step        func(scope *model.Scope, cfg C, x *Node, state []*Node) (*Node, []*Node)
	stateShapes func(cfg C, width, batch int, dtype dtypes.DType) []shapes.Shape
	// initStds returns the addresses of cfg's init_std and output_init_std, which the adapter sets from the
	// decoder's init policy (setInit).
	initStds func(cfg *C) (initStd, outputInitStd *float64)
}

// deltaNetLayer is layers/deltanet. Its state is [convState, S].
var deltaNetLayer = recurrentLayer[deltanet.Config]{
	name: MixerDeltaNet, scope: deltanet.Scope,
	mixer: deltanet.Mixer, step: deltanet.Step, stateShapes: deltanet.StateShapes,
	initStds: func(c *deltanet.Config) (*float64, *float64) { return &c.InitStd, &c.OutputInitStd },
}

// mambaLayer is layers/mamba. Its state is [convState, h]. The policy sets init_std (in_proj, x_proj) and
// output_init_std (out_proj) only; dt_proj, the convolution, dt_bias, a_log and d_skip keep Mamba's own
// initialisation.
var mambaLayer = recurrentLayer[mamba.Config]{
	name: MixerMamba, scope: mamba.Scope,
	mixer: mamba.Mixer, step: mamba.Step, stateShapes: mamba.StateShapes,
	initStds: func(c *mamba.Config) (*float64, *float64) { return &c.InitStd, &c.OutputInitStd },
}

// recurrentMixer adapts a recurrentLayer with its configuration to the Mixer interface.
type recurrentMixer[C recurrentConfig] struct {
	layer recurrentLayer[C]
	cfg   C
	width int
}

// newRecurrentMixer returns the mixer of block `layer` of the decoder cfg, with the layer configuration mc, whose
// init_std and output_init_std the decoder's policy sets (setInit). It returns setInit's error or mc's validation
// error, prefixed "decoder: <mixer> (layer <l>)".
func newRecurrentMixer[C recurrentConfig](l recurrentLayer[C], mc C, cfg Config, layer int) (Mixer, error) {
	initStd, outputInitStd := l.initStds(&mc)
	if err := setInit(cfg, l.name, initStd, outputInitStd); err != nil {
		return nil, err
	}
	if err := mc.Validate(cfg.Width); err != nil {
		return nil, errors.WithMessagef(err, "decoder: %s (layer %d)", l.name, layer)
	}
	return recurrentMixer[C]{layer: l, cfg: mc, width: cfg.Width}, nil
}

func (m recurrentMixer[C]) Forward(scope *model.Scope, x *Node) *Node {
	return hook.Emit(scope.At("%s", m.layer.scope), ProbeMixOut, m.layer.mixer(scope, m.cfg, x))
}

// StateShapes ignores maxLen: the state has a fixed size.
func (m recurrentMixer[C]) StateShapes(batch, _ int, dtype dtypes.DType) []shapes.Shape {
	return m.layer.stateShapes(m.cfg, m.width, batch, dtype)
}

// Step ignores pos: the recurrence needs no position.
func (m recurrentMixer[C]) Step(scope *model.Scope, x, _ *Node, state []*Node) (*Node, []*Node) {
	y, s := m.layer.step(scope, m.cfg, x, state)
	return hook.Emit(scope.At("%s", m.layer.scope), ProbeMixOut, y), s
}

func (m recurrentMixer[C]) NumParams() int { return m.cfg.NumParams(m.width) }

func (m recurrentMixer[C]) FLOPsPerToken(T int) float64 { return m.cfg.FLOPsPerToken(m.width, T) }
