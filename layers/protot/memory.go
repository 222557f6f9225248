package protot

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/pkg/errors"
)

// Numerical constants of equations (1)–(3); they are the official code's and not configurable.
const (
	// TempEpsilon is ε in |τ| + ε (equations 1 and 4).
	TempEpsilon = 1e-6
	// MassFloor is the clamp of the mass in M = num / max(den, 1e−6) (equation 3).
	MassFloor = 1e-6
	// ReferenceOffset is the 1e−12 of the reference weights (1−β)/(β^j + 1e−12).
	ReferenceOffset = 1e-12
	// MaskedLogit is added to the logits of masked prototypes: exp(MaskedLogit − max) is exactly 0 in float32 and
	// float64 while the row keeps one unmasked prototype, and it is finite, so no inf − inf appears.
	MaskedLogit = -1e30
)

// DiscountedPrefix computes the past-only discounted sums of equation (3) with chunks of q tokens:
//
//	S[k, c, b, t] = Σ_{j ≤ t−1} a_k · exp((t−1−j)·λ_k) · X[k, c, b, j]
//
// X: [R, C, B, T]; lambda and scale: [R] (λ ≤ 0, a = scale) → [R, C, B, T]. With q ≥ T it is Form A (one T×T
// decay matrix per prototype); otherwise Form B: T is padded with zeros to a multiple of q, each chunk gets its
// q×q decay matrix, and the chunk states are carried by one matrix product over chunks with entries
// exp(q·(n−1−m)·λ_k), m < n. The exponents are masked to 0 before exp where the entry is dropped, so no exp
// overflows and no inf·0 reaches the gradient. λ = 0, a = 1 gives the exclusive prefix sum (the reference
// numerics). Panics on bad shapes or q ≤ 0.
func DiscountedPrefix(X, lambda, scale *Node, q int) *Node {
	if X.Rank() != 4 || lambda.Rank() != 1 || !lambda.Shape().Equal(scale.Shape()) ||
		lambda.Shape().Dim(0) != X.Shape().Dim(0) || lambda.DType() != X.DType() || q <= 0 {
		panic(errors.Errorf("protot.DiscountedPrefix: X.shape=%s, lambda.shape=%s, scale.shape=%s, q=%d: "+
			"want X [R, C, B, T], lambda and scale [R] of X's dtype, q > 0", X.Shape(), lambda.Shape(), scale.Shape(), q))
	}
	g, dtype := X.Graph(), X.DType()
	R, C, B, T := X.Shape().Dim(0), X.Shape().Dim(1), X.Shape().Dim(2), X.Shape().Dim(3)
	if q > T {
		q = T
	}
	nC := (T + q - 1) / q
	Tp := nC * q
	if Tp > T {
		X = Concatenate([]*Node{X, Zeros(g, shapes.Make(dtype, R, C, B, Tp-T))}, 3)
	}
	Xc := Reshape(X, R, C, B, nC, q)

	// Intra-chunk: L[k, τ, σ] = a_k·exp((τ−1−σ)·λ_k) for σ ≤ τ−1.
	lin := decayMatrices(lambda, scale, q, q, func(i, j int) (float64, bool) { return float64(i - 1 - j), j <= i-1 })
	S := DotGeneral(Xc, []int{4}, []int{0}, lin, []int{2}, []int{0}) // [R, C, B, nC, q]
	if nC > 1 {
		// Chunk states: sums[k, c, b, m] = Σ_σ a_k·exp((q−1−σ)·λ_k)·X[k, c, b, m, σ], the state after chunk m.
		wEnd := decayMatrices(lambda, scale, 1, q, func(_, j int) (float64, bool) { return float64(q - 1 - j), true })
		sums := DotGeneral(Xc, []int{4}, []int{0}, Reshape(wEnd, R, q), []int{1}, []int{0}) // [R, C, B, nC]
		// Carry: prev[k, c, b, n] = Σ_{m < n} exp(q·(n−1−m)·λ_k)·sums[k, c, b, m], num at the start of chunk n.
		ones := OnesLike(scale)
		carry := decayMatrices(lambda, ones, nC, nC, func(n, m int) (float64, bool) {
			return float64(q * (n - 1 - m)), m <= n-1
		}) // [R, nC, nC]
		prev := DotGeneral(sums, []int{3}, []int{0}, carry, []int{2}, []int{0}) // [R, C, B, nC]
		// At offset τ of chunk n the carried state has decayed by exp(τ·λ_k).
		grow := decayMatrices(lambda, ones, 1, q, func(_, j int) (float64, bool) { return float64(j), true })
		S = Add(S, Mul(Reshape(prev, R, C, B, nC, 1), Reshape(grow, R, 1, 1, 1, q)))
	}
	S = Reshape(S, R, C, B, Tp)
	if Tp > T {
		S = Slice(S, AxisRange(), AxisRange(), AxisRange(), AxisRange(0, T))
	}
	return S
}

// decayMatrices returns M[k, i, j] = a_k·exp(E[i, j]·λ_k) where keep[i, j], else 0, with (E, keep) = f(i, j):
// lambda and scale [R] → [R, rows, cols]. E is a graph constant with the dropped entries set to 0, so they never
// reach exp with a large exponent (docs/spec/protot.md §4.1, "mask before exp").
func decayMatrices(lambda, scale *Node, rows, cols int, f func(i, j int) (float64, bool)) *Node {
	g, R, dtype := lambda.Graph(), lambda.Shape().Dim(0), lambda.DType()
	e := make([]float64, rows*cols)
	keep := make([]bool, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if v, ok := f(i, j); ok {
				e[i*cols+j], keep[i*cols+j] = v, true
			}
		}
	}
	expo := Mul(Reshape(lambda, R, 1, 1), Reshape(ConstAsDType(g, dtype, e), 1, rows, cols)) // [R, rows, cols]
	mask := BroadcastToDims(Reshape(Const(g, keep), 1, rows, cols), R, rows, cols)
	m := Where(mask, Exp(expo), ZerosLike(expo))
	return Mul(m, Reshape(scale, R, 1, 1))
}

// memoryForm holds what the parallel sums of equation (3) need, in the dtype they run in: the decay λ and scale a
// of DiscountedPrefix and DiscountedRead and, in reference numerics, the write weights w [R, 1, T] applied to π
// and the read rescale β^(t−1) [R, 1, T] (nil in exact numerics).
type memoryForm struct {
	lambda, scale  *Node
	write, rescale *Node
	q              int
}

// newMemoryForm prepares cfg's numerics for a sequence of T tokens from γ [R]; in reference numerics γ is
// converted to float32 first.
func newMemoryForm(gamma *Node, T int, cfg Config) memoryForm {
	f := memoryForm{q: cfg.ChunkLen(T)}
	if cfg.Numerics != NumericsReference {
		f.lambda = Neg(Softplus(Neg(gamma))) // ln β_k, stable for any γ
		f.scale = Logistic(Neg(gamma))       // 1 − β_k
		return f
	}
	g, R := gamma.Graph(), gamma.Shape().Dim(0)
	gamma = ConvertDType(gamma, dtypes.Float32)
	beta := Reshape(Logistic(gamma), R, 1)                             // [R, 1]
	t := Reshape(Iota(g, shapes.Make(dtypes.Float32, T), 0), 1, T)     // [1, T]
	w := Div(OneMinus(beta), AddScalar(Pow(beta, t), ReferenceOffset)) // (1−β_k)/(β_k^j + 1e−12)
	rescale := Pow(beta, MaxScalar(AddScalar(t, -1), 0))               // β_k^(t−1); the sums are 0 at t = 0
	f.lambda, f.scale = ZerosLike(gamma), OnesLike(gamma)              // plain exclusive prefix sums
	f.write, f.rescale = Reshape(w, R, 1, T), Reshape(rescale, R, 1, T)
	return f
}

// convert returns x in the form's dtype (float32 in reference numerics).
func (f memoryForm) convert(x *Node) *Node { return ConvertDType(x, f.lambda.DType()) }

// den returns the discounted mass of the past [R, B, T] from the weighted write routing πw (see weighted).
func (f memoryForm) den(piW *Node) *Node {
	R, B, T := piW.Shape().Dim(0), piW.Shape().Dim(1), piW.Shape().Dim(2)
	den := Reshape(DiscountedPrefix(Reshape(piW, R, 1, B, T), f.lambda, f.scale, f.q), R, B, T)
	if f.rescale != nil {
		den = Mul(den, f.rescale)
	}
	return den
}

// weighted returns π [R, B, T] in the form's dtype with the reference write weights applied.
func (f memoryForm) weighted(pi *Node) *Node {
	pi = f.convert(pi)
	if f.write != nil {
		pi = Mul(pi, f.write)
	}
	return pi
}

// readMemory returns Σ_k ρ_k M_k [B, T, D_v] and the mass den [R, B, T], in v's dtype, for π and ρ [R, B, T]
// and v [D_v, B, T]: equations (3) and (5) before W_U, via DiscountedRead with u = ρ / max(den, 1e−6), so num is
// never formed.
func readMemory(pi, rho, v, gamma *Node, cfg Config) (read, den *Node) {
	dtype := v.DType()
	f := newMemoryForm(gamma, v.Shape().Dim(2), cfg)
	piW := f.weighted(pi)
	den = f.den(piW)
	u := Div(f.convert(rho), MaxScalar(den, MassFloor)) // ρ / max(den, 1e−6)
	if f.rescale != nil {
		u = Mul(u, f.rescale) // num = β^(t−1)·Σ w π v
	}
	read = DiscountedRead(u, piW, f.convert(v), f.lambda, f.scale, f.q)
	return ConvertDType(read, dtype), ConvertDType(den, dtype)
}

// traceMemory evaluates num and M = num / max(den, 1e−6) of equation (3), [R, D_v, B, T] each in v's dtype, from
// π [R, B, T], v [D_v, B, T] and the mass den [R, B, T] that readMemory returned. Mix uses it for the trace only:
// it forms the [R, D_v, B, T] sums that the output avoids.
func traceMemory(pi, v, den, gamma *Node, cfg Config) (num, M *Node) {
	dtype := v.DType()
	R, Dv, B, T := pi.Shape().Dim(0), v.Shape().Dim(0), v.Shape().Dim(1), v.Shape().Dim(2)
	f := newMemoryForm(gamma, T, cfg)
	X := Mul(Reshape(f.weighted(pi), R, 1, B, T), Reshape(f.convert(v), 1, Dv, B, T)) // π ⊗ v
	num = DiscountedPrefix(X, f.lambda, f.scale, f.q)                                 // [R, D_v, B, T]
	if f.rescale != nil {
		num = Mul(num, Reshape(f.rescale, R, 1, 1, T))
	}
	M = Div(num, MaxScalar(Reshape(f.convert(den), R, 1, B, T), MassFloor))
	return ConvertDType(num, dtype), ConvertDType(M, dtype)
}

// withMassChannel appends a channel of ones to v along axis: D_v → D_v+1 entries on that axis.
func withMassChannel(v *Node, axis int) *Node {
	dims := v.Shape().Clone().Dimensions
	dims[axis] = 1
	return Concatenate([]*Node{v, Ones(v.Graph(), shapes.Make(v.DType(), dims...))}, axis)
}

// splitMemory splits the sums S (the last entry of `axis` is the mass) into num, den and M = num / max(den, 1e−6).
func splitMemory(S *Node, axis int) (num, den, M *Node) {
	C := S.Shape().Dim(axis)
	num = SliceAxis(S, axis, AxisRange(0, C-1))
	den = SliceAxis(S, axis, AxisRange(C-1, C))
	return num, den, Div(num, MaxScalar(den, MassFloor))
}

// stepMemory is the recurrent form D of equation (3) for one token: mem [B, R, D_v+1] (num and den of the prefix
// before this token, or the reference mode's running sums), π [B, R], v [B, D_v], γ [R], pos the token's position
// → num [B, R, D_v], den [B, R, 1], M (read first) and the memory after writing this token.
func stepMemory(mem, pi, v, gamma, pos *Node, cfg Config) (num, den, M, mem2 *Node) {
	dtype := mem.DType()
	B, R, C := mem.Shape().Dim(0), mem.Shape().Dim(1), mem.Shape().Dim(2)
	if cfg.Numerics == NumericsReference {
		f32 := dtypes.Float32
		mem, pi, v, gamma = ConvertDType(mem, f32), ConvertDType(pi, f32), ConvertDType(v, f32), ConvertDType(gamma, f32)
	}
	write := Mul(Reshape(pi, B, R, 1), Reshape(withMassChannel(v, 1), B, 1, C)) // π ⊗ [v, 1]
	if cfg.Numerics == NumericsReference {
		beta := Logistic(gamma)
		t := ConvertDType(pos, dtypes.Float32)
		rescale := Reshape(Pow(beta, MaxScalar(AddScalar(t, -1), 0)), 1, R, 1) // β^(t−1)
		num, den, M = splitMemory(Mul(mem, rescale), 2)
		w := Div(OneMinus(beta), AddScalar(Pow(beta, t), ReferenceOffset)) // (1−β)/(β^t + 1e−12)
		mem2 = Add(mem, Mul(Reshape(w, 1, R, 1), write))
		return ConvertDType(num, dtype), ConvertDType(den, dtype), ConvertDType(M, dtype), ConvertDType(mem2, dtype)
	}
	num, den, M = splitMemory(mem, 2)
	beta, oneMinusBeta := Reshape(Logistic(gamma), 1, R, 1), Reshape(Logistic(Neg(gamma)), 1, R, 1)
	mem2 = Add(Mul(beta, mem), Mul(oneMinusBeta, write))
	return num, den, M, mem2
}

// DiscountedRead computes the read of equations (3)–(5) without forming num:
//
//	r[b, t, c] = Σ_k u[k, b, t] · Σ_{j ≤ t−1} a_k·exp((t−1−j)·λ_k) · π[k, b, j] · v[c, b, j]
//
// u, π: [R, B, T]; v: [C, B, T]; lambda, scale: [R] → [B, T, C]. With u = ρ / max(den, 1e−6) this is
// Σ_k ρ_k M_k. Inside a chunk of q tokens the weights form one q×q matrix per sequence,
// G[τ, σ] = Σ_k u[k, τ]·Λ_k[τ, σ]·π[k, σ], applied to the values by a matrix product; earlier chunks enter through
// per-prototype chunk states [R, C] carried as in DiscountedPrefix. The largest intermediate is [R, B, T, q]
// (not [R, C, B, T]), and the products cost O(T·q·(R + C) + T·R·C) per sequence. Panics on bad shapes or q ≤ 0.
func DiscountedRead(u, pi, v, lambda, scale *Node, q int) *Node {
	if u.Rank() != 3 || !u.Shape().Equal(pi.Shape()) || v.Rank() != 3 || v.Shape().Dim(1) != u.Shape().Dim(1) ||
		v.Shape().Dim(2) != u.Shape().Dim(2) || v.DType() != u.DType() || lambda.Rank() != 1 ||
		!lambda.Shape().Equal(scale.Shape()) || lambda.Shape().Dim(0) != u.Shape().Dim(0) || q <= 0 {
		panic(errors.Errorf("protot.DiscountedRead: u.shape=%s, pi.shape=%s, v.shape=%s, lambda.shape=%s, "+
			"scale.shape=%s, q=%d: want u and π [R, B, T], v [C, B, T], lambda and scale [R], q > 0",
			u.Shape(), pi.Shape(), v.Shape(), lambda.Shape(), scale.Shape(), q))
	}
	g, dtype := u.Graph(), u.DType()
	R, B, T, C := u.Shape().Dim(0), u.Shape().Dim(1), u.Shape().Dim(2), v.Shape().Dim(0)
	if q > T {
		q = T
	}
	nC := (T + q - 1) / q
	Tp := nC * q
	pad := func(x *Node) *Node {
		if Tp == T {
			return x
		}
		return Concatenate([]*Node{x, Zeros(g, shapes.Make(dtype, x.Shape().Dim(0), B, Tp-T))}, 2)
	}
	uc := Reshape(pad(u), R, B, nC, q, 1)
	pc := Reshape(pad(pi), R, B, nC, 1, q)
	vc := Reshape(pad(v), C, B, nC, q)

	lin := decayMatrices(lambda, scale, q, q, func(i, j int) (float64, bool) { return float64(i - 1 - j), j <= i-1 })
	// G[b, n, τ, σ] = Σ_k u[k, b, n, τ]·L[k, τ, σ]·π[k, b, n, σ]
	G := ReduceSum(Mul(Mul(uc, pc), Reshape(lin, R, 1, 1, q, q)), 0)     // [B, nC, q, q]
	r := DotGeneral(G, []int{3}, []int{0, 1}, vc, []int{3}, []int{1, 2}) // [B, nC, q, C]
	if nC > 1 {
		wEnd := decayMatrices(lambda, scale, 1, q, func(_, j int) (float64, bool) { return float64(q - 1 - j), true })
		pw := Mul(Reshape(pc, R, B, nC, q), Reshape(wEnd, R, 1, 1, q))           // [R, B, nC, q]
		sums := DotGeneral(pw, []int{3}, []int{1, 2}, vc, []int{3}, []int{1, 2}) // [B, nC, R, C]
		ones := OnesLike(scale)
		carry := decayMatrices(lambda, ones, nC, nC, func(n, m int) (float64, bool) {
			return float64(q * (n - 1 - m)), m <= n-1
		}) // [R, nC, nC]
		prev := DotGeneral(carry, []int{2}, []int{0}, sums, []int{1}, []int{2}) // [R, nC, B, C]
		grow := decayMatrices(lambda, ones, 1, q, func(_, j int) (float64, bool) { return float64(j), true })
		ug := Mul(Reshape(uc, R, B, nC, q), Reshape(grow, R, 1, 1, q))                 // [R, B, nC, q]
		r = Add(r, DotGeneral(ug, []int{0}, []int{1, 2}, prev, []int{0}, []int{2, 1})) // [B, nC, q, C]
	}
	r = Reshape(r, B, Tp, C)
	if Tp > T {
		r = Slice(r, AxisRange(), AxisRange(0, T), AxisRange())
	}
	return r
}
