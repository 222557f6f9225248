// Package fused holds the graph operations ProtoLab's layers share that run as one fused kernel where the backend
// has it (gomlx's Backend* fused ops; the pure-Go backend has them, XLA fuses by itself), with their closed-form
// gradients instead of gomlx's decomposed ones.
//
// graph.Softmax, when the fused kernel runs, also builds the decomposed softmax beside it and differentiates that: a
// training graph then computes every softmax twice (the fused one forward, the decomposed exp, max, sum and divide
// for the gradient) and back-propagates through the decomposed division. Softmax here builds the fused node alone;
// its gradient is p ⊙ (v − Σ p ⊙ v), the rule workbench/gradfix registers for the fused node type, so a program
// that differentiates it must import workbench/gradfix (workbench/run and workbench/wbtest do; without it gomlx
// panics naming the node type).
package fused

import (
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/support/exceptions"
	"github.com/pkg/errors"
)

// Softmax is exp(x − max)/Σ exp(x − max) along one axis (negative counts from the end): x → same shape. It uses the
// backend's fused kernel when it has one, else the decomposed form (whose gradient is autodiff's). Panics on a
// non-float x or an axis out of range.
func Softmax(x *graph.Node, axis int) *graph.Node {
	if !x.DType().IsFloat() {
		panic(errors.Errorf("fused.Softmax: x dtype %s, want a float", x.DType()))
	}
	a := graph.MustAdjustAxis(axis, x)
	var out *graph.Node
	err := exceptions.TryCatch[error](func() { out = graph.BackendFusedSoftmax(x, a) })
	switch {
	case err == nil:
		return out
	case compute.IsNotImplemented(err):
		return decomposedSoftmax(x, a)
	default:
		panic(err)
	}
}

// decomposedSoftmax is graph.Softmax's decomposed form: the max is a constant for the gradient (it cancels).
func decomposedSoftmax(x *graph.Node, axis int) *graph.Node {
	e := graph.Exp(graph.Sub(x, graph.StopGradient(graph.ReduceAndKeep(x, graph.ReduceMax, axis))))
	return graph.Div(e, graph.ReduceAndKeep(e, graph.ReduceSum, axis))
}
