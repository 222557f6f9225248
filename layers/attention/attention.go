package attention

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/fused"
	"github.com/protolab/protolab/layers/hook"
)

// Scope is the name of the sub-scope Mixer and Step create their variables in.
const Scope = "attention"

// Variable names of the projections, under Scope. Each is a matrix applied on the right (x·W):
// q [D, H·D_h], k [D, H_kv·D_h], v [D, H_kv·D_h], o [H·D_h, D]. Within a projection's output, head h occupies
// columns h·D_h … (h+1)·D_h−1, and each head's first and second halves form the RoPE pairs.
const (
	VarQuery  = "q"
	VarKey    = "k"
	VarValue  = "v"
	VarOutput = "o"
)

// CausalMask returns the boolean mask [T, T] that is true where key position s ≤ query position t.
func CausalMask(g *Graph, T int) *Node {
	return LowerTriangular(g, T)
}

// RoPE applies rotary position embeddings, rotate-half convention: with F = D_h/2, x₁ = x[..., :F],
// x₂ = x[..., F:], and angle a = p·ω_i with ω_i = base^(−2i/D_h),
//
//	RoPE(x)[..., i]   = x₁[i]·cos a − x₂[i]·sin a
//	RoPE(x)[..., F+i] = x₂[i]·cos a + x₁[i]·sin a.
//
// x: [B, T, H, D_h]; positions: [T] or [B, T], any integer dtype → [B, T, H, D_h]. The angles are computed in the
// graph from positions in x's dtype, so the same code serves a full pass (positions 0…T−1) and one decoding step
// (positions [pos]). It is computed as x ⊙ [cos, cos] + swap(x) ⊙ [−sin, sin], with swap(x) = [x₂, x₁] the halves
// exchanged (a Reverse of the [..., 2, F] view): each output element is the same two products and one addition as in
// the formula, and no product is formed on a broadcast [..., 2, 2, F] tensor. Panics on bad ranks or dims, an odd
// D_h, or non-integer positions.
func RoPE(x, positions *Node, base float64) *Node {
	if x.Rank() != 4 {
		panic(errors.Errorf("attention.RoPE: x.shape=%s, want [B, T, H, D_h]", x.Shape()))
	}
	B, T, H, Dh := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2), x.Shape().Dim(3)
	if Dh%2 != 0 {
		panic(errors.Errorf("attention.RoPE: head width D_h=%d must be even", Dh))
	}
	if !positions.DType().IsInt() {
		panic(errors.Errorf("attention.RoPE: positions dtype %s, want an integer type", positions.DType()))
	}
	F := Dh / 2
	g, dtype := x.Graph(), x.DType()
	omega := make([]float64, F)
	for i := range omega {
		omega[i] = math.Pow(base, -2*float64(i)/float64(Dh))
	}
	pos := ConvertDType(positions, dtype)
	Bp := 1 // batch of the positions: 1 broadcasts over B.
	switch {
	case positions.Rank() == 1 && positions.Shape().Dim(0) == T:
	case positions.Rank() == 2 && positions.Shape().Dim(0) == B && positions.Shape().Dim(1) == T:
		Bp = B
	default:
		panic(errors.Errorf("attention.RoPE: positions.shape=%s, want [T=%d] or [B=%d, T=%d]",
			positions.Shape(), T, B, T))
	}
	angles := Mul(Reshape(pos, Bp, T, 1), Reshape(ConstAsDType(g, dtype, omega), 1, 1, F)) // [Bp, T, F]
	cos, sin := Cos(angles), Sin(angles)
	cosCos := Reshape(Concatenate([]*Node{cos, cos}, -1), Bp, T, 1, Dh)      // [Bp, T, 1, D_h]
	sinSin := Reshape(Concatenate([]*Node{Neg(sin), sin}, -1), Bp, T, 1, Dh) // [Bp, T, 1, D_h]
	swapped := Reshape(Reverse(Reshape(x, B, T, H, 2, F), 3), B, T, H, Dh)   // [x₂, x₁]
	return Add(Mul(x, cosCos), Mul(swapped, sinSin))
}

// Attend is scaled dot-product attention with a boolean mask:
//
//	out[b, t, h] = Σ_s softmax_s( ⟨q[b, t, h], k[b, s, h/G]⟩ / √D_h  (only where mask) ) · v[b, s, h/G]
//
// q: [B, T, H, D_h]; k, v: [B, S, H_kv, D_h] with G = H/H_kv query heads per key/value head → [B, T, H, D_h].
// mask (true = may attend) is [T, S], [B, T, S] or [B|1, H|1, T, S]; nil attends everywhere. Masked logits are
// set to a large negative number, so masked keys get weight exactly 0 while a query row keeps at least one
// allowed key. Logits and the weighted sum are two batched DotGenerals over (b, kv-head). Panics on bad shapes.
func Attend(q, k, v, mask *Node) *Node {
	if q.Rank() != 4 {
		panic(errors.Errorf("attention.Attend: q.shape=%s, want [B, T, H, D_h]", q.Shape()))
	}
	B, T, H, Dh := q.Shape().Dim(0), q.Shape().Dim(1), q.Shape().Dim(2), q.Shape().Dim(3)
	out, _ := attend(q, k, v, 1, 2, mask) // [B, Hkv, T, G, D_h]
	return Reshape(TransposeAllAxes(out, 0, 2, 1, 3, 4), B, T, H, Dh)
}

// attend computes attention with k and v in either layout: [B, S, H_kv, D_h] (seqAxis=1, headAxis=2, the
// layout of a projection) or [B, H_kv, S, D_h] (seqAxis=2, headAxis=1, the KV cache). It returns
// [B, H_kv, T, G, D_h], the natural output order of the second DotGeneral, and the weights [B, H_kv, T, G, S].
func attend(q, k, v *Node, seqAxis, headAxis int, mask *Node) (out, probs *Node) {
	B, T, H, Dh := q.Shape().Dim(0), q.Shape().Dim(1), q.Shape().Dim(2), q.Shape().Dim(3)
	if k.Rank() != 4 || !k.Shape().Equal(v.Shape()) || k.Shape().Dim(0) != B || k.Shape().Dim(3) != Dh ||
		k.DType() != q.DType() {
		panic(errors.Errorf("attention: q.shape=%s, k.shape=%s, v.shape=%s: want k and v equal, "+
			"batch %d, head width %d, same dtype", q.Shape(), k.Shape(), v.Shape(), B, Dh))
	}
	S, Hkv := k.Shape().Dim(seqAxis), k.Shape().Dim(headAxis)
	if H%Hkv != 0 {
		panic(errors.Errorf("attention: %d key/value heads do not divide %d query heads", Hkv, H))
	}
	G := H / Hkv
	// Scaling q rather than the logits touches T·H·D_h values instead of T·H·S.
	q5 := Reshape(MulScalar(q, 1/math.Sqrt(float64(Dh))), B, T, Hkv, G, Dh)
	logits := DotGeneral(q5, []int{4}, []int{0, 2}, k, []int{3}, []int{0, headAxis}) // [B, Hkv, T, G, S]
	if mask != nil {
		m := maskLayout(mask, B, H, Hkv, T, S)
		g, dt := q.Graph(), q.DType()
		masked := Scalar(g, dt, maskedLogit(dt))
		if dt == dtypes.Float16 {
			// float16's masked logit (−65504) does not absorb a logit: the sum would round or overflow to −∞.
			logits = Where(BroadcastToDims(m, B, Hkv, T, G, S), logits, masked)
		} else {
			// An additive bias of the mask's own size, 0 where allowed and maskedLogit where masked, broadcast in
			// the Add: the same logits as a Where on the full-size mask (x + 0 = x, and −1e30 absorbs any logit
			// below 1e22 in float32, bfloat16 and float64), without a full-size mask, and with no gradient op (the
			// Add passes the cotangent through unchanged).
			dims := m.Shape().Dimensions
			bias := Where(m, BroadcastToDims(Scalar(g, dt, 0), dims...), BroadcastToDims(masked, dims...))
			logits = Add(logits, bias)
		}
	}
	probs = fused.Softmax(logits, -1)
	out = DotGeneral(probs, []int{4}, []int{0, 1}, v, []int{seqAxis}, []int{0, headAxis}) // [B, Hkv, T, G, D_h]
	out.AssertDims(B, Hkv, T, G, Dh)
	return out, probs
}

// Probe names of the attention layer (layers/hook), relative to its scope ("block_01.attention.z"). In Step
// T = 1 and S is the cache's capacity (weights beyond the position are 0).
const (
	ProbePattern = "pattern" // [B, H, T, S]: attention weights (observe only)
	ProbeZ       = "z"       // [B, T, H, D_h]: each head's output before the output projection (patchable)
)

// emitHeads reports the weights and head outputs of attend to layers/hook when a hook is attached to the graph
// and returns out, replaced by the hook's ProbeZ result when it patches it. scope is the layer's scope; nil
// (Mix, Attend) emits nothing.
func emitHeads(scope *model.Scope, out, probs *Node) *Node {
	if scope == nil || !hook.Active(out.Graph()) {
		return out
	}
	B, Hkv, T, G, Dh := out.Shape().Dim(0), out.Shape().Dim(1), out.Shape().Dim(2), out.Shape().Dim(3), out.Shape().Dim(4)
	S := probs.Shape().Dim(4)
	hook.Observe(scope, ProbePattern, Reshape(TransposeAllAxes(probs, 0, 1, 3, 2, 4), B, Hkv*G, T, S))
	z := Reshape(TransposeAllAxes(out, 0, 2, 1, 3, 4), B, T, Hkv*G, Dh)
	z2 := hook.Emit(scope, ProbeZ, z)
	if z2 == z {
		return out
	}
	return TransposeAllAxes(Reshape(z2, B, T, Hkv, G, Dh), 0, 2, 1, 3, 4)
}

// maskedLogit is the logit given to masked positions: finite, so that a fully masked row gives uniform weights
// instead of NaN, and so negative that exp(masked − max) is exactly 0 whenever the row has an allowed key.
func maskedLogit(dtype dtypes.DType) float64 {
	if dtype == dtypes.Float16 {
		return -65504
	}
	return -1e30
}

// maskLayout reshapes a boolean mask [T, S], [B, T, S] or [B|1, H|1, T, S] to the rank of the logits layout
// [B, H_kv, T, G, S], with size-1 axes where the mask does not vary (it broadcasts against the logits).
func maskLayout(mask *Node, B, H, Hkv, T, S int) *Node {
	if mask.DType() != dtypes.Bool {
		panic(errors.Errorf("attention: mask dtype %s, want Bool", mask.DType()))
	}
	G := H / Hkv
	bad := func() {
		panic(errors.Errorf("attention: mask.shape=%s, want [T=%d, S=%d], [B=%d, T, S] or [B|1, H=%d|1, T, S]",
			mask.Shape(), T, S, B, H))
	}
	m := mask
	switch m.Rank() {
	case 2:
		m = Reshape(m, 1, 1, T, S)
	case 3:
		if m.Shape().Dim(0) != B && m.Shape().Dim(0) != 1 {
			bad()
		}
		m = InsertAxes(m, 1)
	case 4:
	default:
		bad()
	}
	mb, mh := m.Shape().Dim(0), m.Shape().Dim(1)
	if (mb != B && mb != 1) || (mh != H && mh != 1) || m.Shape().Dim(2) != T || m.Shape().Dim(3) != S {
		bad()
	}
	if mh == 1 {
		m = Reshape(m, mb, 1, T, 1, S)
	} else {
		m = TransposeAllAxes(Reshape(m, mb, Hkv, G, T, S), 0, 1, 3, 2, 4) // [mb, Hkv, T, G, S]
	}
	return m
}

// withInit returns scope with N(0, std²) when std > 0, else PyTorch's nn.Linear default U(±1/√fanIn).
func withInit(scope *model.Scope, std float64, fanIn int) *model.Scope {
	if std > 0 {
		return scope.WithInitializer(initializer.RandomNormalFn(scope, std))
	}
	b := 1 / math.Sqrt(float64(fanIn))
	return scope.WithInitializer(initializer.RandomUniformFn(scope, -b, b))
}

// weights returns the projection variables [D, H·D_h], [D, H_kv·D_h] ×2 and [H·D_h, D], creating them under
// scope.At(Scope) with cfg's initialisation: q, k, v from InitStd, o from OutputInitStd (InitStd when 0); PyTorch's
// U(±1/√fan_in) when the standard deviation is 0.
func weights(scope *model.Scope, cfg Config, D int, dtype dtypes.DType) (wq, wk, wv, wo *model.Variable) {
	scope = scope.At(Scope)
	H, Hkv, Dh := cfg.NumHeads, cfg.KVHeads(), cfg.HeadSize(D)
	outStd := cfg.OutputInitStd
	if outStd == 0 {
		outStd = cfg.InitStd
	}
	in, out := withInit(scope, cfg.InitStd, D), withInit(scope, outStd, H*Dh)
	wq = in.VariableWithShape(VarQuery, shapes.Make(dtype, D, H*Dh))
	wk = in.VariableWithShape(VarKey, shapes.Make(dtype, D, Hkv*Dh))
	wv = in.VariableWithShape(VarValue, shapes.Make(dtype, D, Hkv*Dh))
	wo = out.VariableWithShape(VarOutput, shapes.Make(dtype, H*Dh, D))
	return
}

// project computes q [B, T, H, D_h] and k, v [B, T, H_kv, D_h] from x [B, T, D]; panics on weight shapes that
// do not match cfg.
func project(cfg Config, x, wq, wk, wv, wo *Node) (q, k, v *Node) {
	B, T, D := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	H, Hkv, Dh := cfg.NumHeads, cfg.KVHeads(), cfg.HeadSize(D)
	for _, w := range []struct {
		name string
		node *Node
		dims []int
	}{{VarQuery, wq, []int{D, H * Dh}}, {VarKey, wk, []int{D, Hkv * Dh}}, {VarValue, wv, []int{D, Hkv * Dh}},
		{VarOutput, wo, []int{H * Dh, D}}} {
		if w.node.DType() != x.DType() || w.node.Rank() != 2 || w.node.Shape().Dim(0) != w.dims[0] ||
			w.node.Shape().Dim(1) != w.dims[1] {
			panic(errors.Errorf("attention: weight %q shape %s, want %s%v", w.name, w.node.Shape(), x.DType(), w.dims))
		}
	}
	// Three products rather than one with the concatenated weights: on the pure-Go backend both took the same
	// time for the benchmark model (BenchmarkForwardBackward), and this form needs no Slice (whose gradient
	// needs workbench/gradfix on that backend).
	q = Reshape(Einsum("btd,de->bte", x, wq), B, T, H, Dh)
	k = Reshape(Einsum("btd,de->bte", x, wk), B, T, Hkv, Dh)
	v = Reshape(Einsum("btd,de->bte", x, wv), B, T, Hkv, Dh)
	return q, k, v
}

// outputProjection maps the attention output o [B, H_kv, T, G, D_h] through wo [H·D_h, D] to [B, T, D]: one
// DotGeneral contracting (kv-head, group, d), so the head-major layout needs no transpose.
func outputProjection(o, wo *Node) *Node {
	B, Hkv, T, G, Dh := o.Shape().Dim(0), o.Shape().Dim(1), o.Shape().Dim(2), o.Shape().Dim(3), o.Shape().Dim(4)
	D := wo.Shape().Dim(1)
	y := DotGeneral(o, []int{1, 3, 4}, nil, Reshape(wo, Hkv, G, Dh, D), []int{0, 1, 2}, nil) // [B, T, D]
	y.AssertDims(B, T, D)
	return y
}

func checkInput(name string, cfg Config, x *Node) {
	if x.Rank() != 3 {
		panic(errors.Errorf("attention.%s: x.shape=%s, want [B, T, D]", name, x.Shape()))
	}
	if err := cfg.Validate(x.Shape().Dim(2)); err != nil {
		panic(errors.WithMessagef(err, "attention.%s", name))
	}
}

// Mix is causal multi-head self-attention with RoPE, equations (1)–(5), with every weight given:
// x [B, T, D], wq [D, H·D_h], wk and wv [D, H_kv·D_h], wo [H·D_h, D] → [B, T, D]. Positions are 0…T−1. cfg.Kind
// chooses the full or the chunked computation of (4)–(5) (Config.Chunked); Mixer with a hook attached uses the full one.
// Panics if cfg.Validate(D) fails or a shape does not match.
func Mix(x, wq, wk, wv, wo *Node, cfg Config) *Node {
	return mix(nil, x, wq, wk, wv, wo, cfg)
}

// mix is Mix, emitting the probes under scope (the layer's scope) when scope is not nil.
func mix(scope *model.Scope, x, wq, wk, wv, wo *Node, cfg Config) *Node {
	checkInput("Mix", cfg, x)
	g := x.Graph()
	B, T, D := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	q, k, v := project(cfg, x, wq, wk, wv, wo)
	positions := Iota(g, shapes.Make(dtypes.Int32, T), 0)
	q, k = RoPE(q, positions, cfg.RoPEBase), RoPE(k, positions, cfg.RoPEBase)
	var out *Node
	if cfg.Chunked(T) && !(scope != nil && hook.Active(g)) {
		out = attendChunked(q, k, v, cfg.Block()) // [B, H_kv, T, G, D_h]
	} else {
		var probs *Node
		out, probs = attend(q, k, v, 1, 2, CausalMask(g, T))
		out = emitHeads(scope, out, probs)
	}
	y := outputProjection(out, wo)
	y.AssertDims(B, T, D)
	return y
}

// Mixer is the attention layer: it creates the projections q, k, v, o (no biases; shapes in Mix) under
// scope.At("attention") with cfg's initialisation and returns Mix(x, …): x [B, T, D] → [B, T, D], causal.
// Panics if cfg.Validate(D) fails or x is not rank 3.
func Mixer(scope *model.Scope, cfg Config, x *Node) *Node {
	checkInput("Mixer", cfg, x)
	g := x.Graph()
	wq, wk, wv, wo := weights(scope, cfg, x.Shape().Dim(2), x.DType())
	return mix(scope.At(Scope), x, wq.NodeValue(g), wk.NodeValue(g), wv.NodeValue(g), wo.NodeValue(g), cfg)
}

// CacheShapes returns the shapes of the key and value caches of one attention layer: [B, H_kv, S, D_h] each,
// with S = maxLen, the number of positions a decoding run may reach. Panics if cfg.Validate(width) fails.
func CacheShapes(cfg Config, width, batch, maxLen int, dtype dtypes.DType) []shapes.Shape {
	if err := cfg.Validate(width); err != nil {
		panic(errors.WithMessage(err, "attention.CacheShapes"))
	}
	s := shapes.Make(dtype, batch, cfg.KVHeads(), maxLen, cfg.HeadSize(width))
	return []shapes.Shape{s, s.Clone()}
}

// Step runs Mixer for one token at position pos, with a KV cache: x [B, 1, D], pos an integer scalar,
// kCache and vCache [B, H_kv, S, D_h] (see CacheShapes) → y [B, 1, D] and the caches with this token's rotated
// key and its value written at position pos. It attends over positions ≤ pos, so after steps 0…pos it returns
// what Mixer returns at position pos. The write is a Where with a one-hot position mask (the pure-Go backend of
// github.com/gomlx/compute v0.1.2 still has no DynamicUpdateSlice). pos must be in [0, S); the graph cannot check
// it. Uses the variables Mixer uses, creating them if needed. Panics on bad shapes or an invalid cfg.
func Step(scope *model.Scope, cfg Config, x, pos, kCache, vCache *Node) (y, kCache2, vCache2 *Node) {
	checkInput("Step", cfg, x)
	g := x.Graph()
	B, D := x.Shape().Dim(0), x.Shape().Dim(2)
	Hkv, Dh := cfg.KVHeads(), cfg.HeadSize(D)
	if x.Shape().Dim(1) != 1 || !pos.IsScalar() || !pos.DType().IsInt() {
		panic(errors.Errorf("attention.Step: x.shape=%s, pos.shape=%s: want [B, 1, D] and an integer scalar",
			x.Shape(), pos.Shape()))
	}
	if kCache.Rank() != 4 || !kCache.Shape().Equal(vCache.Shape()) || kCache.Shape().Dim(0) != B ||
		kCache.Shape().Dim(1) != Hkv || kCache.Shape().Dim(3) != Dh || kCache.DType() != x.DType() {
		panic(errors.Errorf("attention.Step: kCache.shape=%s, vCache.shape=%s, want both [B=%d, H_kv=%d, S, D_h=%d] %s",
			kCache.Shape(), vCache.Shape(), B, Hkv, Dh, x.DType()))
	}
	S := kCache.Shape().Dim(2)
	wqv, wkv, wvv, wov := weights(scope, cfg, D, x.DType())
	wo := wov.NodeValue(g)
	q, k, v := project(cfg, x, wqv.NodeValue(g), wkv.NodeValue(g), wvv.NodeValue(g), wo)
	positions := Reshape(pos, 1)
	q, k = RoPE(q, positions, cfg.RoPEBase), RoPE(k, positions, cfg.RoPEBase)

	seq := Iota(g, shapes.Make(pos.DType(), S), 0)
	here := BroadcastToDims(Reshape(Equal(seq, pos), 1, 1, S, 1), B, Hkv, S, Dh)
	// [B, 1, H_kv, D_h] and [B, H_kv, 1, D_h] have the same memory order, so a reshape moves the head axis.
	kCache2 = Where(here, BroadcastToDims(Reshape(k, B, Hkv, 1, Dh), B, Hkv, S, Dh), kCache)
	vCache2 = Where(here, BroadcastToDims(Reshape(v, B, Hkv, 1, Dh), B, Hkv, S, Dh), vCache)

	visible := Reshape(LessOrEqual(seq, pos), 1, S) // [T=1, S]
	out, probs := attend(q, kCache2, vCache2, 2, 1, visible)
	y = outputProjection(emitHeads(scope.At(Scope), out, probs), wo)
	y.AssertDims(B, 1, D)
	return y, kCache2, vCache2
}
