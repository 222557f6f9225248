package protot

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/pkg/errors"
)

// Scope is the name of the sub-scope Mixer and Step create their variables in.
const Scope = "protot"

// Variable names under Scope; they are checkpoint paths. Shapes and initialisation follow docs/spec/protot.md §2.2.
// Weight decay falls on value, output, read_query and conv, as in the official code; prototypes and the rank ≤ 1
// parameters are not decayed (NoDecay).
const (
	VarPrototypes = "prototypes"  // P [R, D]: N(0, 1)/√D entries, rows normalised to unit length
	VarValue      = "value"       // W_V [D_v, D]: U(±1/√D), or N(0, init_std²)
	VarOutput     = "output"      // W_U [D, D_v]: U(±1/√D_v), or N(0, output_init_std²)
	VarReadQuery  = "read_query"  // W_r [D, D]: U(±1/√D), or N(0, init_std²); absent in shared-routing layers
	VarDecayLogit = "decay_logit" // γ [R]: Config.DecayLogitInit (logit(DecayInit) by default)
	VarWriteTemp  = "write_temp"  // τ_w, scalar: WriteTempInit (SharedWriteTempInit in shared-routing layers)
	VarReadTemp   = "read_temp"   // τ_r, scalar: ReadTempInit; absent in shared-routing layers
	VarAlpha      = "alpha"       // α, scalar: AlphaInit
	VarConv       = "conv"        // [D_v, 1, K]: U(±1/√K); only in convolution layers
	// VarWriteMask and VarReadMask are the intervention masks [R] (float32, not trainable, initialised to 1);
	// set them with SetMasks.
	VarWriteMask = "write_mask"
	VarReadMask  = "read_mask"
)

// NoDecay returns the names of the trainable variables under Scope that must not be weight-decayed
// (docs/spec/protot.md §2.2, §2.5): the prototypes P, which are rank 2 so an optimizer must be told by name, and the
// rank ≤ 1 γ, τ_w, τ_r and α. decoder.Config.NoDecay collects it.
func NoDecay() []string {
	return []string{VarPrototypes, VarDecayLogit, VarWriteTemp, VarReadTemp, VarAlpha}
}

// constant returns an initializer filling a variable with value.
func constant(value float64) model.VariableInitializer {
	return func(g *Graph, shape shapes.Shape) *Node {
		return BroadcastToDims(Scalar(g, shape.DType, value), shape.Dimensions...)
	}
}

// constants initialises a vector variable with the given values.
func constants(values []float64) model.VariableInitializer {
	return func(g *Graph, shape shapes.Shape) *Node {
		if shape.Rank() != 1 || shape.Dim(0) != len(values) {
			panic(errors.Errorf("protot: initialising %s with %d values", shape, len(values)))
		}
		return ConvertDType(Const(g, values), shape.DType)
	}
}

// uniform returns scope with the initializer U(±1/√fanIn), PyTorch's default for Linear and Conv1d weights.
func uniform(scope *model.Scope, fanIn int) *model.Scope {
	b := 1 / math.Sqrt(float64(fanIn))
	return scope.WithInitializer(initializer.RandomUniformFn(scope, -b, b))
}

// linear returns scope with the initializer of a projection with fan-in fanIn: N(0, std²) when std > 0, else
// uniform(fanIn).
func linear(scope *model.Scope, std float64, fanIn int) *model.Scope {
	if std > 0 {
		return scope.WithInitializer(initializer.RandomNormalFn(scope, std))
	}
	return uniform(scope, fanIn)
}

// prototypeInit draws N(0, 1)/√D entries and scales each row to unit length (docs/spec/protot.md §2.2).
func prototypeInit(scope *model.Scope) model.VariableInitializer {
	return func(g *Graph, shape shapes.Shape) *Node {
		p := DivScalar(scope.RandomNormal(g, shape), math.Sqrt(float64(shape.Dim(1))))
		norm := Sqrt(ReduceAndKeep(Square(p), ReduceSum, 1))
		return Div(p, MaxScalar(norm, 1e-6))
	}
}

// variables returns layer `layer`'s parameters as nodes of g, creating the variables under scope.At(Scope) when
// needed, and the mask variables (created unchecked so that SetMasks may have made them first, and kept
// non-trainable even when loaded from a checkpoint).
func variables(scope *model.Scope, cfg Config, layer, D int, dtype dtypes.DType, g *Graph) Params {
	scope = scope.At(Scope)
	R, Dv, K := cfg.NumPrototypes, cfg.Dv(D), cfg.ConvKernel
	value := func(c *model.Scope, name string, dims ...int) *Node {
		return c.VariableWithShape(name, shapes.Make(dtype, dims...)).NodeValue(g)
	}
	outStd := cfg.OutputInitStd
	if outStd == 0 {
		outStd = cfg.InitStd
	}
	p := Params{
		Prototypes: value(scope.WithInitializer(prototypeInit(scope)), VarPrototypes, R, D),
		Value:      value(linear(scope, cfg.InitStd, D), VarValue, Dv, D),
		Output:     value(linear(scope, outStd, Dv), VarOutput, D, Dv),
		DecayLogit: value(scope.WithInitializer(constants(cfg.DecayLogitInit())), VarDecayLogit, R),
		Alpha:      value(scope.WithInitializer(constant(cfg.AlphaInit)), VarAlpha),
	}
	tauW := cfg.WriteTempInit
	if cfg.SharedRouting(layer) {
		tauW = cfg.SharedWriteTempInit
	} else {
		p.ReadQuery = value(linear(scope, cfg.InitStd, D), VarReadQuery, D, D)
		p.ReadTemp = value(scope.WithInitializer(constant(cfg.ReadTempInit)), VarReadTemp)
	}
	p.WriteTemp = value(scope.WithInitializer(constant(tauW)), VarWriteTemp)
	if cfg.HasConv(layer) {
		p.Conv = value(uniform(scope, K), VarConv, Dv, 1, K)
	}
	masks := scope.WithInitializer(initializer.One)
	for _, m := range []struct {
		name string
		dst  **Node
	}{{VarWriteMask, &p.WriteMask}, {VarReadMask, &p.ReadMask}} {
		v := masks.VariableWithShape(m.name, shapes.Make(dtypes.Float32, R)).SetTrainable(false)
		*m.dst = v.NodeValue(g)
	}
	return p
}

// Mixer is the ProtoT mixer layer of block `layer` (0-based): it creates the variables under scope.At("protot")
// (names, shapes and initialisation in the Var constants) and returns Mix(x, nil, …): x [B, T, D] → y [B, T, D]
// and the trace. The write and read masks (SetMasks) are applied. Panics if cfg.Validate(D) fails or x is not
// rank 3.
func Mixer(scope *model.Scope, cfg Config, layer int, x *Node) (*Node, Trace) {
	if x.Rank() != 3 {
		panic(errors.Errorf("protot.Mixer: x.shape=%s, want [B, T, D]", x.Shape()))
	}
	if err := cfg.Validate(x.Shape().Dim(2)); err != nil {
		panic(errors.WithMessage(err, "protot.Mixer"))
	}
	p := variables(scope, cfg, layer, x.Shape().Dim(2), x.DType(), x.Graph())
	return Mix(x, nil, p, layer, cfg)
}

// Step is Mixer for one token at position pos, in the recurrent form: x [B, 1, D], pos an integer scalar, state
// as StateShapes (zeros before position 0) → y [B, 1, D], the new state and the trace (T = 1). After steps 0 … t
// it returns what Mixer returns at t. Uses the variables Mixer uses, creating them if needed. Panics on bad shapes
// or an invalid cfg.
func Step(scope *model.Scope, cfg Config, layer int, x, pos *Node, state []*Node) (*Node, []*Node, Trace) {
	if x.Rank() != 3 {
		panic(errors.Errorf("protot.Step: x.shape=%s, want [B, 1, D]", x.Shape()))
	}
	if err := cfg.Validate(x.Shape().Dim(2)); err != nil {
		panic(errors.WithMessage(err, "protot.Step"))
	}
	p := variables(scope, cfg, layer, x.Shape().Dim(2), x.DType(), x.Graph())
	return MixStep(x, pos, p, layer, cfg, state)
}
