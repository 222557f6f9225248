package deltanet

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
const Scope = "deltanet"

// Variable names under Scope (checkpoint and probe names; shapes with d = d_k = d_v, K = ConvSize). Projections are
// applied on the right (x·W); within a projection's output, head h occupies columns h·d … (h+1)·d−1.
const (
	VarQuery     = "q_proj"    // [D, H·d]
	VarKey       = "k_proj"    // [D, H·d]
	VarValue     = "v_proj"    // [D, H·d]
	VarQueryConv = "q_conv"    // [H·d, K]
	VarKeyConv   = "k_conv"    // [H·d, K]
	VarValueConv = "v_conv"    // [H·d, K]
	VarBeta      = "beta_proj" // [D, H]
	VarOutNorm   = "out_norm"  // [d]; no weight decay (NoDecay)
	VarOutput    = "out_proj"  // [H·d, D]
)

// NoDecay returns the names of the variables under Scope that must not be weight-decayed: the output norm's gain
// (docs/spec/protot.md §2.5: norm scales). decoder.Config.NoDecay collects it.
func NoDecay() []string { return []string{VarOutNorm} }

// withInit returns scope with N(0, std²) when std > 0, else PyTorch's U(±bound).
func withInit(scope *model.Scope, std, bound float64) *model.Scope {
	if std > 0 {
		return scope.WithInitializer(initializer.RandomNormalFn(scope, std))
	}
	return scope.WithInitializer(initializer.RandomUniformFn(scope, -bound, bound))
}

// weights returns the layer's parameters in graph g, creating the variables under scope.At(Scope) on first use:
// projections from cfg.InitStd / cfg.OutputInitStd (PyTorch's U(±1/√fan_in) when 0), convolution kernels
// U(±1/√K) (PyTorch's Conv1d default), output-norm gain 1.
func weights(scope *model.Scope, g *Graph, cfg Config, D int, dtype dtypes.DType) Weights {
	scope = scope.At(Scope)
	H, d, K := cfg.NumHeads, cfg.HeadSize(D), cfg.ConvSize
	in := withInit(scope, cfg.InitStd, 1/math.Sqrt(float64(D)))
	outStd := cfg.OutputInitStd
	if outStd == 0 {
		outStd = cfg.InitStd
	}
	out := withInit(scope, outStd, 1/math.Sqrt(float64(H*d)))
	conv := withInit(scope, 0, 1/math.Sqrt(float64(K)))
	one := scope.WithInitializer(initializer.One)
	v := func(c *model.Scope, name string, dims ...int) *Node {
		return c.VariableWithShape(name, shapes.Make(dtype, dims...)).NodeValue(g)
	}
	return Weights{
		Query: v(in, VarQuery, D, H*d), Key: v(in, VarKey, D, H*d), Value: v(in, VarValue, D, H*d),
		QueryConv: v(conv, VarQueryConv, H*d, K), KeyConv: v(conv, VarKeyConv, H*d, K),
		ValueConv: v(conv, VarValueConv, H*d, K),
		Beta:      v(in, VarBeta, D, H),
		OutNorm:   v(one, VarOutNorm, d),
		Output:    v(out, VarOutput, H*d, D),
	}
}

// Mixer is the DeltaNet layer: it creates the variables (names and shapes in doc.go) under scope.At("deltanet") and
// returns Mix(x, …): x [B, T, D] → [B, T, D], causal. Panics if cfg.Validate(D) fails or x is not rank 3.
func Mixer(scope *model.Scope, cfg Config, x *Node) *Node {
	checkInput("Mixer", cfg, x)
	return Mix(x, weights(scope, x.Graph(), cfg, x.Shape().Dim(2), x.DType()), cfg)
}

// Step runs Mixer for one token: x [B, 1, D] and state = [convState, S] (StateShapes; zeros before the first
// token) → y [B, 1, D] and the new state. The recurrence needs no position. Uses the variables Mixer uses,
// creating them if needed. Panics on bad shapes or an invalid cfg.
func Step(scope *model.Scope, cfg Config, x *Node, state []*Node) (*Node, []*Node) {
	checkInput("Step", cfg, x)
	if len(state) != 2 {
		panic(errors.Errorf("deltanet.Step: %d state tensors, want 2 (conv state and S)", len(state)))
	}
	w := weights(scope, x.Graph(), cfg, x.Shape().Dim(2), x.DType())
	y, conv, S := MixStep(x, w, cfg, state[0], state[1])
	return y, []*Node{conv, S}
}
