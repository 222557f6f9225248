package mamba

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/pkg/errors"
)

// SiLU returns x·σ(x) elementwise.
func SiLU(x *Node) *Node { return Mul(x, Logistic(x)) }

// CausalConv is the causal depthwise convolution of eq. (2), PyTorch tap order (the last tap multiplies the
// current token), with a bias: y_t[c] = bias[c] + Σ_{i<K} kernel[c, i]·x_{t−K+1+i}[c], x_s = 0 for s < 0.
// x [B, T, C], kernel [C, K], bias [C] → [B, T, C]. Panics on mismatched shapes.
func CausalConv(x, kernel, bias *Node) *Node {
	if x.Rank() != 3 || kernel.Rank() != 2 || kernel.Shape().Dim(0) != x.Shape().Dim(2) || bias.Rank() != 1 ||
		bias.Shape().Dim(0) != x.Shape().Dim(2) || kernel.DType() != x.DType() || bias.DType() != x.DType() {
		panic(errors.Errorf("mamba.CausalConv: x.shape=%s, kernel.shape=%s, bias.shape=%s, want [B, T, C], [C, K], [C] "+
			"of one dtype", x.Shape(), kernel.Shape(), bias.Shape()))
	}
	B, T, C, K := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2), kernel.Shape().Dim(1)
	padded := x
	if K > 1 {
		padded = Concatenate([]*Node{Zeros(x.Graph(), shapes.Make(x.DType(), B, K-1, C)), x}, 1) // [B, T+K−1, C]
	}
	y := Reshape(bias, 1, 1, C)
	for i := 0; i < K; i++ {
		tap := Reshape(Slice(kernel, AxisRange(), AxisElem(i)), 1, 1, C)
		y = Add(y, Mul(Slice(padded, AxisRange(), AxisRange(i, i+T), AxisRange()), tap))
	}
	return y
}

// SelectiveScan runs the selective SSM of eq. (5)–(6) without the skip term:
//
//	h_t = exp(Δ_t ⊙ A) ⊙ h_{t−1} + (Δ_t ⊙ u_t) ⊗ b_t,   h_{−1} = 0,   y_t = h_t·c_t,
//
// u, delta [B, T, d], a [d, N] (A, entries < 0), b, c [B, T, N] → y [B, T, d]; chunk > 0 is Q, the chunk length
// of the two-level scan of eq. (8)–(10) (Q ≥ T is the plain scan). Every exponent is Δ·A ≤ 0 and decays are
// multiplied, never divided, so nothing overflows and long decays underflow cleanly to 0.
//
// The gradient is the adjoint scan of eq. (11)–(14), attached as a custom rule: back-propagating through the
// unrolled loops would cost O(Q) full-size tensors per slice. It is a first-order rule (no second derivatives).
// Panics on bad shapes.
func SelectiveScan(u, delta, a, b, c *Node, chunk int) *Node {
	if u.Rank() != 3 || !u.Shape().Equal(delta.Shape()) || a.Rank() != 2 || a.Shape().Dim(0) != u.Shape().Dim(2) ||
		b.Rank() != 3 || !b.Shape().Equal(c.Shape()) || b.Shape().Dim(0) != u.Shape().Dim(0) ||
		b.Shape().Dim(1) != u.Shape().Dim(1) || b.Shape().Dim(2) != a.Shape().Dim(1) || a.DType() != u.DType() ||
		b.DType() != u.DType() {
		panic(errors.Errorf("mamba.SelectiveScan: u.shape=%s, delta.shape=%s, a.shape=%s, b.shape=%s, c.shape=%s: "+
			"want u, delta [B, T, d], a [d, N], b, c [B, T, N] of one dtype",
			u.Shape(), delta.Shape(), a.Shape(), b.Shape(), c.Shape()))
	}
	if chunk < 1 {
		panic(errors.Errorf("mamba.SelectiveScan: chunk=%d, want ≥ 1", chunk))
	}
	B, T, d, N := u.Shape().Dim(0), u.Shape().Dim(1), u.Shape().Dim(2), a.Shape().Dim(1)
	Q := min(chunk, T)
	Nc := (T + Q - 1) / Q
	g := u.Graph()
	su, sDelta, sa, sb, sc := StopGradient(u), StopGradient(delta), StopGradient(a), StopGradient(b), StopGradient(c)
	// stepMajor pads [B, T, X] with zeros to Nc·Q positions and lays it out as [Q, B, Nc, X], the layout the scan
	// slices; padding with Δ = 0 (α = 1) and zero inputs leaves the state unchanged in either direction. The
	// full-size [·, d, N] tensors are built from these small ones directly in that layout.
	stepMajor := func(z *Node) *Node {
		X := z.Shape().Dim(2)
		if Nc*Q != T {
			z = Concatenate([]*Node{z, Zeros(g, shapes.Make(z.DType(), B, Nc*Q-T, X))}, 1)
		}
		return TransposeAllAxes(Reshape(z, B, Nc, Q, X), 2, 0, 1, 3)
	}
	decays := func(dl *Node) *Node { // α = exp(Δ ⊙ A), step-major and flattened: [Q, B, Nc, d·N]
		return Reshape(Exp(Mul(InsertAxes(stepMajor(dl), -1), Reshape(sa, 1, 1, 1, d, N))), Q, B, Nc, d*N)
	}
	outer := func(l, r *Node) *Node { // l ⊗ r, step-major and flattened: [Q, B, Nc, d·N]
		return Reshape(Einsum("qbcd,qbcn->qbcdn", stepMajor(l), stepMajor(r)), Q, B, Nc, d*N)
	}
	unpad := func(z *Node) *Node { // [B, Nc·Q, d·N] → [B, T, d, N]
		if Nc*Q != T {
			z = Slice(z, AxisRange(), AxisRange(0, T))
		}
		return Reshape(z, B, T, d, N)
	}
	du := Mul(sDelta, su)                                        // Δ ⊙ u
	h := unpad(linearScan(decays(sDelta), outer(du, sb), false)) // eq. (5)
	y := Einsum("btdn,btn->btd", h, sc)                          // eq. (6)

	grad := func(yBar *Node) []*Node {
		deltaNext := Zeros(g, sDelta.Shape()) // Δ_{t+1}, 0 past the end (g_T = 0 makes it irrelevant)
		if T > 1 {
			deltaNext = Concatenate([]*Node{Slice(sDelta, AxisRange(), AxisRange(1, T)),
				Zeros(g, shapes.Make(sDelta.DType(), B, 1, d))}, 1)
		}
		gh := unpad(linearScan(decays(deltaNext), outer(yBar, sc), true)) // eq. (11)–(12): ∂L/∂h_t, total
		x := Einsum("btd,btn->btdn", du, sb)
		q := Mul(gh, Sub(h, x)) // eq. (14): ∂L/∂(Δ_t ⊙ A) = g_t ⊙ α_t h_{t−1} = g_t ⊙ (h_t − x_t)
		gdu := Einsum("btdn,btn->btd", gh, sb)
		return []*Node{
			Mul(gdu, sDelta), // u
			Add(Mul(gdu, su), ReduceSum(Mul(q, Reshape(sa, 1, 1, d, N)), -1)), // Δ
			ReduceSum(Mul(q, InsertAxes(sDelta, -1)), 0, 1),                   // A
			Einsum("btdn,btd->btn", gh, du),                                   // b
			Einsum("btd,btdn->btn", yBar, h),                                  // c
		}
	}
	y = withGradient(y, []*Node{u, delta, a, b, c}, grad)
	y.AssertDims(B, T, d)
	return y
}

// linearScan returns h_t = a_t ⊙ h_{t−1} + x_t with h_{−1} = 0 (reverse: h_t = a_t ⊙ h_{t+1} + x_t with h_T = 0)
// for a, x given step-major, [Q, B, Nc, M] with t = n·Q + τ at [τ, ·, n], → [B, Nc·Q, M], by the two-level scan of
// eq. (8)–(10): Q steps inside every chunk at once from a zero state, keeping the running products of a; Nc steps
// carrying the state across chunks; then one correction per position. Every step is a same-shape elementwise
// operation on [B, Nc, M]. No gradient is defined through it: callers use it on stopped values.
func linearScan(a, x *Node, reverse bool) *Node {
	Q, B, Nc, M := a.Shape().Dim(0), a.Shape().Dim(1), a.Shape().Dim(2), a.Shape().Dim(3)
	g, dtype := a.Graph(), a.DType()
	at := func(z *Node, i int) *Node { return Reshape(Slice(z, AxisElem(i)), z.Shape().Dimensions[1:]...) }
	order := func(n int) []int {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
			if reverse {
				idx[i] = n - 1 - i
			}
		}
		return idx
	}
	// Eq. (8): inside every chunk, from a zero state; prods[τ] is the product of a from the chunk's start to τ.
	states, prods := make([]*Node, Q), make([]*Node, Q) // [B, Nc, M] each
	var h, p *Node
	for _, tau := range order(Q) {
		aT, xT := at(a, tau), at(x, tau)
		if h == nil {
			h, p = xT, aT
		} else {
			h, p = Add(Mul(aT, h), xT), Mul(p, aT)
		}
		states[tau], prods[tau] = h, p
	}
	if Nc > 1 {
		// Eq. (9): the state entering each chunk, carried by the chunk's total product of a.
		chunkMajor := func(z *Node) *Node { return TransposeAllAxes(z, 1, 0, 2) } // [B, Nc, M] → [Nc, B, M]
		ends, totals := chunkMajor(h), chunkMajor(p)
		entering := make([]*Node, Nc)
		var H *Node
		chunks := order(Nc)
		entering[chunks[0]] = Zeros(g, shapes.Make(dtype, B, M))
		for i := 1; i < Nc; i++ {
			prev := chunks[i-1]
			if H == nil {
				H = at(ends, prev)
			} else {
				H = Add(Mul(at(totals, prev), H), at(ends, prev))
			}
			entering[chunks[i]] = H
		}
		// Eq. (10): add the entering state, carried to each position.
		E := Stack(entering, 1) // [B, Nc, M]
		for tau := range states {
			states[tau] = Add(states[tau], Mul(prods[tau], E))
		}
	}
	return Reshape(Stack(states, 2), B, Nc*Q, M)
}

// withGradient returns y, computed from stopped copies of inputs, with the gradient rule grad: grad(ȳ) returns
// ∂L/∂input for every input, given ȳ = ∂L/∂y. gomlx attaches custom rules only to single-input identities, so the
// flattened inputs ride along in the identity's operand as exact zeros z − StopGradient(z), through which the rule's
// gradients reach them.
func withGradient(y *Node, inputs []*Node, grad func(yBar *Node) []*Node) *Node {
	ny := y.Shape().Size()
	flat := make([]*Node, len(inputs))
	for i, in := range inputs {
		flat[i] = Reshape(in, in.Shape().Size())
	}
	z := Concatenate(flat, 0)
	carrier := Concatenate([]*Node{Reshape(y, ny), Sub(z, StopGradient(z))}, 0)
	carrier = IdentityWithCustomGradient(carrier, func(_, v *Node) *Node {
		grads := grad(Reshape(Slice(v, AxisRange(0, ny)), y.Shape().Dimensions...))
		parts := []*Node{Zeros(v.Graph(), shapes.Make(v.DType(), ny))}
		for i, gr := range grads {
			gr.AssertDims(inputs[i].Shape().Dimensions...)
			parts = append(parts, Reshape(gr, gr.Shape().Size()))
		}
		return Concatenate(parts, 0)
	})
	return Reshape(Slice(carrier, AxisRange(0, ny)), y.Shape().Dimensions...)
}

// ScanStep is one step of eq. (5)–(6): u, delta [B, d], a [d, N], b, c [B, N] and the state h [B, d, N] →
// y = h′·c [B, d] and h′ = exp(Δ ⊙ A) ⊙ h + (Δ ⊙ u) ⊗ b. Panics on mismatched shapes.
func ScanStep(u, delta, a, b, c, h *Node) (y, h2 *Node) {
	if u.Rank() != 2 || !u.Shape().Equal(delta.Shape()) || a.Rank() != 2 || b.Rank() != 2 || !b.Shape().Equal(c.Shape()) ||
		h.Rank() != 3 || h.Shape().Dim(0) != u.Shape().Dim(0) || h.Shape().Dim(1) != a.Shape().Dim(0) ||
		h.Shape().Dim(2) != a.Shape().Dim(1) || u.Shape().Dim(1) != a.Shape().Dim(0) || b.Shape().Dim(1) != a.Shape().Dim(1) {
		panic(errors.Errorf("mamba.ScanStep: u.shape=%s, delta.shape=%s, a.shape=%s, b.shape=%s, c.shape=%s, h.shape=%s: "+
			"want u, delta [B, d], a [d, N], b, c [B, N], h [B, d, N]",
			u.Shape(), delta.Shape(), a.Shape(), b.Shape(), c.Shape(), h.Shape()))
	}
	decay := Exp(Mul(InsertAxes(delta, -1), InsertAxes(a, 0)))                    // [B, d, N]
	h2 = Add(Mul(decay, h), Mul(InsertAxes(Mul(delta, u), -1), InsertAxes(b, 1))) // [B, d, N]
	y = ReduceSum(Mul(h2, InsertAxes(c, 1)), -1)                                  // [B, d]
	return y, h2
}

// Weights holds the parameters of one Mamba layer (names in doc.go); d = d_in, K = d_conv, R = dt_rank.
type Weights struct {
	In         *Node // [D, 2d]: columns 0…d−1 give x, d…2d−1 give z
	ConvKernel *Node // [d, K]
	ConvBias   *Node // [d]
	XProj      *Node // [d, R + 2N]: columns 0…R−1 give δ, then N for b, then N for c
	DTProj     *Node // [R, d]
	DTBias     *Node // [d]
	ALog       *Node // [d, N]; A = −exp(ALog)
	DSkip      *Node // [d]
	Out        *Node // [d, D]
}

// check panics unless every weight has the shape cfg gives for width D and dtype.
func (w Weights) check(cfg Config, D int, dtype dtypes.DType) {
	d, K, R, N := cfg.Inner(D), cfg.ConvSize, cfg.Rank(D), cfg.StateSize
	for _, c := range []struct {
		name string
		node *Node
		dims []int
	}{
		{VarIn, w.In, []int{D, 2 * d}}, {VarConvKernel, w.ConvKernel, []int{d, K}}, {VarConvBias, w.ConvBias, []int{d}},
		{VarXProj, w.XProj, []int{d, R + 2*N}}, {VarDTProj, w.DTProj, []int{R, d}}, {VarDTBias, w.DTBias, []int{d}},
		{VarALog, w.ALog, []int{d, N}}, {VarDSkip, w.DSkip, []int{d}}, {VarOut, w.Out, []int{d, D}},
	} {
		if c.node == nil {
			panic(errors.Errorf("mamba: weight %q is nil", c.name))
		}
		if !c.node.Shape().Equal(shapes.Make(dtype, c.dims...)) {
			panic(errors.Errorf("mamba: weight %q shape %s, want %s%v", c.name, c.node.Shape(), dtype, c.dims))
		}
	}
}

// ssmInputs computes eq. (3)–(4) from the convolved, activated x [B, T, d]: Δ [B, T, d], b and c [B, T, N].
func ssmInputs(x *Node, w Weights, cfg Config, D int) (delta, b, c *Node) {
	R, N := cfg.Rank(D), cfg.StateSize
	proj := Einsum("btd,de->bte", x, w.XProj) // [B, T, R+2N]
	part := func(from, to int) *Node { return Slice(proj, AxisRange(), AxisRange(), AxisRange(from, to)) }
	d := w.DTBias.Shape().Dim(0)
	delta = Softplus(Add(Einsum("btr,rd->btd", part(0, R), w.DTProj), Reshape(w.DTBias, 1, 1, d)))
	return delta, part(R, R+N), part(R+N, R+2*N)
}

// split returns the x and z halves of x·W_in [B, T, 2d] (eq. 1).
func split(xz *Node, d int) (x, z *Node) {
	return Slice(xz, AxisRange(), AxisRange(), AxisRange(0, d)), Slice(xz, AxisRange(), AxisRange(), AxisRange(d, 2*d))
}

// gateOut applies eq. (7)'s gate and output projection: y, z [B, T, d] → (y ⊙ SiLU(z))·W_out [B, T, D].
func gateOut(y, z *Node, w Weights) *Node {
	return Einsum("btd,de->bte", Mul(y, SiLU(z)), w.Out)
}

func checkInput(name string, cfg Config, x *Node) {
	if x.Rank() != 3 {
		panic(errors.Errorf("mamba.%s: x.shape=%s, want [B, T, D]", name, x.Shape()))
	}
	if err := cfg.Validate(x.Shape().Dim(2)); err != nil {
		panic(errors.WithMessagef(err, "mamba.%s", name))
	}
}

// Mix is the Mamba-1 mixer, eq. (1)–(7), with every weight given: x [B, T, D] → [B, T, D], causal. The scan runs
// in chunks of cfg.ChunkSize (⌈√T⌉ when 0). Panics if cfg.Validate(D) fails or a weight's shape does not match.
func Mix(x *Node, w Weights, cfg Config) *Node {
	checkInput("Mix", cfg, x)
	B, T, D := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	w.check(cfg, D, x.DType())
	d := cfg.Inner(D)
	xi, z := split(Einsum("btk,ke->bte", x, w.In), d)
	xc := SiLU(CausalConv(xi, w.ConvKernel, w.ConvBias)) // [B, T, d]
	delta, b, c := ssmInputs(xc, w, cfg, D)
	y := SelectiveScan(xc, delta, Neg(Exp(w.ALog)), b, c, cfg.chunkFor(T))
	y = Add(y, Mul(xc, Reshape(w.DSkip, 1, 1, d)))
	out := gateOut(y, z, w)
	out.AssertDims(B, T, D)
	return out
}

// StateShapes returns the decoding state of one layer, as in mamba_simple's step(): the last d_conv pre-conv
// inputs x [B, d_conv, d_in] (the current token's last) and the SSM state h [B, d_in, N]. Both start at zero.
// Panics if cfg.Validate(width) fails.
func StateShapes(cfg Config, width, batch int, dtype dtypes.DType) []shapes.Shape {
	if err := cfg.Validate(width); err != nil {
		panic(errors.WithMessage(err, "mamba.StateShapes"))
	}
	d := cfg.Inner(width)
	return []shapes.Shape{shapes.Make(dtype, batch, cfg.ConvSize, d), shapes.Make(dtype, batch, d, cfg.StateSize)}
}

// MixStep runs Mix for one token: x [B, 1, D], convState [B, d_conv, d_in] and h [B, d_in, N] (StateShapes) →
// y [B, 1, D] and the new states. After steps 0…t from zero states, y equals Mix's output at t. Panics on bad
// shapes.
func MixStep(x *Node, w Weights, cfg Config, convState, h *Node) (y, convState2, h2 *Node) {
	checkInput("MixStep", cfg, x)
	B, D := x.Shape().Dim(0), x.Shape().Dim(2)
	w.check(cfg, D, x.DType())
	want := StateShapes(cfg, D, B, x.DType())
	if x.Shape().Dim(1) != 1 || !convState.Shape().Equal(want[0]) || !h.Shape().Equal(want[1]) {
		panic(errors.Errorf("mamba.MixStep: x.shape=%s, convState.shape=%s, h.shape=%s: want [B, 1, D], %s, %s",
			x.Shape(), convState.Shape(), h.Shape(), want[0], want[1]))
	}
	d, K := cfg.Inner(D), cfg.ConvSize
	xi, z := split(Einsum("btk,ke->bte", x, w.In), d) // [B, 1, d] each
	window := xi
	if K > 1 {
		window = Concatenate([]*Node{Slice(convState, AxisRange(), AxisRange(1, K)), xi}, 1) // [B, K, d]
	}
	conv := ReduceAndKeep(Mul(window, InsertAxes(Transpose(w.ConvKernel, 0, 1), 0)), ReduceSum, 1) // [B, 1, d]
	xc := SiLU(Add(conv, Reshape(w.ConvBias, 1, 1, d)))
	delta, b, c := ssmInputs(xc, w, cfg, D)
	yScan, h2 := ScanStep(Squeeze(xc, 1), Squeeze(delta, 1), Neg(Exp(w.ALog)), Squeeze(b, 1), Squeeze(c, 1), h)
	yt := Add(InsertAxes(yScan, 1), Mul(xc, Reshape(w.DSkip, 1, 1, d)))
	y = gateOut(yt, z, w)
	y.AssertDims(B, 1, D)
	return y, window, h2
}
