package fused

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/core/graph"

	"github.com/protolab/protolab/workbench/wbtest"
)

// referenceSoftmax is softmax along axis of a row-major [d0, d1, d2] array, in plain loops.
func referenceSoftmax(x []float64, dims [3]int, axis int) []float64 {
	out := make([]float64, len(x))
	stride := [3]int{dims[1] * dims[2], dims[2], 1}
	for i := range x {
		// Visit each line along axis once, from its first element.
		if (i/stride[axis])%dims[axis] != 0 {
			continue
		}
		m := math.Inf(-1)
		for j := range dims[axis] {
			m = math.Max(m, x[i+j*stride[axis]])
		}
		s := 0.0
		for j := range dims[axis] {
			s += math.Exp(x[i+j*stride[axis]] - m)
		}
		for j := range dims[axis] {
			out[i+j*stride[axis]] = math.Exp(x[i+j*stride[axis]]-m) / s
		}
	}
	return out
}

// Softmax (the backend's fused kernel on the go backend) and its decomposed fallback both match the plain-loop
// softmax, along the first, middle and last (as -1) axis, with logits large enough to overflow a naive exp.
func TestSoftmax_MatchesReference(t *testing.T) {
	dims := [3]int{2, 3, 5}
	x := wbtest.Normal(wbtest.RNG(1), 30, 40)
	for _, axis := range []int{0, 1, -1} {
		want := referenceSoftmax(x, dims, (axis+3)%3)
		forms := map[string]func(*graph.Node, int) *graph.Node{"Softmax": Softmax, "decomposed": decomposedSoftmax}
		for name, fn := range forms {
			got := wbtest.ExecFlat(t, func(in []*graph.Node) []*graph.Node {
				a := axis
				if name == "decomposed" && a < 0 {
					a += 3
				}
				return []*graph.Node{fn(in[0], a)}
			}, wbtest.Tensor64(x, dims[:]...))
			wbtest.RequireClose(t, name, want, got[0], 1e-14)
		}
	}
}

func TestSoftmax_PanicsOnIntegers(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an integer input")
		}
	}()
	graph.MustExecOnce(wbtest.Backend(t), func(x *graph.Node) *graph.Node { return Softmax(x, 0) }, []int32{1, 2, 3})
}
