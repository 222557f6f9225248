// Package gradfix replaces four reverse-mode gradient rules of gomlx v0.26.0 that are slow or missing on the pure-Go
// ("go", SimpleGo) backend. Importing the package (directly, or through workbench/run) installs the rules; they are
// ordinary graph code and therefore also correct on XLA.
//
// The rules:
//
//   - DotGeneral and Dot: upstream builds each operand's gradient as a broadcast product followed by a ReduceSum,
//     materialising a [batch, lhsCross, rhsCross, contracting] tensor. Here each operand's gradient is one DotGeneral
//     of the cotangent with the other operand, followed by a transpose: for y = Σ_c a[b,i,c] w[b,c,j],
//     ∂L/∂a[b,i,c] = Σ_j v[b,i,j] w[b,c,j] and ∂L/∂w[b,c,j] = Σ_i v[b,i,j] a[b,i,c].
//   - Slice: upstream pads the cotangent back to the input shape with Pad, which SimpleGo lacks. Here the padding is a
//     Concatenate with zero blocks, per axis. Strided slices still use the original rule (needs interior padding).
//   - Rsqrt: d x^{-1/2}/dx = -½ x^{-3/2} = -½ y³ with y = rsqrt(x).
//   - Expm1: d (eˣ-1)/dx = eˣ.
//
// The replaced upstream rules are kept in Original so tests can compare against them.
//
// The DotGeneral and Slice rules read the node's axis parameters through reflection on unexported gomlx fields; a gomlx
// upgrade must re-run this package's tests (they fail loudly if the fields move).
package gradfix

import (
	"fmt"
	"reflect"
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// Original holds the upstream gradient rules that Install replaced, keyed by node type (for tests and benchmarks).
var Original = map[NodeType]VJP{}

// Fixed holds the rules this package installs, keyed by node type.
var Fixed = map[NodeType]VJP{
	NodeTypeDotGeneral: single(dotGeneralVJP),
	NodeTypeDot:        single(dotVJP),
	NodeTypeSlice:      sliceVJP,
	NodeTypeRsqrt:      single(rsqrtVJP),
	NodeTypeExpm1:      single(expm1VJP),
}

func init() {
	for t, rule := range Fixed {
		Original[t] = VJPRegistration[t] // nil for Rsqrt and Expm1: upstream has no rule.
		VJPRegistration[t] = rule
	}
}

// Use selects which rules gomlx's autodiff applies from now on: fixed (true) or the upstream ones (false). It exists for
// comparisons in tests and benchmarks; graphs already built keep the rules they were built with.
// It is not safe to call while another goroutine builds gradients.
func Use(fixed bool) {
	for t := range Fixed {
		if fixed {
			VJPRegistration[t] = Fixed[t]
		} else if Original[t] != nil {
			VJPRegistration[t] = Original[t]
		} else {
			delete(VJPRegistration, t)
		}
	}
}

func single(fn func(node, v *Node) []*Node) VJP {
	return func(node *Node, vjps []*Node, _ shapes.Shape) []*Node { return fn(node, vjps[0]) }
}

func rsqrtVJP(node, v *Node) []*Node {
	// node = x^{-1/2}; dnode/dx = -½ node³.
	return []*Node{Mul(v, MulScalar(Mul(node, Square(node)), -0.5))}
}

func expm1VJP(node, v *Node) []*Node {
	return []*Node{Mul(v, Exp(node.Inputs()[0]))}
}

// intsField reads the unexported []int parameter `name` of node's inputs struct.
func intsField(node *Node, name string) []int {
	inputs := reflect.ValueOf(node).Elem().FieldByName("inputs")
	if !inputs.IsValid() || inputs.IsNil() {
		panic(fmt.Sprintf("gradfix: gomlx Node has no inputs field (gomlx upgraded?), node %s", node))
	}
	f := inputs.Elem().Elem().FieldByName(name)
	if !f.IsValid() {
		panic(fmt.Sprintf("gradfix: %s node has no parameter %q (gomlx upgraded?)", node.Type(), name))
	}
	out := make([]int, f.Len())
	for i := range out {
		out[i] = int(f.Index(i).Int())
	}
	return out
}

// freeAxes lists the axes of a rank-`rank` operand that are neither contracting nor batch, in order.
func freeAxes(rank int, contracting, batch []int) []int {
	var out []int
	for a := 0; a < rank; a++ {
		if !slices.Contains(contracting, a) && !slices.Contains(batch, a) {
			out = append(out, a)
		}
	}
	return out
}

func iotaInts(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}

// operandGrad computes the gradient of one DotGeneral operand ("this") given the cotangent v, whose axes are
// [batch..., lhsFree..., rhsFree...]. vOtherFree lists v's axes that belong to the other operand's free axes.
// Contracting v's other-free axes with the other operand's free axes (batching over the batch axes) leaves
// [batch..., thisFree..., otherContracting(sorted)...], which is transposed back into this operand's axis order.
func operandGrad(v *Node, vOtherFree []int, numBatch int,
	this *Node, thisBatch, thisContract, thisFree []int,
	other *Node, otherBatch, otherContract, otherFree []int) *Node {
	res := DotGeneral(v, vOtherFree, iotaInts(0, numBatch), other, otherFree, otherBatch)
	sortedOtherContract := slices.Clone(otherContract)
	slices.Sort(sortedOtherContract)
	perm := make([]int, this.Rank()) // perm[a] = the axis of res that becomes this operand's axis a.
	for i, a := range thisBatch {
		perm[a] = i
	}
	for j, a := range thisFree {
		perm[a] = numBatch + j
	}
	for k, a := range thisContract {
		// This operand's k-th contracting axis pairs with other's k-th contracting axis.
		perm[a] = numBatch + len(thisFree) + slices.Index(sortedOtherContract, otherContract[k])
	}
	return TransposeAllAxes(res, perm...)
}

func dotGeneralVJP(node, v *Node) []*Node {
	lhs, rhs := node.Inputs()[0], node.Inputs()[1]
	lc, lb := intsField(node, "lhsContractingAxes"), intsField(node, "lhsBatchAxes")
	rc, rb := intsField(node, "rhsContractingAxes"), intsField(node, "rhsBatchAxes")
	lf, rf := freeAxes(lhs.Rank(), lc, lb), freeAxes(rhs.Rank(), rc, rb)
	nb := len(lb)
	gl := operandGrad(v, iotaInts(nb+len(lf), len(rf)), nb, lhs, lb, lc, lf, rhs, rb, rc, rf)
	gr := operandGrad(v, iotaInts(nb, len(lf)), nb, rhs, rb, rc, rf, lhs, lb, lc, lf)
	return []*Node{gl, gr}
}

func dotVJP(node, v *Node) []*Node {
	a, b := node.Inputs()[0], node.Inputs()[1]
	switch {
	case a.Rank() == 1 && b.Rank() == 1: // scalar = a·b
		return []*Node{Mul(v, b), Mul(v, a)}
	case a.Rank() == 2 && b.Rank() == 1: // [m] = a[m,k] b[k]
		return []*Node{Mul(InsertAxes(v, -1), InsertAxes(b, 0)), DotGeneral(v, []int{0}, nil, a, []int{0}, nil)}
	case a.Rank() == 2 && b.Rank() == 2: // [m,n] = a[m,k] b[k,n]
		return []*Node{DotGeneral(v, []int{1}, nil, b, []int{1}, nil), DotGeneral(a, []int{0}, nil, v, []int{0}, nil)}
	}
	return Original[NodeTypeDot](node, []*Node{v}, shapes.Shape{})
}

func sliceVJP(node *Node, vjps []*Node, outputShape shapes.Shape) []*Node {
	v, x := vjps[0], node.Inputs()[0]
	starts, limits, strides := intsField(node, "starts"), intsField(node, "limits"), intsField(node, "strides")
	for _, s := range strides {
		if s > 1 {
			return Original[NodeTypeSlice](node, vjps, outputShape) // needs interior padding; XLA only.
		}
	}
	g, dims := x.Graph(), x.Shape().Dimensions
	for axis := range dims {
		before, after := starts[axis], dims[axis]-limits[axis]
		if before == 0 && after == 0 {
			continue
		}
		zeroDims := slices.Clone(v.Shape().Dimensions)
		var parts []*Node
		if before > 0 {
			zeroDims[axis] = before
			parts = append(parts, Zeros(g, shapes.Make(v.DType(), zeroDims...)))
		}
		parts = append(parts, v)
		if after > 0 {
			zeroDims[axis] = after
			parts = append(parts, Zeros(g, shapes.Make(v.DType(), zeroDims...)))
		}
		v = Concatenate(parts, axis)
	}
	return []*Node{v}
}
