// Package gradfix adds or mends the reverse-mode gradient rules of gomlx v0.28.2 that are missing or wrong.
// Importing the package (directly, or through workbench/run) installs them; they are ordinary graph code and
// therefore also correct on XLA.
//
// The rules:
//
//   - Rsqrt: d x^{-1/2}/dx = -½ x^{-3/2} = -½ y³ with y = rsqrt(x). Upstream has none.
//   - Expm1: d (eˣ-1)/dx = eˣ. Upstream has none.
//   - DotGeneral, every one. Upstream's rule is wrong when an operand's contracting axes are not in increasing order
//     (e.g. lhs contracting [2, 0] against rhs [0, 2]): it contracts the cotangent with the other operand, which
//     leaves that operand's contracting axes in increasing order, and then transposes as if they were in pairing
//     order, so it returns a gradient of the wrong shape (or, for equal sizes, a wrongly transposed one). Here the
//     transpose follows the pairing: for y = Σ_c a[b,i,c] w[b,c,j], ∂L/∂a[b,i,c] = Σ_j v[b,i,j] w[b,c,j] and
//     ∂L/∂w[b,c,j] = Σ_i v[b,i,j] a[b,i,c]. The rule is also shaped for the pure-Go backend, which executes every
//     Transpose as a copy and copies both operands of a product whose layout its kernels do not take: of the two
//     operand orders of each gradient product it takes the one that copies fewer elements, transposes only the
//     operand that needs it (operandGrad, packedDot), and never by the identity (upstream's rule transposes every
//     gradient back, an identity copy in the common case). The result is upstream's up to float rounding (the sums
//     run in another order).
//   - Reverse: the cotangent reversed along the same axes. Upstream has none.
//   - FusedSoftmax: ∂L/∂x = p ⊙ (v − Σ p ⊙ v) from the output p. Upstream has none: graph.Softmax differentiates a
//     decomposed softmax it builds beside the fused node. layers/fused.Softmax builds the fused node alone.
//
// gomlx v0.26.0 also needed replacements for the Dot and Slice rules and for every DotGeneral (a broadcast product
// where a second DotGeneral belongs, and a Pad the pure-Go backend lacked); v0.28.2 fixed those. The package's tests
// check every rule against finite differences, and fail once upstream defines Rsqrt's, Expm1's, Reverse's or
// FusedSoftmax's rule or gets the out-of-order DotGeneral right, so that the rule can be reconsidered.
//
// The DotGeneral, Reverse and FusedSoftmax rules read the node's axes through reflection on unexported gomlx fields
// (gomlx exposes no accessor); a gomlx upgrade must re-run this package's tests, which fail loudly if the fields move.
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
	NodeTypeRsqrt:        single(rsqrtVJP),
	NodeTypeExpm1:        single(expm1VJP),
	NodeTypeDotGeneral:   dotGeneralRule,
	NodeTypeFusedSoftmax: single(fusedSoftmaxVJP),
	NodeTypeReverse:      single(reverseVJP),
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

// reverseVJP: reversing axes is a permutation that is its own inverse, so the cotangent is reversed back.
func reverseVJP(node, v *Node) []*Node {
	return []*Node{Reverse(v, intsField(node, "axes")...)}
}

// fusedSoftmaxVJP: for p = softmax(x) along an axis, ∂L/∂x = p ⊙ (v − Σ_axis p ⊙ v), from the node's own output.
func fusedSoftmaxVJP(node, v *Node) []*Node {
	axis := intField(node, "axis")
	pv := Mul(node, v)
	return []*Node{Sub(pv, Mul(node, ReduceAndKeep(pv, ReduceSum, axis)))}
}

// dotGeneralRule is gradfix's DotGeneral rule for every DotGeneral (package doc): right for contracting axes in any
// order, and shaped for the pure-Go backend, which executes every Transpose as a copy.
func dotGeneralRule(node *Node, vjps []*Node, _ shapes.Shape) []*Node {
	return dotGeneralVJP(node, vjps[0], intsField(node, "lhsContractingAxes"), intsField(node, "rhsContractingAxes"))
}

// inputsField reads the unexported parameter `name` of node's inputs struct.
func inputsField(node *Node, name string) reflect.Value {
	inputs := reflect.ValueOf(node).Elem().FieldByName("inputs")
	if !inputs.IsValid() || inputs.IsNil() {
		panic(fmt.Sprintf("gradfix: gomlx Node has no inputs field (gomlx upgraded?), node %s", node))
	}
	f := inputs.Elem().Elem().FieldByName(name)
	if !f.IsValid() {
		panic(fmt.Sprintf("gradfix: %s node has no parameter %q (gomlx upgraded?)", node.Type(), name))
	}
	return f
}

// intsField reads the unexported []int parameter `name` of node's inputs struct.
func intsField(node *Node, name string) []int {
	f := inputsField(node, name)
	out := make([]int, f.Len())
	for i := range out {
		out[i] = int(f.Index(i).Int())
	}
	return out
}

// intField reads the unexported int parameter `name` of node's inputs struct.
func intField(node *Node, name string) int {
	return int(inputsField(node, name).Int())
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
// [batch..., lhsFree..., rhsFree...]; vOtherFree lists v's axes that belong to the other operand's free axes.
// Contracting v's other-free axes with the other operand's free axes (batching over the batch axes) gives this
// operand's gradient, in one of two layouts depending on the operand order of that DotGeneral:
//
//	DotGeneral(v, other) → [batch..., thisFree..., otherContracting(increasing)...]
//	DotGeneral(other, v) → [batch..., otherContracting(increasing)..., thisFree...]
//
// This operand's k-th contracting axis pairs with the other's k-th, which fixes where each of its axes sits in
// either layout. Of the two orders it takes the one that copies fewer elements, counting the operands packedDot
// transposes and the transpose of the result back into this operand's axis order (none when it already is).
func operandGrad(v *Node, vOtherFree []int, numBatch int,
	this *Node, thisBatch, thisContract, thisFree []int,
	other *Node, otherBatch, otherContract, otherFree []int) *Node {
	if v.DType() != this.DType() { // an accumulator or output dtype other than the operands'
		v = ConvertDType(v, this.DType())
	}
	if other.DType() != this.DType() {
		other = ConvertDType(other, this.DType())
	}
	sortedOtherContract := slices.Sorted(slices.Values(otherContract))
	// layout returns perm with perm[a] = the result axis that becomes this operand's axis a, for a result laid out
	// [batch..., first..., second...] where first (second) is thisFree when freeFirst (not freeFirst) and this
	// operand's contracting axes, in the other's increasing order, otherwise.
	layout := func(freeFirst bool) []int {
		perm := make([]int, this.Rank())
		freeAt, contractAt := numBatch, numBatch+len(thisFree)
		if !freeFirst {
			freeAt, contractAt = numBatch+len(thisContract), numBatch
		}
		for i, a := range thisBatch {
			perm[a] = i
		}
		for j, a := range thisFree {
			perm[a] = freeAt + j
		}
		for k, a := range thisContract {
			perm[a] = contractAt + slices.Index(sortedOtherContract, otherContract[k])
		}
		return perm
	}
	batch := iotaInts(0, numBatch)
	type plan struct {
		lhs, rhs               *Node
		lhsC, lhsB, rhsC, rhsB []int
		perm                   []int
	}
	plans := []plan{
		{v, other, vOtherFree, batch, otherFree, otherBatch, layout(true)},
		{other, v, otherFree, otherBatch, vOtherFree, batch, layout(false)},
	}
	best, bestCost := -1, 0
	for i, p := range plans {
		cost := packCost(p.lhs, p.lhsC, p.lhsB, p.rhs, p.rhsC, p.rhsB)
		if !isIdentity(p.perm) {
			cost += this.Shape().Size()
		}
		if best < 0 || cost < bestCost {
			best, bestCost = i, cost
		}
	}
	p := plans[best]
	res := packedDot(p.lhs, p.lhsC, p.lhsB, p.rhs, p.rhsC, p.rhsB)
	if !isIdentity(p.perm) {
		res = TransposeAllAxes(res, p.perm...)
	}
	return res
}

// The go backend multiplies without copying its operands when, after merging adjacent axes of one role, the lhs is
// [batch, free, contracting] and the rhs [batch, contracting, free] or [batch, free, contracting], with at most one
// batch and one contracting group; otherwise it transposes both operands (github.com/gomlx/compute
// internal/gobackend/dot/layout.go). lhsPerm and rhsPerms give those layouts for the operands of a DotGeneral, with
// batch and contracting axes in pairing order; an identity permutation means the operand is already laid out so.
func lhsPerm(rank int, contract, batch []int) []int {
	return slices.Concat(batch, freeAxes(rank, contract, batch), contract)
}

func rhsPerms(rank int, contract, batch []int) (nonTransposed, transposed []int) {
	free := freeAxes(rank, contract, batch)
	return slices.Concat(batch, contract, free), slices.Concat(batch, free, contract)
}

// packCost is the number of elements packedDot copies for DotGeneral(lhs, lc, lb, rhs, rc, rb).
func packCost(lhs *Node, lc, lb []int, rhs *Node, rc, rb []int) int {
	cost := 0
	if !isIdentity(lhsPerm(lhs.Rank(), lc, lb)) {
		cost += lhs.Shape().Size()
	}
	n, t := rhsPerms(rhs.Rank(), rc, rb)
	if !isIdentity(n) && !isIdentity(t) {
		cost += rhs.Shape().Size()
	}
	return cost
}

// packedDot is DotGeneral(lhs, lc, lb, rhs, rc, rb) (same result, [batch..., lhsFree..., rhsFree...]) with each
// operand the go backend would copy transposed first, here, into a layout it takes as is: the lhs to
// [batch, free, contracting], the rhs to [batch, free, contracting] unless it already is [batch, contracting, free].
// The backend would instead transpose both operands whenever either needs it.
func packedDot(lhs *Node, lc, lb []int, rhs *Node, rc, rb []int) *Node {
	if p := lhsPerm(lhs.Rank(), lc, lb); !isIdentity(p) {
		lhs = TransposeAllAxes(lhs, p...)
		lb, lc = iotaInts(0, len(lb)), iotaInts(lhs.Rank()-len(lc), len(lc))
	}
	if n, t := rhsPerms(rhs.Rank(), rc, rb); !isIdentity(n) && !isIdentity(t) {
		rhs = TransposeAllAxes(rhs, t...)
		rb, rc = iotaInts(0, len(rb)), iotaInts(rhs.Rank()-len(rc), len(rc))
	}
	return DotGeneral(lhs, lc, lb, rhs, rc, rb)
}

func isIdentity(perm []int) bool {
	for i, a := range perm {
		if i != a {
			return false
		}
	}
	return true
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
