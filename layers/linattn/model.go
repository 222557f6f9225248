package linattn

import (
	"math"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
)

// Model creates (or reuses) the variables of the model cfg selects under scope.At(Scope) and runs it on x [B|1, N, D]
// (batch 1: one x shared by all contexts, see ForwardA), y [B, N]; θ̂ has dimension D. patch may be nil. Panics if
// cfg is invalid or on bad shapes.
func Model(scope *model.Scope, cfg Config, x, y *Node, patch *Patch) Output {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	B, _, D, _ := checkTokens("Model", x, y)
	scope = scope.At(Scope)
	M := cfg.Measurements
	var out Output
	switch cfg.Kind {
	case KindA:
		keys := make([]KeyWeights, M)
		for l := 1; l <= M; l++ {
			kc := scope.At("%s", LayerScope(l)).At(ScopeKey)
			fanIn := D + l - 1
			w := KeyWeights{
				Wx: weight(kc, cfg, VarWX, fanIn, x, D, cfg.Hidden),
				B1: bias(kc, VarB1, x, cfg.Hidden),
				W2: weight(kc, cfg, VarW2, cfg.Hidden, x, cfg.Hidden),
				B2: bias(kc, VarB2, x),
			}
			if l > 1 {
				w.Wp = weight(kc, cfg, VarWP, fanIn, x, l-1, cfg.Hidden)
			}
			keys[l-1] = w
		}
		out = ForwardA(x, y, keys, readoutWeights(scope, cfg, x, D), cfg.Activation, cfg.KeyGainOrDefault(), cfg.Gain(),
			patch)
	case KindB:
		hc := scope.At(ScopeHeads)
		heads := HeadWeights{
			W1: weight(hc, cfg, VarW1, D, x, M, D, cfg.Hidden),
			B1: bias(hc, VarB1, x, M, cfg.Hidden),
			W2: weight(hc, cfg, VarW2, cfg.Hidden, x, M, cfg.Hidden),
			B2: bias(hc, VarB2, x, M),
		}
		out = ForwardB(x, y, heads, readoutWeights(scope, cfg, x, D), cfg.Activation, cfg.Gain(), patch)
	case KindAPrime:
		q1 := weight(scope.At("%s", LayerScope(1)).At(ScopeQuery), cfg, VarQ, D, x, D)
		queries := make([]MLPWeights, M-1)
		for l := 2; l <= M; l++ {
			qc := scope.At("%s", LayerScope(l)).At(ScopeQuery)
			queries[l-2] = MLPWeights{
				W1: weight(qc, cfg, VarW1, l-1, x, l-1, cfg.Hidden),
				B1: bias(qc, VarB1, x, cfg.Hidden),
				W2: weight(qc, cfg, VarW2, cfg.Hidden, x, cfg.Hidden, D),
				B2: bias(qc, VarB2, x, D),
			}
		}
		out = ForwardAPrime(x, y, q1, queries, readoutWeights(scope, cfg, x, D), cfg.Activation, cfg.Gain(), patch)
	case KindC:
		wk := weight(scope.At(ScopeKey), cfg, VarW, D, x, M, D)
		wo := weight(scope.At(ScopeReadout), cfg, VarW, M, x, D, M)
		out = ForwardC(x, y, wk, wo, patch)
	}
	out.Theta.AssertDims(B, D)
	out.Workspace.AssertDims(B, M)
	return out
}

// readoutWeights creates the readout MLP R^M → R^D of models A and B.
func readoutWeights(scope *model.Scope, cfg Config, like *Node, D int) MLPWeights {
	rc := scope.At(ScopeReadout)
	M, H := cfg.Measurements, cfg.OutHidden()
	return MLPWeights{
		W1: weight(rc, cfg, VarW1, M, like, M, H),
		B1: bias(rc, VarB1, like, H),
		W2: weight(rc, cfg, VarW2, H, like, H, D),
		B2: bias(rc, VarB2, like, D),
	}
}

// weight returns the variable name of the given dims in like's dtype, initialised from N(0, InitScale/fanIn).
func weight(scope *model.Scope, cfg Config, name string, fanIn int, like *Node, dims ...int) *Node {
	std := math.Sqrt(cfg.InitScale / float64(fanIn))
	v := scope.WithInitializer(initializer.RandomNormalFn(scope, std)).
		VariableWithShape(name, shapes.Make(like.DType(), dims...))
	return v.NodeValue(like.Graph())
}

// bias returns the zero-initialised variable name of the given dims in like's dtype.
func bias(scope *model.Scope, name string, like *Node, dims ...int) *Node {
	v := scope.WithInitializer(initializer.Zero).VariableWithShape(name, shapes.Make(like.DType(), dims...))
	return v.NodeValue(like.Graph())
}
