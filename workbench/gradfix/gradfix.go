// Package gradfix adds or mends the reverse-mode gradient rules of gomlx v0.28.2 that are missing or wrong.
// Importing the package (directly, or through workbench/run) installs them; they are ordinary graph code and
// therefore also correct on XLA.
//
// The rules:
//
//   - Rsqrt: d x^{-1/2}/dx = -½ x^{-3/2} = -½ y³ with y = rsqrt(x). Upstream has none.
//   - Expm1: d (eˣ-1)/dx = eˣ. Upstream has none.
//   - DotGeneral, only when an operand's contracting axes are not in increasing order (e.g. lhs contracting [2, 0]
//     against rhs [0, 2]): upstream's rule contracts the cotangent with the other operand, which leaves that
//     operand's contracting axes in increasing order, and then transposes as if they were in pairing order, so it
//     returns a gradient of the wrong shape (or, for equal sizes, a wrongly transposed one). Here the transpose
//     follows the pairing: for y = Σ_c a[b,i,c] w[b,c,j], ∂L/∂a[b,i,c] = Σ_j v[b,i,j] w[b,c,j] and
//     ∂L/∂w[b,c,j] = Σ_i v[b,i,j] a[b,i,c]. Every other DotGeneral keeps upstream's rule.
//
// gomlx v0.26.0 also needed replacements for the Dot and Slice rules and for every DotGeneral (a broadcast product
// where a second DotGeneral belongs, and a Pad the pure-Go backend lacked); v0.28.2 fixed those. The package's tests
// check every rule against finite differences, and fail once upstream defines Rsqrt's or Expm1's rule or gets the
// out-of-order DotGeneral right, so that the rule can then go.
//
// The DotGeneral rule reads the node's axes through reflection on unexported gomlx fields (gomlx exposes no
// accessor); a gomlx upgrade must re-run this package's tests, which fail loudly if the fields move.
package gradfix

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
)

// Fixed holds the rules this package installs, keyed by node type.
var Fixed = map[NodeType]VJP{
	NodeTypeRsqrt:      single(rsqrtVJP),
	NodeTypeExpm1:      single(expm1VJP),
	NodeTypeDotGeneral: dotGeneralRule,
}

// Original holds upstream's rules for the node types of Fixed, as they were when the package was loaded (nil where
// upstream has none), for tests and benchmarks.
var Original = map[NodeType]VJP{}

func init() {
	for t, rule := range Fixed {
		Original[t] = VJPRegistration[t]
		VJPRegistration[t] = rule
	}
}

// Use selects which rules gomlx's autodiff applies from now on: this package's (true) or upstream's (false; a node
// type upstream has no rule for then has none). It exists for comparisons in tests; graphs already built keep the
// rules they were built with. It is not safe to call while another goroutine builds gradients.
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

// dotGeneralRule is upstream's DotGeneral rule unless an operand's contracting axes are out of increasing order,
// where upstream's is wrong (package doc).
func dotGeneralRule(node *Node, vjps []*Node, outputShape shapes.Shape) []*Node {
	lc, rc := intsField(node, "lhsContractingAxes"), intsField(node, "rhsContractingAxes")
	if slices.IsSorted(lc) && slices.IsSorted(rc) {
		return Original[NodeTypeDotGeneral](node, vjps, outputShape)
	}
	return dotGeneralVJP(node, vjps[0], lc, rc)
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
	if v.DType() != this.DType() { // an accumulator or output dtype other than the operands'
		v = ConvertDType(v, this.DType())
	}
	if other.DType() != this.DType() {
		other = ConvertDType(other, this.DType())
	}
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

func dotGeneralVJP(node, v *Node, lc, rc []int) []*Node {
	lhs, rhs := node.Inputs()[0], node.Inputs()[1]
	lb, rb := intsField(node, "lhsBatchAxes"), intsField(node, "rhsBatchAxes")
	lf, rf := freeAxes(lhs.Rank(), lc, lb), freeAxes(rhs.Rank(), rc, rb)
	nb := len(lb)
	gl := operandGrad(v, iotaInts(nb+len(lf), len(rf)), nb, lhs, lb, lc, lf, rhs, rb, rc, rf)
	gr := operandGrad(v, iotaInts(nb, len(lf)), nb, rhs, rb, rc, rf, lhs, lb, lc, lf)
	return []*Node{gl, gr}
}
