package deltanet

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/pkg/errors"
)

// QKNormEpsilon is the ε of the L2 normalisation of q and k, x/√(‖x‖² + ε) (docs/spec/protot.md §9.2).
const QKNormEpsilon = 1e-6

// SiLU returns x·σ(x) elementwise.
func SiLU(x *Node) *Node { return Mul(x, Logistic(x)) }

// UnitNormalize returns x/√(‖x‖² + 1e-6) over the last axis: x [..., d] → [..., d].
func UnitNormalize(x *Node) *Node {
	return Div(x, Sqrt(AddScalar(ReduceAndKeep(Square(x), ReduceSum, -1), QKNormEpsilon)))
}

// ShortConv is the causal depthwise convolution of eq. (1), PyTorch tap order (the last tap multiplies the current
// token), no bias: y_t[c] = Σ_{i<K} kernel[c, i]·x_{t−K+1+i}[c] with x_s = 0 for s < 0.
// x [B, T, C], kernel [C, K] → [B, T, C]. Panics on mismatched shapes.
func ShortConv(x, kernel *Node) *Node {
	if x.Rank() != 3 || kernel.Rank() != 2 || kernel.Shape().Dim(0) != x.Shape().Dim(2) || kernel.DType() != x.DType() {
		panic(errors.Errorf("deltanet.ShortConv: x.shape=%s, kernel.shape=%s, want [B, T, C] and [C, K] of one dtype",
			x.Shape(), kernel.Shape()))
	}
	B, T, C, K := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2), kernel.Shape().Dim(1)
	padded := x
	if K > 1 {
		padded = Concatenate([]*Node{Zeros(x.Graph(), shapes.Make(x.DType(), B, K-1, C)), x}, 1) // [B, T+K−1, C]
	}
	var y *Node
	for i := 0; i < K; i++ {
		tap := Reshape(Slice(kernel, AxisRange(), AxisElem(i)), 1, 1, C)
		term := Mul(Slice(padded, AxisRange(), AxisRange(i, i+T), AxisRange()), tap)
		if y == nil {
			y = term
		} else {
			y = Add(y, term)
		}
	}
	return y
}

// DeltaRule runs the delta rule of eq. (4)–(5) over a sequence with the chunkwise form of eq. (6)–(10):
// q, k [B, T, H, d_k], v [B, T, H, d_v], beta [B, T, H] → o [B, T, H, d_v] with o_t = S_tᵀ q_t, starting from
// S_{−1} = 0. chunk (a power of two) is C; 1 gives the token-by-token recurrence. The intra-chunk work is batched
// over all chunks; only eq. (8) and (10), the state update, run chunk after chunk. Panics on bad shapes or chunk.
func DeltaRule(q, k, v, beta *Node, chunk int) *Node {
	if q.Rank() != 4 || !q.Shape().Equal(k.Shape()) || v.Rank() != 4 || beta.Rank() != 3 ||
		v.Shape().Dim(0) != q.Shape().Dim(0) || v.Shape().Dim(1) != q.Shape().Dim(1) || v.Shape().Dim(2) != q.Shape().Dim(2) ||
		beta.Shape().Dim(0) != q.Shape().Dim(0) || beta.Shape().Dim(1) != q.Shape().Dim(1) ||
		beta.Shape().Dim(2) != q.Shape().Dim(2) || v.DType() != q.DType() || beta.DType() != q.DType() {
		panic(errors.Errorf("deltanet.DeltaRule: q.shape=%s, k.shape=%s, v.shape=%s, beta.shape=%s: want q, k "+
			"[B, T, H, d_k], v [B, T, H, d_v], beta [B, T, H] of one dtype", q.Shape(), k.Shape(), v.Shape(), beta.Shape()))
	}
	if chunk < 1 || chunk&(chunk-1) != 0 {
		panic(errors.Errorf("deltanet.DeltaRule: chunk=%d, want a power of two ≥ 1", chunk))
	}
	B, T, H, dk, dv := q.Shape().Dim(0), q.Shape().Dim(1), q.Shape().Dim(2), q.Shape().Dim(3), v.Shape().Dim(3)
	C := effectiveChunk(chunk, T)
	N := (T + C - 1) / C
	g, dtype := q.Graph(), q.DType()
	// Padding with k = v = 0 and β = 0 leaves the state unchanged; the padded outputs are dropped at the end.
	pad := func(x *Node) *Node {
		if N*C == T {
			return x
		}
		dims := x.Shape().Clone().Dimensions
		dims[1] = N*C - T
		return Concatenate([]*Node{x, Zeros(g, shapes.Make(dtype, dims...))}, 1)
	}
	// toChunks maps [B, T, H, d] to [N, B·H, C, d], chunk-major so that the chunk loop slices contiguous memory.
	toChunks := func(x *Node) *Node {
		d := x.Shape().Dim(3)
		return Reshape(TransposeAllAxes(Reshape(pad(x), B, N, C, H, d), 1, 0, 3, 2, 4), N, B*H, C, d)
	}
	qc, kc, vc := toChunks(q), toChunks(k), toChunks(v)
	bc := Reshape(TransposeAllAxes(Reshape(pad(beta), B, N, C, H), 1, 0, 3, 2), N, B*H, C, 1)
	kb, vb := Mul(kc, bc), Mul(vc, bc) // diag(β)K, diag(β)V

	G := N * B * H
	tInv := unitLowerInverse(Reshape(kb, G, C, dk), Reshape(kc, G, C, dk)) // (I + A)⁻¹ of eq. (6): [G, C, C]
	tInv = Reshape(tInv, N, B*H, C, C)
	// The loop keeps Sᵀ and U′ᵀ so that every product contracts the last axis of both operands, the layout the
	// pure-Go backend multiplies without transposing.
	w := Einsum("nbij,nbjd->nbid", tInv, kb)                   // eq. (7): W = Γ K
	uT := Einsum("nbdj,nbij->nbdi", Transpose(vb, 2, 3), tInv) // Uᵀ = Vᵀ Γᵀ: [N, B·H, d_v, C]
	kT := Transpose(kc, 2, 3)                                  // [N, B·H, d_k, C]
	causal := ConstAsDType(g, dtype, lowerTriangularOnes(C))
	p := Mul(Einsum("nbid,nbjd->nbij", qc, kc), Reshape(causal, 1, 1, C, C)) // (Q Kᵀ) ⊙ tril_incl: [N, B·H, C, C]

	at := func(x *Node, n int) *Node { // chunk n of [N, …] → […]
		return Reshape(Slice(x, AxisElem(n)), x.Shape().Dimensions[1:]...)
	}
	uPrimeT := make([]*Node, N) // U′ᵀ of eq. (8), per chunk: [B·H, d_v, C]
	statesT := make([]*Node, N) // Sᵀ entering each chunk: [B·H, d_v, d_k]
	var sT *Node
	for n := 0; n < N; n++ {
		un := at(uT, n)
		if sT == nil {
			uPrimeT[n] = un
			statesT[n] = Zeros(g, shapes.Make(dtype, B*H, dv, dk))
		} else {
			uPrimeT[n] = Sub(un, Einsum("bed,bid->bei", sT, at(w, n))) // (W S)ᵀ = Sᵀ Wᵀ
			statesT[n] = sT
		}
		if n < N-1 {
			update := Einsum("bei,bdi->bed", uPrimeT[n], at(kT, n)) // eq. (10): (Kᵀ U′)ᵀ = U′ᵀ K
			if sT == nil {
				sT = update
			} else {
				sT = Add(sT, update)
			}
		}
	}
	o := Einsum("nbij,nbej->nbie", p, Stack(uPrimeT, 0)) // eq. (9), intra-chunk part: [N, B·H, C, d_v]
	if N > 1 {
		o = Add(o, Einsum("nbid,nbed->nbie", qc, Stack(statesT, 0))) // eq. (9): + Q S0
	}
	o = Reshape(TransposeAllAxes(Reshape(o, N, B, H, C, dv), 1, 0, 3, 2, 4), B, N*C, H, dv)
	if N*C != T {
		o = Slice(o, AxisRange(), AxisRange(0, T))
	}
	o.AssertDims(B, T, H, dv)
	return o
}

// lowerTriangularOnes returns the C×C matrix with ones where j ≤ i.
func lowerTriangularOnes(C int) [][]float64 {
	m := make([][]float64, C)
	for i := range m {
		m[i] = make([]float64, C)
		for j := 0; j <= i; j++ {
			m[i][j] = 1
		}
	}
	return m
}

// unitLowerInverse returns (I + A)⁻¹ with A = tril(kb·kᵀ, −1) for kb, k [G, C, d] → [G, C, C] (C a power of two).
// The value comes from invertByDoubling; the gradient is the analytic one of a matrix inverse, dL/dA = −Xᵀ·Ḡ·Xᵀ
// (X the inverse, Ḡ = dL/dX), two batched C×C products instead of back-propagating through log₂C levels of small
// products. It is a first-order rule: a second derivative through it would miss terms.
func unitLowerInverse(kb, k *Node) *Node {
	C := kb.Shape().Dim(1)
	X := invertByDoubling(StopGradient(kb), StopGradient(k))
	strictLower := make([][]float64, C)
	for i := range strictLower {
		strictLower[i] = make([]float64, C)
		for j := 0; j < i; j++ {
			strictLower[i][j] = 1
		}
	}
	A := Mul(Einsum("gid,gjd->gij", kb, k), Reshape(ConstAsDType(kb.Graph(), kb.DType(), strictLower), 1, C, C))
	// A − StopGradient(A) is exactly 0, so the value is X; its gradient carries the custom rule to A.
	return IdentityWithCustomGradient(Add(X, Sub(A, StopGradient(A))), func(_, v *Node) *Node {
		vXt := Einsum("gjl,gkl->gjk", v, X)        // Ḡ·Xᵀ
		return Neg(Einsum("gji,gjk->gik", X, vXt)) // −Xᵀ·Ḡ·Xᵀ
	})
}

// invertByDoubling returns (I + tril(kb·kᵀ, −1))⁻¹ for kb, k [G, C, d] → [G, C, C], C a power of two, by block
// doubling: with X₁, X₂ the inverses of two consecutive diagonal blocks of size b and M₂₁ the block below the
// diagonal between them,
//
//	[[I + A₁₁, 0], [M₂₁, I + A₂₂]]⁻¹ = [[X₁, 0], [−X₂·M₂₁·X₁, X₂]],
//
// starting from 1×1 blocks (the diagonal of I + A is 1) and doubling b up to C: log₂C levels of batched matrix
// products, (2/3)·C³ + C²·d multiply-adds per chunk. Every intermediate is an inverse of a diagonal block of the
// same kind of matrix, so, unlike the Neumann product Π(I + (−A)^(2^i)), nothing grows with C (with equal keys and
// β = 1, A^32 holds binomial coefficients up to C(62, 31) ≈ 5e17 at C = 64; TestDeltaRule_EqualKeysFloat32).
func invertByDoubling(kb, k *Node) *Node {
	G, C, d := kb.Shape().Dim(0), kb.Shape().Dim(1), kb.Shape().Dim(2)
	g, dtype := kb.Graph(), kb.DType()
	X := Ones(g, shapes.Make(dtype, G, C, 1, 1)) // inverses of the 1×1 diagonal blocks: [G, C/b, b, b]
	for b := 1; b < C; b *= 2 {
		n := C / (2 * b)
		half := func(x *Node, i, last int) *Node { // block pair half i: [G, n, 2, b, last] → [G, n, b, last]
			return Reshape(Slice(Reshape(x, G, n, 2, b, last), AxisRange(), AxisRange(), AxisElem(i)), G, n, b, last)
		}
		X1, X2 := half(X, 0, b), half(X, 1, b)
		m21 := Einsum("gnid,gnjd->gnij", half(kb, 1, d), half(k, 0, d)) // rows of block 2p+1, columns of block 2p
		y := Neg(Einsum("gnij,gnjk->gnik", Einsum("gnij,gnjk->gnik", X2, m21), X1))
		zero := Zeros(g, shapes.Make(dtype, G, n, b, b))
		X = Concatenate([]*Node{Concatenate([]*Node{X1, zero}, -1), Concatenate([]*Node{y, X2}, -1)}, -2) // [G, n, 2b, 2b]
	}
	return Reshape(X, G, C, C)
}

// DeltaRuleStep is one step of eq. (4)–(5): q, k [B, H, d_k], v [B, H, d_v], beta [B, H] and the state
// S [B, H, d_k, d_v] → o = S′ᵀq [B, H, d_v] and S′ = S + k·(β(v − Sᵀk))ᵀ. Panics on mismatched shapes.
func DeltaRuleStep(q, k, v, beta, S *Node) (o, S2 *Node) {
	if q.Rank() != 3 || !q.Shape().Equal(k.Shape()) || v.Rank() != 3 || beta.Rank() != 2 || S.Rank() != 4 ||
		S.Shape().Dim(0) != q.Shape().Dim(0) || S.Shape().Dim(1) != q.Shape().Dim(1) ||
		S.Shape().Dim(2) != q.Shape().Dim(2) || S.Shape().Dim(3) != v.Shape().Dim(2) {
		panic(errors.Errorf("deltanet.DeltaRuleStep: q.shape=%s, k.shape=%s, v.shape=%s, beta.shape=%s, S.shape=%s: "+
			"want q, k [B, H, d_k], v [B, H, d_v], beta [B, H], S [B, H, d_k, d_v]",
			q.Shape(), k.Shape(), v.Shape(), beta.Shape(), S.Shape()))
	}
	kS := Einsum("bhd,bhde->bhe", k, S)                    // Sᵀk: [B, H, d_v]
	u := Mul(InsertAxes(beta, -1), Sub(v, kS))             // eq. (4)
	S2 = Add(S, Mul(InsertAxes(k, -1), InsertAxes(u, -2))) // eq. (5): S + k uᵀ
	o = Einsum("bhd,bhde->bhe", q, S2)                     // S′ᵀq
	return o, S2
}

// Weights holds the parameters of one DeltaNet layer (names in doc.go); d = d_k = d_v, K = ConvSize.
type Weights struct {
	Query, Key, Value             *Node // [D, H·d] each
	QueryConv, KeyConv, ValueConv *Node // [H·d, K] each
	Beta                          *Node // [D, H]
	OutNorm                       *Node // [d], the gain of the per-head output RMSNorm
	Output                        *Node // [H·d, D]
}

// check panics unless every weight has the shape cfg gives for width D and dtype.
func (w Weights) check(cfg Config, D int, dtype dtypes.DType) {
	H, d, K := cfg.NumHeads, cfg.HeadSize(D), cfg.ConvSize
	for _, c := range []struct {
		name string
		node *Node
		dims []int
	}{
		{VarQuery, w.Query, []int{D, H * d}}, {VarKey, w.Key, []int{D, H * d}}, {VarValue, w.Value, []int{D, H * d}},
		{VarQueryConv, w.QueryConv, []int{H * d, K}}, {VarKeyConv, w.KeyConv, []int{H * d, K}},
		{VarValueConv, w.ValueConv, []int{H * d, K}}, {VarBeta, w.Beta, []int{D, H}}, {VarOutNorm, w.OutNorm, []int{d}},
		{VarOutput, w.Output, []int{H * d, D}},
	} {
		if c.node == nil {
			panic(errors.Errorf("deltanet: weight %q is nil", c.name))
		}
		if c.node.DType() != dtype || !c.node.Shape().Equal(shapes.Make(dtype, c.dims...)) {
			panic(errors.Errorf("deltanet: weight %q shape %s, want %s%v", c.name, c.node.Shape(), dtype, c.dims))
		}
	}
}

// features computes eq. (1)–(3) from the concatenated pre-conv projections: conv [B, T, 3·H·d] (already
// convolved) and x [B, T, D] → q, k, v [B, T, H, d] and β [B, T, H].
func features(conv, x *Node, w Weights, cfg Config) (q, k, v, beta *Node) {
	B, T, D := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	H, d := cfg.NumHeads, cfg.HeadSize(D)
	act := SiLU(conv)
	part := func(i int) *Node {
		return Reshape(Slice(act, AxisRange(), AxisRange(), AxisRange(i*H*d, (i+1)*H*d)), B, T, H, d)
	}
	q = MulScalar(UnitNormalize(part(0)), 1/math.Sqrt(float64(d)))
	k = UnitNormalize(part(1))
	v = part(2)
	beta = Logistic(Einsum("btd,dh->bth", x, w.Beta))
	return q, k, v, beta
}

// projectQKV returns x·[W_q | W_k | W_v]: x [B, T, D] → [B, T, 3·H·d], one product instead of three.
func projectQKV(x *Node, w Weights) *Node {
	return Einsum("btd,de->bte", x, Concatenate([]*Node{w.Query, w.Key, w.Value}, 1))
}

// convKernel returns the three kernels stacked in the order of projectQKV: [3·H·d, K].
func convKernel(w Weights) *Node {
	return Concatenate([]*Node{w.QueryConv, w.KeyConv, w.ValueConv}, 0)
}

// output applies eq. (11): o [B, T, H, d] → per-head RMSNorm with gain [d], concatenated, times W_o → [B, T, D].
func output(o *Node, w Weights, cfg Config) *Node {
	B, T, H, d := o.Shape().Dim(0), o.Shape().Dim(1), o.Shape().Dim(2), o.Shape().Dim(3)
	rms := Sqrt(AddScalar(ReduceAndKeep(Square(o), ReduceMean, -1), cfg.NormEpsilon))
	normed := Mul(Div(o, rms), Reshape(w.OutNorm, 1, 1, 1, d))
	return Einsum("bte,ed->btd", Reshape(normed, B, T, H*d), w.Output)
}

func checkInput(name string, cfg Config, x *Node) {
	if x.Rank() != 3 {
		panic(errors.Errorf("deltanet.%s: x.shape=%s, want [B, T, D]", name, x.Shape()))
	}
	if err := cfg.Validate(x.Shape().Dim(2)); err != nil {
		panic(errors.WithMessagef(err, "deltanet.%s", name))
	}
}

// Mix is the DeltaNet layer, eq. (1)–(11), with every weight given: x [B, T, D] → [B, T, D], causal. The delta
// rule runs in chunks of cfg.ChunkSize. Panics if cfg.Validate(D) fails or a weight's shape does not match.
func Mix(x *Node, w Weights, cfg Config) *Node {
	checkInput("Mix", cfg, x)
	B, T, D := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	w.check(cfg, D, x.DType())
	q, k, v, beta := features(ShortConv(projectQKV(x, w), convKernel(w)), x, w, cfg)
	y := output(DeltaRule(q, k, v, beta, cfg.ChunkSize), w, cfg)
	y.AssertDims(B, T, D)
	return y
}

// StateShapes returns the decoding state of one layer: the last ConvSize pre-conv projections [B, K, 3·H·d]
// (the current token's last) and the delta-rule state S [B, H, d, d]. Both start at zero. Panics if
// cfg.Validate(width) fails.
func StateShapes(cfg Config, width, batch int, dtype dtypes.DType) []shapes.Shape {
	if err := cfg.Validate(width); err != nil {
		panic(errors.WithMessage(err, "deltanet.StateShapes"))
	}
	H, d := cfg.NumHeads, cfg.HeadSize(width)
	return []shapes.Shape{shapes.Make(dtype, batch, cfg.ConvSize, 3*H*d), shapes.Make(dtype, batch, H, d, d)}
}

// MixStep runs Mix for one token: x [B, 1, D], convState [B, K, 3·H·d] and S [B, H, d, d] (StateShapes) →
// y [B, 1, D] and the new states. After steps 0…t from zero states, y equals Mix's output at t. Panics on bad
// shapes.
func MixStep(x *Node, w Weights, cfg Config, convState, S *Node) (y, convState2, S2 *Node) {
	checkInput("MixStep", cfg, x)
	B, D := x.Shape().Dim(0), x.Shape().Dim(2)
	w.check(cfg, D, x.DType())
	want := StateShapes(cfg, D, B, x.DType())
	if x.Shape().Dim(1) != 1 || !convState.Shape().Equal(want[0]) || !S.Shape().Equal(want[1]) {
		panic(errors.Errorf("deltanet.MixStep: x.shape=%s, convState.shape=%s, S.shape=%s: want [B, 1, D], %s, %s",
			x.Shape(), convState.Shape(), S.Shape(), want[0], want[1]))
	}
	K := cfg.ConvSize
	window := projectQKV(x, w) // [B, 1, 3·H·d]
	if K > 1 {
		window = Concatenate([]*Node{Slice(convState, AxisRange(), AxisRange(1, K)), window}, 1) // [B, K, 3·H·d]
	}
	conv := ReduceAndKeep(Mul(window, InsertAxes(Transpose(convKernel(w), 0, 1), 0)), ReduceSum, 1) // [B, 1, 3·H·d]
	q, k, v, beta := features(conv, x, w, cfg)
	o, S2 := DeltaRuleStep(Squeeze(q, 1), Squeeze(k, 1), Squeeze(v, 1), Squeeze(beta, 1), S)
	y = output(InsertAxes(o, 1), w, cfg)
	y.AssertDims(B, 1, D)
	return y, window, S2
}
