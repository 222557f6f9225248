package linattn

import (
	"fmt"
	"math"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/pkg/errors"
)

// Scope is the sub-scope Model creates its variables in.
const Scope = "linattn"

// Scope and variable names below Scope (doc.go lists their shapes).
const (
	ScopeReadout = "readout"
	ScopeHeads   = "heads"
	ScopeKey     = "key"
	ScopeQuery   = "query"
	VarQ         = "q"
	VarWX        = "w_x"
	VarWP        = "w_p"
	VarW1        = "w_1"
	VarB1        = "b_1"
	VarW2        = "w_2"
	VarB2        = "b_2"
	VarW         = "w"
)

// LayerScope returns the scope name of layer ℓ (1-based) of models A and A′: "layer_01", "layer_02", ….
func LayerScope(l int) string { return fmt.Sprintf("layer_%02d", l) }

// Output holds what a model computes for a batch of contexts.
type Output struct {
	// Theta is θ̂ [B, D].
	Theta *Node
	// Workspace is p = (φ_1 … φ_M) [B, M]. For the deep models A and A′, p_ℓ (the function vector after layer ℓ)
	// is its first ℓ columns.
	Workspace *Node
	// Keys are k [B, N, M]: Keys[b, i, m] is the scalar key of token i in layer m (A, A′) or channel m (B, C),
	// after patching.
	Keys *Node
}

// Patch replaces keys by donor keys before the statistics are taken, eq. (7).
type Patch struct {
	// Keys are the donor keys [B, N, M], e.g. Output.Keys of a donor run on the same x.
	Keys *Node
	// Mask is [M] or [B, M], of the keys' dtype: 1 replaces layer (channel) m's keys by the donor's, 0 keeps them;
	// values in between interpolate.
	Mask *Node
}

// MLPWeights are the weights of an MLP of eq. (2) mapping R^In to R^Out: W1 [In, H], B1 [H], W2 [H, Out], B2 [Out].
type MLPWeights struct{ W1, B1, W2, B2 *Node }

// KeyWeights are the weights of MLP_ℓ of model A, eq. (3), with the first linear map split into the blocks acting
// on x and on p_{ℓ−1}: Wx [D, H], Wp [ℓ−1, H] (nil for ℓ = 1), B1 [H], W2 [H], B2 [] (a scalar).
type KeyWeights struct{ Wx, Wp, B1, W2, B2 *Node }

// HeadWeights are the weights of the M key MLPs of model B, eq. (5): W1 [M, D, H], B1 [M, H], W2 [M, H], B2 [M].
type HeadWeights struct{ W1, B1, W2, B2 *Node }

// Activate applies the named activation (GELU or ReLU) elementwise. Panics on an unknown name.
func Activate(x *Node, name string) *Node {
	switch name {
	case GELU:
		// x·Φ(x), Φ(x) = ½(1 + erf(x/√2)).
		return Mul(x, MulScalar(AddScalar(Erf(MulScalar(x, 1/math.Sqrt2)), 1), 0.5))
	case ReLU:
		return Max(x, ZerosLike(x))
	}
	panic(errors.Errorf("linattn.Activate: activation %q, want %q or %q", name, GELU, ReLU))
}

// MLP applies eq. (2) to u [B, In] → [B, Out]. Panics on mismatched weight shapes.
func MLP(u *Node, w MLPWeights, act string) *Node {
	if u.Rank() != 2 || w.W1.Rank() != 2 || w.W2.Rank() != 2 || w.W1.Shape().Dim(0) != u.Shape().Dim(1) ||
		w.W2.Shape().Dim(0) != w.W1.Shape().Dim(1) {
		panic(errors.Errorf("linattn.MLP: u.shape=%s, w_1.shape=%s, w_2.shape=%s: want [B, In], [In, H], [H, Out]",
			u.Shape(), w.W1.Shape(), w.W2.Shape()))
	}
	B, H, Out := u.Shape().Dim(0), w.W1.Shape().Dim(1), w.W2.Shape().Dim(1)
	h := Activate(Add(MatMul(u, w.W1), BroadcastToDims(InsertAxes(w.B1, 0), B, H)), act) // [B, H]
	h.AssertDims(B, H)
	out := Add(MatMul(h, w.W2), BroadcastToDims(InsertAxes(w.B2, 0), B, Out))
	out.AssertDims(B, Out)
	return out
}

// Statistic is eq. (1): keys [B|1, N, M], y [B, N] → φ [B, M] with φ[b, m] = (1/N) Σ_i keys[b, i, m]·y[b, i]. Keys
// with batch 1 are shared by every context (shared tokens, see ForwardA). Panics on mismatched shapes.
func Statistic(keys, y *Node) *Node {
	if keys.Rank() != 3 || y.Rank() != 2 || (keys.Shape().Dim(0) != y.Shape().Dim(0) && keys.Shape().Dim(0) != 1) ||
		keys.Shape().Dim(1) != y.Shape().Dim(1) {
		panic(errors.Errorf("linattn.Statistic: keys.shape=%s, y.shape=%s: want [B|1, N, M] and [B, N]",
			keys.Shape(), y.Shape()))
	}
	B, N, M := y.Shape().Dim(0), keys.Shape().Dim(1), keys.Shape().Dim(2)
	if keys.Shape().Dim(0) == 1 {
		return MulScalar(MatMul(y, Reshape(keys, N, M)), 1/float64(N)) // [B, N]·[N, M]
	}
	// An explicit broadcast and a reduction: cheaper on the pure-Go backend than a batched DotGeneral.
	yb := BroadcastToDims(Reshape(y, B, N, 1), B, N, M)
	return MulScalar(ReduceSum(Mul(keys, yb), 1), 1/float64(N))
}

// checkTokens returns B, N, D of x [B|1, N, D] and y [B, N] (B from y) and whether x is shared (batch 1 while
// B > 1), panicking (naming fn) otherwise.
func checkTokens(fn string, x, y *Node) (B, N, D int, shared bool) {
	if x.Rank() != 3 || y.Rank() != 2 || (x.Shape().Dim(0) != y.Shape().Dim(0) && x.Shape().Dim(0) != 1) ||
		x.Shape().Dim(1) != y.Shape().Dim(1) || x.DType() != y.DType() {
		panic(errors.Errorf("linattn.%s: x.shape=%s, y.shape=%s: want [B|1, N, D] and [B, N] of one dtype",
			fn, x.Shape(), y.Shape()))
	}
	B = y.Shape().Dim(0)
	return B, x.Shape().Dim(1), x.Shape().Dim(2), x.Shape().Dim(0) != B
}

// broadcastBatch returns t [1, …] broadcast to [B, …], or t unchanged when its batch is already B.
func broadcastBatch(t *Node, B int) *Node {
	if t.Shape().Dim(0) == B {
		return t
	}
	dims := t.Shape().Clone().Dimensions
	dims[0] = B
	return BroadcastToDims(t, dims...)
}

// patchMask returns the patch mask as [B|1, M], checking the patch against keys of shape [B, N, M]; nil patch → nil.
func patchMask(fn string, p *Patch, B, N, M int) *Node {
	if p == nil {
		return nil
	}
	if p.Keys == nil || p.Mask == nil {
		panic(errors.Errorf("linattn.%s: a Patch needs both Keys and Mask", fn))
	}
	if !p.Keys.Shape().Equal(shapes.Make(p.Keys.DType(), B, N, M)) {
		panic(errors.Errorf("linattn.%s: patch keys shape=%s, want [B=%d, N=%d, M=%d]", fn, p.Keys.Shape(), B, N, M))
	}
	mask := p.Mask
	switch {
	case mask.Rank() == 1 && mask.Shape().Dim(0) == M:
		return Reshape(mask, 1, M)
	case mask.Rank() == 2 && mask.Shape().Dim(0) == B && mask.Shape().Dim(1) == M:
		return mask
	}
	panic(errors.Errorf("linattn.%s: patch mask shape=%s, want [M=%d] or [B=%d, M]", fn, mask.Shape(), M, B))
}

// patchAll applies eq. (7) to every channel at once: keys [B, N, M], mask [B|1, M].
func patchAll(keys, donor, mask *Node) *Node {
	if mask == nil {
		return keys
	}
	m := InsertAxes(mask, 1) // [B|1, 1, M]
	return Add(keys, Mul(m, Sub(donor, keys)))
}

// ForwardA is model A, eqs. (3)–(4): x [B|1, N, D], y [B, N] → Output with L = len(layers) layers. An x of batch 1
// is shared by all B contexts (each context still has its own y, hence its own θ and label noise): the products
// x_i·W_x, the cost that grows with D, are then computed once for the batch instead of once per context.
// layers[ℓ−1] holds the weights of MLP_ℓ (Wp nil for ℓ = 1, [ℓ−1, H] after); readout maps R^L → R^D. The workspace
// enters the key MLPs multiplied by keyGain and the readout multiplied by gain (eq. 8). A non-nil patch replaces layer ℓ's keys by the donor's where its mask is 1, before φ_ℓ
// is taken, so later layers read the corrupted workspace. Panics on bad shapes.
func ForwardA(x, y *Node, layers []KeyWeights, readout MLPWeights, act string, keyGain, gain float64,
	patch *Patch) Output {
	B, N, D, _ := checkTokens("ForwardA", x, y)
	Bx := x.Shape().Dim(0)
	L := len(layers)
	if L == 0 {
		panic(errors.New("linattn.ForwardA: no layers"))
	}
	mask := patchMask("ForwardA", patch, B, N, L)
	x2 := Reshape(x, Bx*N, D) // 2-D products are the fast path of the pure-Go backend
	keys := make([]*Node, L)
	phis := make([]*Node, L)
	for l := 1; l <= L; l++ {
		w := layers[l-1]
		if w.Wx.Rank() != 2 || w.Wx.Shape().Dim(0) != D || w.B1.Rank() != 1 || w.W2.Rank() != 1 || !w.B2.IsScalar() ||
			(l == 1) != (w.Wp == nil) {
			panic(errors.Errorf("linattn.ForwardA: layer %d weights w_x=%s, b_1=%s, w_2=%s, b_2=%s, w_p present=%v: "+
				"want [D=%d, H], [H], [H], [], and w_p only after layer 1", l, w.Wx.Shape(), w.B1.Shape(),
				w.W2.Shape(), w.B2.Shape(), w.Wp != nil, D))
		}
		H := w.Wx.Shape().Dim(1)
		bias := Reshape(w.B1, 1, H) // [1, H]
		rows := Bx                  // layer 1 reads no workspace: with shared x its keys are shared too
		if l > 1 {
			rows = B
			if w.Wp.Rank() != 2 || w.Wp.Shape().Dim(0) != l-1 || w.Wp.Shape().Dim(1) != H {
				panic(errors.Errorf("linattn.ForwardA: layer %d w_p.shape=%s, want [%d, H=%d]", l, w.Wp.Shape(), l-1, H))
			}
			prev := MulScalar(Stack(phis[:l-1], 1), keyGain) // g_k·p_{ℓ−1}: [B, ℓ−1]
			bias = Add(MatMul(prev, w.Wp), bias)             // [B, H]: the p-block of the first layer, per context
		}
		// Implicit broadcasting of the size-1 axes ([Bx, N, H] + [B|1, 1, H]): the bias is shared by the context's
		// tokens and, with shared x, the x-part by the contexts, and neither is copied out to [rows, N, H] first.
		pre := Add(Reshape(MatMul(x2, w.Wx), Bx, N, H), Reshape(bias, bias.Shape().Dim(0), 1, H))
		h := Activate(pre, act) // [rows, N, H]
		h.AssertDims(rows, N, H)
		// An elementwise product and a reduction, not a matrix–vector Dot: the pure-Go backend's DotGeneral copies its
		// [rows·N, H] operand into a normalised layout, forward and backward.
		k := Add(ReduceSum(Mul(h, Reshape(w.W2, 1, 1, H)), 2), w.B2) // [rows, N]
		keys[l-1] = patchLayer(broadcastBatch(k, B), patch, mask, l)
		phis[l-1] = channel(keys[l-1], y)
	}
	p := Stack(phis, 1) // [B, L]
	theta := MLP(MulScalar(p, gain), readout, act)
	theta.AssertDims(B, readout.W2.Shape().Dim(1))
	return Output{Theta: theta, Workspace: p, Keys: Stack(keys, 2)}
}

// patchLayer applies eq. (7) to the keys k [B, N] of layer l (1-based); mask is [B|1, L] or nil.
func patchLayer(k *Node, patch *Patch, mask *Node, l int) *Node {
	if mask == nil {
		return k
	}
	B, N := k.Shape().Dim(0), k.Shape().Dim(1)
	ml := Slice(mask, AxisRange(), AxisElem(l-1))                                      // [B|1, 1]
	donor := Reshape(Slice(patch.Keys, AxisRange(), AxisRange(), AxisElem(l-1)), B, N) // [B, N]
	k = Add(k, Mul(ml, Sub(donor, k)))
	k.AssertDims(B, N)
	return k
}

// channel is eq. (1) for one channel: keys k [B, N], y [B, N] → φ [B].
func channel(k, y *Node) *Node {
	return MulScalar(ReduceSum(Mul(k, y), 1), 1/float64(k.Shape().Dim(1)))
}

// ForwardAPrime is model A′ of spec §5, eq. (9): x [B|1, N, D] (batch 1: shared, see ForwardA), y [B, N] → Output
// with L = len(queries) + 1 layers. Layer 1's query is q1 [D]; layer ℓ ≥ 2's is queries[ℓ−2] applied to g·p_{ℓ−1}
// (an MLP R^{ℓ−1} → R^D), and the readout reads g·p (eq. 8, g = gain). The keys
// reported (and patched) are the scalar channel keys q_ℓᵀx_i, so key patching is query patching. Panics on bad
// shapes.
func ForwardAPrime(x, y, q1 *Node, queries []MLPWeights, readout MLPWeights, act string, gain float64,
	patch *Patch) Output {
	B, N, D, shared := checkTokens("ForwardAPrime", x, y)
	if !q1.Shape().Equal(shapes.Make(x.DType(), D)) {
		panic(errors.Errorf("linattn.ForwardAPrime: q_1.shape=%s, want [D=%d]", q1.Shape(), D))
	}
	L := len(queries) + 1
	mask := patchMask("ForwardAPrime", patch, B, N, L)
	// Without a patch φ_ℓ = q_ℓᵀv with v = (1/N) Σ_i x_i y_i, computed once: O(B·D) per layer instead of O(B·N·D).
	// The keys are then an output only, and an executable that does not return them never computes them.
	var v *Node
	switch {
	case mask == nil && shared:
		v = MulScalar(MatMul(y, Reshape(x, N, D)), 1/float64(N)) // [B, N]·[N, D]
	case mask == nil:
		v = MulScalar(ReduceSum(Mul(x, BroadcastToDims(Reshape(y, B, N, 1), B, N, D)), 1), 1/float64(N)) // [B, D]
	}
	keys := make([]*Node, L)
	phis := make([]*Node, L)
	for l := 1; l <= L; l++ {
		var q *Node
		if l == 1 {
			q = BroadcastToDims(Reshape(q1, 1, D), B, D)
		} else {
			q = MLP(MulScalar(Stack(phis[:l-1], 1), gain), queries[l-2], act) // [B, D]
		}
		q.AssertDims(B, D)
		var k *Node // [B, N]: the channel key q_ℓᵀx_i
		if shared {
			k = DotGeneral(q, []int{1}, nil, Reshape(x, N, D), []int{1}, nil)
		} else {
			k = Einsum("bnd,bd->bn", x, q)
		}
		keys[l-1] = patchLayer(k, patch, mask, l)
		if v != nil {
			phis[l-1] = ReduceSum(Mul(q, v), 1) // [B]
		} else {
			phis[l-1] = channel(keys[l-1], y)
		}
	}
	p := Stack(phis, 1) // [B, L]
	theta := MLP(MulScalar(p, gain), readout, act)
	return Output{Theta: theta, Workspace: p, Keys: Stack(keys, 2)}
}

// ForwardB is model B, eq. (5): x [B|1, N, D] (batch 1: shared, see ForwardA), y [B, N] → Output with M heads;
// readout maps R^M → R^D and reads the workspace multiplied by gain (eq. 8). Panics on bad shapes.
func ForwardB(x, y *Node, heads HeadWeights, readout MLPWeights, act string, gain float64, patch *Patch) Output {
	B, N, D, _ := checkTokens("ForwardB", x, y)
	Bx := x.Shape().Dim(0)
	if heads.W1.Rank() != 3 || heads.W1.Shape().Dim(1) != D {
		panic(errors.Errorf("linattn.ForwardB: w_1.shape=%s, want [M, D=%d, H]", heads.W1.Shape(), D))
	}
	M, H := heads.W1.Shape().Dim(0), heads.W1.Shape().Dim(2)
	if !heads.B1.Shape().Equal(shapes.Make(heads.B1.DType(), M, H)) ||
		!heads.W2.Shape().Equal(shapes.Make(heads.W2.DType(), M, H)) ||
		!heads.B2.Shape().Equal(shapes.Make(heads.B2.DType(), M)) {
		panic(errors.Errorf("linattn.ForwardB: b_1=%s, w_2=%s, b_2=%s, want [M=%d, H=%d], [M, H], [M]",
			heads.B1.Shape(), heads.W2.Shape(), heads.B2.Shape(), M, H))
	}
	mask := patchMask("ForwardB", patch, B, N, M)
	w1 := Reshape(TransposeAllAxes(heads.W1, 1, 0, 2), D, M*H) // [D, M·H]: all heads in one product
	pre := Add(MatMul(Reshape(x, Bx*N, D), w1), BroadcastToDims(Reshape(heads.B1, 1, M*H), Bx*N, M*H))
	h := Reshape(Activate(pre, act), Bx*N, M, H)
	w2 := BroadcastToDims(Reshape(heads.W2, 1, M, H), Bx*N, M, H)
	keys := Reshape(Add(ReduceSum(Mul(h, w2), 2), BroadcastToDims(Reshape(heads.B2, 1, M), Bx*N, M)), Bx, N, M)
	if mask != nil {
		keys = patchAll(broadcastBatch(keys, B), patchKeys(patch), mask)
	}
	phi := Statistic(keys, y) // [B, M]
	keys = broadcastBatch(keys, B)
	keys.AssertDims(B, N, M)
	theta := MLP(MulScalar(phi, gain), readout, act)
	return Output{Theta: theta, Workspace: phi, Keys: keys}
}

// ForwardC is model C, eq. (6): x [B|1, N, D] (batch 1: shared, see ForwardA), y [B, N], wk [M, D], wo [D, M] →
// Output with θ̂ = W_O φ. Panics on bad shapes.
func ForwardC(x, y, wk, wo *Node, patch *Patch) Output {
	B, N, D, _ := checkTokens("ForwardC", x, y)
	Bx := x.Shape().Dim(0)
	if wk.Rank() != 2 || wk.Shape().Dim(1) != D || wo.Rank() != 2 || wo.Shape().Dim(0) != D ||
		wo.Shape().Dim(1) != wk.Shape().Dim(0) {
		panic(errors.Errorf("linattn.ForwardC: w_k.shape=%s, w_o.shape=%s: want [M, D=%d] and [D, M]",
			wk.Shape(), wo.Shape(), D))
	}
	M := wk.Shape().Dim(0)
	mask := patchMask("ForwardC", patch, B, N, M)
	keys := Reshape(DotGeneral(Reshape(x, Bx*N, D), []int{1}, nil, wk, []int{1}, nil), Bx, N, M) // [B|1, N, M]
	if mask != nil {
		keys = patchAll(broadcastBatch(keys, B), patchKeys(patch), mask)
	}
	phi := Statistic(keys, y) // [B, M]
	keys = broadcastBatch(keys, B)
	theta := DotGeneral(phi, []int{1}, nil, wo, []int{1}, nil) // [B, D]
	theta.AssertDims(B, D)
	return Output{Theta: theta, Workspace: phi, Keys: keys}
}

// patchKeys returns the donor keys of p, or nil.
func patchKeys(p *Patch) *Node {
	if p == nil {
		return nil
	}
	return p.Keys
}
