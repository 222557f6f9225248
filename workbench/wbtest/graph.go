package wbtest

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// ExecFlat builds and runs fn once on the test backend with the given tensors and returns every output flattened to
// float64.
func ExecFlat(t testing.TB, fn func(in []*Node) []*Node, args ...*tensors.Tensor) [][]float64 {
	t.Helper()
	anyArgs := make([]any, len(args))
	for i, a := range args {
		anyArgs[i] = a
	}
	outs := MustExecOnceN(Backend(t), fn, anyArgs...)
	flat := make([][]float64, len(outs))
	for i, o := range outs {
		flat[i] = Flat64(o)
	}
	return flat
}

// Tensors64 returns float64 tensors of values[i] with dimensions dims[i].
func Tensors64(values [][]float64, dims [][]int) []*tensors.Tensor {
	out := make([]*tensors.Tensor, len(values))
	for i := range values {
		out[i] = Tensor64(values[i], dims[i]...)
	}
	return out
}

// CotangentLoss returns ⟨y, c⟩ for a constant c of y's size: the scalar whose gradient is the vector-Jacobian product
// of y with the cotangent c (docs/STYLE.md §11.2).
func CotangentLoss(y *Node, c []float64) *Node {
	return ReduceAllSum(Mul(y, Reshape(ConstAsDType(y.Graph(), y.DType(), c), y.Shape().Dimensions...)))
}

// GradTol is the tolerance of analytic against finite-difference gradients in float64 (docs/STYLE.md §11.2).
const GradTol = 1e-6

// CheckGradients compares the gradient of the scalar loss(inputs) with respect to every input with central finite
// differences, |analytic − fd| ≤ GradTol·(1+|fd|); names label the inputs in failure messages. Inputs are float64
// tensors of values[i] shaped dims[i].
func CheckGradients(t testing.TB, names []string, values [][]float64, dims [][]int, loss func(in []*Node) *Node) {
	t.Helper()
	backend := Backend(t)
	lossExec := MustNewExec(backend, func(in []*Node) *Node { return loss(in) })
	gradExec := MustNewExec(backend, func(in []*Node) []*Node { return Gradient(loss(in), in...) })
	args := func(replace int, x []float64) []any {
		out := make([]any, len(values))
		for i := range values {
			v := values[i]
			if i == replace {
				v = x
			}
			out[i] = Tensor64(v, dims[i]...)
		}
		return out
	}
	grads := gradExec.MustExec(args(-1, nil)...)
	for i, name := range names {
		f := func(x []float64) float64 { return Flat64(lossExec.MustExec(args(i, x)...)[0])[0] }
		RequireGradient(t, "d loss/d "+name, f, values[i], Flat64(grads[i]), GradTol)
	}
}

// MatMulRunner returns a function that runs one float32 product batch × ([m, k] × [k, n]) on the test backend, as one
// DotGeneral in its natural layout (MatMul when batch is 1, else batched); the graph is compiled and run once
// before it returns. The matmul benchmarks time it.
func MatMulRunner(t testing.TB, batch, m, k, n int) func() {
	t.Helper()
	exec := MustNewExec(Backend(t), func(x, y *Node) *Node {
		if batch == 1 {
			return MatMul(x, y)
		}
		return Einsum("bmk,bkn->bmn", x, y)
	})
	xd, yd := []int{m, k}, []int{k, n}
	if batch > 1 {
		xd, yd = append([]int{batch}, xd...), append([]int{batch}, yd...)
	}
	x := tensors.FromShape(shapes.Make(dtypes.Float32, xd...))
	y := tensors.FromShape(shapes.Make(dtypes.Float32, yd...))
	run := func() { exec.MustExec(x, y)[0].FinalizeAll() }
	run()
	return run
}
