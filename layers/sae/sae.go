package sae

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/pkg/errors"
)

// Scope and variable names (checkpoint paths, doc.go).
const (
	Scope   = "sae"
	VarWEnc = "w_enc" // [D, F]
	VarBEnc = "b_enc" // [F]
	VarWDec = "w_dec" // [F, D], rows normalised by Dictionary
	VarBDec = "b_dec" // [D]
	VarL1   = "l1"    // [] λ, not trainable ("relu_l1")
)

// Params are the SAE's weights as graph nodes.
type Params struct {
	WEnc *Node // [D, F]
	BEnc *Node // [F]
	WDec *Node // [F, D]: raw decoder rows (equation 1 normalises them)
	BDec *Node // [D]: tied bias, subtracted before encoding and added after decoding
}

// Terms are the SAE's outputs and loss terms for a batch (equations 4–6); scalars unless stated.
type Terms struct {
	Loss           *Node // L: MSE + λ·L1 ("relu_l1") or MSE ("topk")
	MSE            *Node // mean squared reconstruction error per element
	L1             *Node // mean over inputs of Σ_j f_j
	L0             *Node // mean over inputs of the number of active features
	FVU            *Node // fraction of variance unexplained
	Lambda         *Node // λ used in Loss (0 for "topk")
	Features       *Node // f [N, F]
	Reconstruction *Node // x̂ [N, D]
}

// flatten returns x [..., D] as [N, D]; it panics unless the last axis is cfg.Width.
func flatten(caller string, x *Node, cfg Config) *Node {
	if x.Rank() < 2 || x.Shape().Dim(-1) != cfg.Width || !x.DType().IsFloat() {
		panic(errors.Errorf("sae.%s: x.shape=%s, want [..., D=%d] floats", caller, x.Shape(), cfg.Width))
	}
	return Reshape(x, -1, cfg.Width)
}

// checkParams panics unless p matches cfg and dtype.
func checkParams(caller string, p Params, cfg Config, dt dtypes.DType) {
	D, F := cfg.Width, cfg.NumFeatures()
	ok := p.WEnc != nil && p.BEnc != nil && p.WDec != nil && p.BDec != nil
	for i, want := range [][]int{{D, F}, {F}, {F, D}, {D}} {
		if !ok {
			break
		}
		n := []*Node{p.WEnc, p.BEnc, p.WDec, p.BDec}[i]
		ok = n.DType() == dt && n.Shape().Equal(shapes.Make(dt, want...))
	}
	if !ok {
		panic(errors.Errorf("sae.%s: params must be W_enc [D, F], b_enc [F], W_dec [F, D], b_dec [D] of %s with D=%d, F=%d",
			caller, dt, D, F))
	}
}

// Dictionary returns the unit dictionary directions d_j = w_j / sqrt(‖w_j‖² + ε) (equation 1): wDec [F, D] →
// [F, D].
func Dictionary(wDec *Node) *Node {
	return Div(wDec, Sqrt(AddScalar(ReduceAndKeep(Square(wDec), ReduceSum, -1), Eps)))
}

// TopKByArgMax returns the k largest entries of each row of a [N, F] as a boolean [N, F] with exactly k true per row
// (ties go to the lower index; k rounds of ArgMax under stop-gradient). Panics unless 1 ≤ k ≤ F.
//
// gomlx v0.28's graph.TopKMask gives the same mask by sorting every row (SortFunc with a comparator closure), which
// the pure-Go backend runs far slower for the small k of an SAE: BenchmarkTopKMask times both.
func TopKByArgMax(a *Node, k int) *Node {
	if a.Rank() != 2 || k < 1 || k > a.Shape().Dim(1) {
		panic(errors.Errorf("sae.TopKByArgMax: a.shape=%s, k=%d: want [N, F] and 1 ≤ k ≤ F", a.Shape(), k))
	}
	g, N, F := a.Graph(), a.Shape().Dim(0), a.Shape().Dim(1)
	negInf := Infinity(g, a.DType(), -1)
	columns := Iota(g, shapes.Make(dtypes.Int32, N, F), 1)
	work := StopGradient(a)
	for range k {
		pick := ArgMax(work, -1, dtypes.Int32) // [N]: the first maximum
		work = Where(Equal(columns, InsertAxes(pick, -1)), negInf, work)
	}
	return Equal(work, negInf) // a is finite, so exactly the picks
}

// Encode returns the feature activations f (equations 2–3): x [..., D] → [N, F] with N the product of the leading
// axes. Panics on bad shapes or an invalid cfg.
func Encode(x *Node, p Params, cfg Config) *Node {
	mustValidate("Encode", cfg)
	x = flatten("Encode", x, cfg)
	checkParams("Encode", p, cfg, x.DType())
	a := Add(MatMul(Sub(x, InsertAxes(p.BDec, 0)), p.WEnc), InsertAxes(p.BEnc, 0)) // [N, F]
	f := MaxScalar(a, 0)
	if cfg.Kind == KindTopK {
		f = Where(TopKByArgMax(a, cfg.K), f, ZerosLike(f))
	}
	f.AssertDims(x.Shape().Dim(0), cfg.NumFeatures())
	return f
}

// Decode returns the reconstruction x̂ = f·D + b_dec (equation 4): f [N, F] → [N, D]. Panics on bad shapes.
func Decode(f *Node, p Params) *Node {
	if f.Rank() != 2 || p.WDec == nil || p.BDec == nil || p.WDec.Rank() != 2 || f.Shape().Dim(1) != p.WDec.Shape().Dim(0) {
		panic(errors.Errorf("sae.Decode: f.shape=%s, want [N, F] matching W_dec [F, D]", f.Shape()))
	}
	return Add(MatMul(f, Dictionary(p.WDec)), InsertAxes(p.BDec, 0))
}

// Objective computes the SAE on x [..., D] with weights p and returns its Terms (equations 1–6); lambda is λ as a
// scalar node of x's dtype, nil for cfg.L1. Panics on bad shapes or an invalid cfg.
func Objective(x *Node, p Params, lambda *Node, cfg Config) Terms {
	mustValidate("Objective", cfg)
	x = flatten("Objective", x, cfg)
	g, dt := x.Graph(), x.DType()
	N, D := x.Shape().Dim(0), cfg.Width
	f := Encode(x, p, cfg)
	xHat := Decode(f, p)
	xHat.AssertDims(N, D)
	sq := ReduceAllSum(Square(Sub(x, xHat)))
	centred := Sub(x, ReduceAndKeep(x, ReduceMean, 0))
	t := Terms{
		MSE:            DivScalar(sq, float64(N*D)),
		L1:             DivScalar(ReduceAllSum(f), float64(N)),
		L0:             DivScalar(ReduceAllSum(ConvertDType(GreaterThan(f, ZerosLike(f)), dt)), float64(N)),
		FVU:            Div(sq, ReduceAllSum(Square(centred))),
		Features:       f,
		Reconstruction: xHat,
	}
	switch {
	case cfg.Kind == KindTopK:
		t.Lambda = ScalarZero(g, dt)
		t.Loss = t.MSE
	default:
		if lambda == nil {
			lambda = Scalar(g, dt, cfg.L1)
		}
		if !lambda.IsScalar() || lambda.DType() != dt {
			panic(errors.Errorf("sae.Objective: lambda.shape=%s, want a %s scalar", lambda.Shape(), dt))
		}
		t.Lambda = lambda
		t.Loss = Add(t.MSE, Mul(StopGradient(lambda), t.L1))
	}
	return t
}

// mustValidate panics with cfg's error.
func mustValidate(caller string, cfg Config) {
	if err := cfg.Validate(); err != nil {
		panic(errors.WithMessagef(err, "sae.%s", caller))
	}
}

// Weights returns the SAE's variables under scope.At(Scope) as nodes of g, creating them in dtype on first use
// (initialisation in doc.go). Panics if cfg is invalid.
func Weights(scope *model.Scope, cfg Config, g *Graph, dtype dtypes.DType) Params {
	mustValidate("Weights", cfg)
	D, F := cfg.Width, cfg.NumFeatures()
	c := scope.At(Scope)
	// W_dec and W_enc draw the same directions from InitSeed, so that W_enc starts as the dictionary's transpose.
	directions := func(g *Graph, dt dtypes.DType) *Node {
		_, w := RandomNormal(RNGStateFromSeedForGraph(g, cfg.InitSeed), shapes.Make(dt, F, D))
		return Dictionary(w) // [F, D]
	}
	dec := c.WithInitializer(func(g *Graph, s shapes.Shape) *Node { return directions(g, s.DType) })
	enc := c.WithInitializer(func(g *Graph, s shapes.Shape) *Node { return Transpose(directions(g, s.DType), 0, 1) })
	zero := c.WithInitializer(initializer.Zero)
	return Params{
		WEnc: enc.VariableWithShape(VarWEnc, shapes.Make(dtype, D, F)).NodeValue(g),
		BEnc: zero.VariableWithShape(VarBEnc, shapes.Make(dtype, F)).NodeValue(g),
		WDec: dec.VariableWithShape(VarWDec, shapes.Make(dtype, F, D)).NodeValue(g),
		BDec: zero.VariableWithShape(VarBDec, shapes.Make(dtype, D)).NodeValue(g),
	}
}

// lambdaVariable returns λ's variable (VarL1, not trainable), created at cfg.L1.
func lambdaVariable(scope *model.Scope, cfg Config, dtype dtypes.DType) *model.Variable {
	c := scope.At(Scope).WithInitializer(func(g *Graph, s shapes.Shape) *Node { return Scalar(g, s.DType, cfg.L1) })
	v := c.VariableWithShape(VarL1, shapes.Make(dtype))
	v.Trainable = false
	return v
}

// Loss runs the SAE with its variables (Weights) on x [..., D] and returns its Terms; Terms.Loss is the training
// loss. With "relu_l1", λ is the variable VarL1; when cfg.TargetL0 > 0 and scope.IsTraining(g), it is updated by
// equation (7) from this batch's L0. Panics on bad shapes or an invalid cfg.
func Loss(scope *model.Scope, cfg Config, x *Node) Terms {
	mustValidate("Loss", cfg)
	g := x.Graph()
	p := Weights(scope, cfg, g, x.DType())
	if cfg.Kind == KindTopK {
		return Objective(x, p, nil, cfg)
	}
	v := lambdaVariable(scope, cfg, x.DType())
	lambda := v.NodeValue(g)
	t := Objective(x, p, lambda, cfg)
	if cfg.TargetL0 > 0 && scope.IsTraining(g) {
		rel := MinScalar(MaxScalar(DivScalar(AddScalar(StopGradient(t.L0), -cfg.TargetL0), cfg.TargetL0), -1.0), 1.0)
		v.SetNodeValue(Mul(lambda, Exp(MulScalar(rel, cfg.L1Rate))))
	}
	return t
}

// Features returns the feature activations of x [..., D] with the SAE's variables: [N, F]. Panics like Encode.
func Features(scope *model.Scope, cfg Config, x *Node) *Node {
	return Encode(x, Weights(scope, cfg, x.Graph(), x.DType()), cfg)
}

// LossFn returns the training loss as a function of the batch's tensors, the form workbench/fit.Train takes:
// inputs[0] is x [..., D]. Panics (when the graph is built) if cfg is invalid or x has the wrong width.
func LossFn(cfg Config) func(scope *model.Scope, inputs []*Node) *Node {
	return func(scope *model.Scope, inputs []*Node) *Node {
		if len(inputs) < 1 {
			panic(errors.New("sae.LossFn: no inputs; want x [..., D]"))
		}
		return Loss(scope, cfg, inputs[0]).Loss
	}
}
