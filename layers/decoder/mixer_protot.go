package decoder

import (
	"maps"
	"slices"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/hook"
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
// error. mc's init_std and output_init_std are already set by the decoder's policy (NewMixer); the prototypes, γ,
// the temperatures, α and the convolution keep protot's own initialisation.
func newProtoTMixer(mc protot.Config, width, layer int) (Mixer, error) {
	if err := mc.Validate(width); err != nil {
		return nil, errors.WithMessagef(err, "decoder: protot (layer %d)", layer)
	}
	return protoTMixer{cfg: mc, width: width, layer: layer}, nil
}

func (m protoTMixer) Forward(scope *model.Scope, x *Node) *Node {
	y, tr := protot.Mixer(scope, m.cfg, m.layer, x)
	return emitProtoT(scope, y, tr)
}

// emitProtoT reports ProtoT's trace to layers/hook under "protot." (protot.Trace.Named: observe only) and
// returns the mixer output after its probe "protot.mix_out", which may be patched.
func emitProtoT(scope *model.Scope, y *Node, tr protot.Trace) *Node {
	if !hook.Active(y.Graph()) {
		return y
	}
	c := scope.At(protot.Scope)
	named := tr.Named()
	for _, name := range slices.SortedFunc(maps.Keys(named), byProtoTOrder) {
		if name != protot.ProbeMixOut {
			hook.Observe(c, name, named[name])
		}
	}
	return hook.Emit(c, protot.ProbeMixOut, y)
}

// protoTProbeOrder is the order emitProtoT reports the trace in, the order of the computation, so that probe
// caches list them that way; names Trace.Named may add later follow, sorted.
var protoTProbeOrder = []string{protot.ProbeWriteLogits, protot.ProbePi, protot.ProbeReadLogits, protot.ProbeRho,
	protot.ProbeV, protot.ProbeVConv, protot.ProbeNum, protot.ProbeDen, protot.ProbeM, protot.ProbeMixPreAlpha}

// byProtoTOrder compares probe names by protoTProbeOrder, then alphabetically.
func byProtoTOrder(a, b string) int {
	rank := func(n string) int {
		if i := slices.Index(protoTProbeOrder, n); i >= 0 {
			return i
		}
		return len(protoTProbeOrder)
	}
	if c := rank(a) - rank(b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func (m protoTMixer) StateShapes(batch, _ int, dtype dtypes.DType) []shapes.Shape {
	return protot.StateShapes(m.cfg, m.width, m.layer, batch, dtype)
}

func (m protoTMixer) Step(scope *model.Scope, x, pos *Node, state []*Node) (*Node, []*Node) {
	y, s, tr := protot.Step(scope, m.cfg, m.layer, x, pos, state)
	return emitProtoT(scope, y, tr), s
}

func (m protoTMixer) NumParams() int { return m.cfg.NumParams(m.width, m.layer) }

func (m protoTMixer) FLOPsPerToken(T int) float64 { return m.cfg.FLOPsPerToken(m.width, m.layer, T) }
