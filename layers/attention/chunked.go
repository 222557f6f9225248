package attention

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/pkg/errors"
)

// AttendCausalChunked is causal attention (Attend with CausalMask) computed block by block with an online softmax,
// equations (6)–(9) of doc.go, so that neither its forward nor its backward pass holds the T×T weights:
// q [B, T, H, D_h], k and v [B, T, H_kv, D_h] with G = H/H_kv → [B, T, H, D_h], position t attending to s ≤ t.
// block is C, the query and key block length (≥ 1; the last block is shorter when C does not divide T). Its value
// and gradients equal Attend's up to rounding. Panics on bad shapes or block < 1.
func AttendCausalChunked(q, k, v *Node, block int) *Node {
	if q.Rank() != 4 {
		panic(errors.Errorf("attention.AttendCausalChunked: q.shape=%s, want [B, T, H, D_h]", q.Shape()))
	}
	B, T, H, Dh := q.Shape().Dim(0), q.Shape().Dim(1), q.Shape().Dim(2), q.Shape().Dim(3)
	out := attendChunked(q, k, v, block) // [B, H_kv, T, G, D_h]
	return Reshape(TransposeAllAxes(out, 0, 2, 1, 3, 4), B, T, H, Dh)
}

// attendChunked is AttendCausalChunked returning attend's layout [B, H_kv, T, G, D_h].
//
// Autodiff would keep every block's weights for the backward pass, so the gradient is written by hand: q, k and v
// are packed into one tensor X [B, T, H+2H_kv, D_h] that passes through IdentityWithCustomGradient, and the output
// is O + (y − y) with O computed from StopGradient'ed inputs and y the query part of the identity's output. Its
// value is exactly O, and autodiff hands the identity's gradient function the cotangent [dO, 0, 0], from which it
// recomputes each block's weights and returns [dq, dk, dv] (equation (9)). The query part is selected with a 0/1
// matrix rather than a Slice (the form it was first written and checked in, when gomlx v0.26's pure-Go backend could
// not build a Slice's gradient).
func attendChunked(q, k, v *Node, block int) *Node {
	B, T, H, Dh := q.Shape().Dim(0), q.Shape().Dim(1), q.Shape().Dim(2), q.Shape().Dim(3)
	if k.Rank() != 4 || !k.Shape().Equal(v.Shape()) || k.Shape().Dim(0) != B || k.Shape().Dim(1) != T ||
		k.Shape().Dim(3) != Dh || k.DType() != q.DType() {
		panic(errors.Errorf("attention.AttendCausalChunked: q.shape=%s, k.shape=%s, v.shape=%s: want k and v "+
			"equal, [B=%d, T=%d, H_kv, D_h=%d], same dtype", q.Shape(), k.Shape(), v.Shape(), B, T, Dh))
	}
	Hkv := k.Shape().Dim(2)
	if H%Hkv != 0 {
		panic(errors.Errorf("attention.AttendCausalChunked: %d key/value heads do not divide %d query heads", Hkv, H))
	}
	if block < 1 {
		panic(errors.Errorf("attention.AttendCausalChunked: block=%d, want ≥ 1", block))
	}
	G := H / Hkv
	g, dtype := q.Graph(), q.DType()
	c := newChunks(T, block, Dh, dtype)

	qh := TransposeAllAxes(Reshape(StopGradient(q), B, T, Hkv, G, Dh), 0, 2, 1, 3, 4) // [B, H_kv, T, G, D_h]
	kh := TransposeAllAxes(StopGradient(k), 0, 2, 1, 3)                               // [B, H_kv, T, D_h]
	vh := TransposeAllAxes(StopGradient(v), 0, 2, 1, 3)                               // [B, H_kv, T, D_h]
	o, lse := c.forward(qh, kh, vh)                                                   // [B, H_kv, T, G, D_h], [B, H_kv, T, G]

	packed := Concatenate([]*Node{q, k, v}, 2) // [B, T, H+2H_kv, D_h]
	y := IdentityWithCustomGradient(packed, func(_, dPacked *Node) *Node {
		dO := Slice(dPacked, AxisRange(), AxisRange(), AxisRange(0, H))             // [B, T, H, D_h]
		dOh := TransposeAllAxes(Reshape(dO, B, T, Hkv, G, Dh), 0, 2, 1, 3, 4)       // [B, H_kv, T, G, D_h]
		dq, dk, dv := c.backward(qh, kh, vh, o, lse, dOh)                           // layouts of qh, kh, vh
		dq = Reshape(TransposeAllAxes(dq, 0, 2, 1, 3, 4), B, T, H, Dh)              // [B, T, H, D_h]
		dk, dv = TransposeAllAxes(dk, 0, 2, 1, 3), TransposeAllAxes(dv, 0, 2, 1, 3) // [B, T, H_kv, D_h]
		return Concatenate([]*Node{dq, dk, dv}, 2)                                  // [B, T, H+2H_kv, D_h]
	})
	sel := make([][]float64, H+2*Hkv) // sel[j][h] = 1 when packed head j is query head h
	for j := range sel {
		sel[j] = make([]float64, H)
		if j < H {
			sel[j][j] = 1
		}
	}
	yq := Einsum("btjd,jh->bthd", y, ConstAsDType(g, dtype, sel))       // [B, T, H, D_h], equal to q
	yq = TransposeAllAxes(Reshape(yq, B, T, Hkv, G, Dh), 0, 2, 1, 3, 4) // [B, H_kv, T, G, D_h]
	// Grouped so that the value is exactly o: (yq − yq) is 0 for finite yq, and o + 0 = o.
	out := Add(StopGradient(o), Sub(yq, StopGradient(yq)))
	out.AssertDims(B, Hkv, T, G, Dh)
	return out
}

// chunks holds the block partition of a sequence of T positions: block i covers [start[i], end[i]).
type chunks struct {
	start, end []int
	scale      float64 // 1/√D_h
	masked     float64 // the logit of masked (future) positions, maskedLogit(dtype)
}

func newChunks(T, block, Dh int, dtype dtypes.DType) chunks {
	c := chunks{scale: 1 / math.Sqrt(float64(Dh)), masked: maskedLogit(dtype)}
	for s := 0; s < T; s += block {
		c.start = append(c.start, s)
		c.end = append(c.end, min(s+block, T))
	}
	return c
}

// rows returns block i of x along axis (the T axis): [..., C_i, ...].
func (c chunks) rows(x *Node, axis, i int) *Node {
	return SliceAxis(x, axis, AxisRange(c.start[i], c.end[i]))
}

// after returns x + 0·dep[0, …, 0]: the value of x, computed only once dep exists. The pure-Go backend runs every
// node whose inputs are ready, so without this all key blocks of a query block (and all query blocks) would be
// scored at once and the T×T weights would be live together. dep must be finite.
func after(x, dep *Node) *Node {
	starts := make([]int, dep.Rank())
	ones := make([]int, dep.Rank())
	for i := range ones {
		ones[i] = 1
	}
	zero := MulScalar(Reshape(Slice(dep, sliceSpecs(starts, ones)...)), 0) // scalar
	return Add(x, zero)
}

func sliceSpecs(starts, ends []int) []SliceAxisSpec {
	s := make([]SliceAxisSpec, len(starts))
	for i := range s {
		s[i] = AxisRange(starts[i], ends[i])
	}
	return s
}

// scores returns the scaled logits of query block qi [B, H_kv, C_i, G, D_h] (already scaled by 1/√D_h) against key
// block kj [B, H_kv, C_j, D_h], with the future masked when i == j: [B, H_kv, C_i, G, C_j].
func (c chunks) scores(qi, kj *Node, diagonal bool) *Node {
	s := DotGeneral(qi, []int{4}, []int{0, 1}, kj, []int{3}, []int{0, 1}) // [B, H_kv, C_i, G, C_j]
	if diagonal {
		Ci := s.Shape().Dim(2)
		mask := BroadcastToShape(Reshape(LowerTriangular(s.Graph(), Ci), 1, 1, Ci, 1, Ci), s.Shape())
		s = Where(mask, s, Scalar(s.Graph(), s.DType(), c.masked))
	}
	return s
}

// forward returns o [B, H_kv, T, G, D_h] and the log-sum-exp of each query row's logits lse [B, H_kv, T, G]
// (equations (6)–(8)). Query blocks are independent; within one, the key blocks run in sequence.
func (c chunks) forward(q, k, v *Node) (o, lse *Node) {
	q = MulScalar(q, c.scale)
	var os, lses []*Node
	for i := range c.start {
		qi := c.rows(q, 2, i) // [B, H_kv, C_i, G, D_h]
		var m, l, acc *Node   // [B, H_kv, C_i, G] ×2, [B, H_kv, C_i, G, D_h]
		for j := 0; j <= i; j++ {
			qij := qi
			if j > 0 {
				qij = after(qi, m)
			}
			s := c.scores(qij, c.rows(k, 2, j), i == j) // [B, H_kv, C_i, G, C_j]
			mNew := ReduceMax(s, -1)
			if m != nil {
				mNew = Max(m, mNew)
			}
			p := Exp(Sub(s, InsertAxes(mNew, -1)))
			pv := DotGeneral(p, []int{4}, []int{0, 1}, c.rows(v, 2, j), []int{2}, []int{0, 1}) // [B, H_kv, C_i, G, D_h]
			if m == nil {
				l, acc = ReduceSum(p, -1), pv
			} else {
				alpha := Exp(Sub(m, mNew)) // rescales what was summed under the previous maximum
				l = Add(Mul(alpha, l), ReduceSum(p, -1))
				acc = Add(Mul(InsertAxes(alpha, -1), acc), pv)
			}
			m = mNew
		}
		os = append(os, Div(acc, InsertAxes(l, -1)))
		lses = append(lses, Add(m, Log(l)))
	}
	return Concatenate(os, 2), Concatenate(lses, 2)
}

// backward returns dq, dk, dv in the layouts of q [B, H_kv, T, G, D_h], k and v [B, H_kv, T, D_h] for the
// cotangent dO of o (equation (9)), recomputing each block's weights from lse. Within a query block the key
// blocks run in sequence.
func (c chunks) backward(q, k, v, o, lse, dO *Node) (dq, dk, dv *Node) {
	qs := MulScalar(q, c.scale)
	delta := ReduceSum(Mul(dO, o), -1) // [B, H_kv, T, G]: D_t = Σ_d dO·o
	n := len(c.start)
	dks, dvs := make([][]*Node, n), make([][]*Node, n) // contributions to key block j from each query block
	var dqs []*Node
	for i := range c.start {
		qi, dOi := c.rows(qs, 2, i), c.rows(dO, 2, i)                                    // [B, H_kv, C_i, G, D_h]
		li, di := InsertAxes(c.rows(lse, 2, i), -1), InsertAxes(c.rows(delta, 2, i), -1) // [B, H_kv, C_i, G, 1]
		var dqi *Node                                                                    // [B, H_kv, C_i, G, D_h]
		for j := 0; j <= i; j++ {
			qij, dOij := qi, dOi
			if dqi != nil {
				qij, dOij = after(qi, dqi), after(dOi, dqi)
			}
			kj, vj := c.rows(k, 2, j), c.rows(v, 2, j)                                                       // [B, H_kv, C_j, D_h]
			p := Exp(Sub(c.scores(qij, kj, i == j), li))                                                     // [B, H_kv, C_i, G, C_j]
			dvs[j] = append(dvs[j], DotGeneral(p, []int{2, 3}, []int{0, 1}, dOij, []int{2, 3}, []int{0, 1})) // [B, H_kv, C_j, D_h]
			dp := DotGeneral(dOij, []int{4}, []int{0, 1}, vj, []int{3}, []int{0, 1})                         // [B, H_kv, C_i, G, C_j]
			ds := Mul(p, Sub(dp, di))
			dqij := DotGeneral(ds, []int{4}, []int{0, 1}, kj, []int{2}, []int{0, 1}) // [B, H_kv, C_i, G, D_h]
			if dqi == nil {
				dqi = dqij
			} else {
				dqi = Add(dqi, dqij)
			}
			dks[j] = append(dks[j], DotGeneral(ds, []int{2, 3}, []int{0, 1}, qi, []int{2, 3}, []int{0, 1})) // [B, H_kv, C_j, D_h]
		}
		dqs = append(dqs, MulScalar(dqi, c.scale))
	}
	sum := func(xs []*Node) *Node {
		s := xs[0]
		for _, x := range xs[1:] {
			s = Add(s, x)
		}
		return s
	}
	dkj, dvj := make([]*Node, n), make([]*Node, n)
	for j := range dks {
		dkj[j], dvj[j] = sum(dks[j]), sum(dvs[j])
	}
	return Concatenate(dqs, 2), Concatenate(dkj, 2), Concatenate(dvj, 2)
}
