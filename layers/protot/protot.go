package protot

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/fused"
)

// Params holds the weights of one ProtoT layer, in the official code's layout (a projection W maps x to W·x).
// Which optional weights are present depends on the layer (Config.SharedRouting, Config.HasConv); Mix and MixStep
// panic when they do not match.
type Params struct {
	Prototypes *Node // P [R, D]
	Value      *Node // W_V [D_v, D]
	Output     *Node // W_U [D, D_v]
	ReadQuery  *Node // W_r [D, D]; nil in shared-routing layers
	DecayLogit *Node // γ [R], β = σ(γ)
	WriteTemp  *Node // τ_w, scalar
	ReadTemp   *Node // τ_r, scalar; nil in shared-routing layers
	Alpha      *Node // α, scalar
	Conv       *Node // depthwise kernel [D_v, 1, K]; nil in layers without the convolution
	// WriteMask and ReadMask are optional [R] intervention masks of any float dtype (docs/spec/protot.md §5): entries
	// ≤ 0 remove that prototype from the write (read) softmax, which renormalises over the rest. nil keeps all.
	WriteMask, ReadMask *Node
}

// Trace holds the intermediates of one layer, for probes and figures. In Mix the shapes are as listed; in MixStep
// T = 1. The probe names (Trace.Named) are those of docs/spec/protot.md §6.
type Trace struct {
	WriteLogits *Node // "write_logits" [B, T, R]: ⟨x_t, P_k⟩/(|τ_w|+ε), before masks
	Pi          *Node // "pi" [B, T, R]: write routing π after masks and pads
	ReadLogits  *Node // "read_logits" [B, T, R]: ⟨W_r x_t, P_k⟩/(|τ_r|+ε); the write logits in shared-routing layers
	Rho         *Node // "rho" [B, T, R]: read routing ρ after masks and pads
	V           *Node // "v" [B, T, D_v]: W_V x_t (times 1−pad)
	VConv       *Node // "v_conv" [B, T, D_v]: the value written, ½v + ½·conv(v) in convolution layers, else v
	Num         *Node // "num" [B, T, R, D_v]: discounted sum of the past, equation (3)
	Den         *Node // "den" [B, T, R]: discounted mass of the past
	M           *Node // "M" [B, T, R, D_v]: num / max(den, 1e−6)
	MixPreAlpha *Node // "mix_pre_alpha" [B, T, D]: W_U Σ_k ρ_k M_k
	MixOut      *Node // "mix_out" [B, T, D]: α times MixPreAlpha, the mixer output
}

// Probe names of Trace's fields (docs/spec/protot.md §6), relative to the layer's scope.
const (
	ProbeWriteLogits = "write_logits"
	ProbePi          = "pi"
	ProbeReadLogits  = "read_logits"
	ProbeRho         = "rho"
	ProbeV           = "v"
	ProbeVConv       = "v_conv"
	ProbeNum         = "num"
	ProbeDen         = "den"
	ProbeM           = "M"
	ProbeMixPreAlpha = "mix_pre_alpha"
	ProbeMixOut      = "mix_out"
)

// Named returns the trace's nodes by probe name.
func (tr Trace) Named() map[string]*Node {
	return map[string]*Node{
		ProbeWriteLogits: tr.WriteLogits, ProbePi: tr.Pi, ProbeReadLogits: tr.ReadLogits, ProbeRho: tr.Rho,
		ProbeV: tr.V, ProbeVConv: tr.VConv, ProbeNum: tr.Num, ProbeDen: tr.Den, ProbeM: tr.M,
		ProbeMixPreAlpha: tr.MixPreAlpha, ProbeMixOut: tr.MixOut,
	}
}

// checkParams panics unless p matches cfg, layer, width D and dtype.
func checkParams(name string, p Params, cfg Config, layer, D int, dtype dtypes.DType) {
	if err := cfg.Validate(D); err != nil {
		panic(errors.WithMessagef(err, "protot.%s", name))
	}
	if layer < 0 {
		panic(errors.Errorf("protot.%s: layer=%d, want ≥ 0", name, layer))
	}
	R, Dv, K := cfg.NumPrototypes, cfg.Dv(D), cfg.ConvKernel
	type want struct {
		name string
		node *Node
		dims []int
		need bool
	}
	shared, conv := cfg.SharedRouting(layer), cfg.HasConv(layer)
	for _, w := range []want{
		{VarPrototypes, p.Prototypes, []int{R, D}, true},
		{VarValue, p.Value, []int{Dv, D}, true},
		{VarOutput, p.Output, []int{D, Dv}, true},
		{VarReadQuery, p.ReadQuery, []int{D, D}, !shared},
		{VarDecayLogit, p.DecayLogit, []int{R}, true},
		{VarWriteTemp, p.WriteTemp, []int{}, true},
		{VarReadTemp, p.ReadTemp, []int{}, !shared},
		{VarAlpha, p.Alpha, []int{}, true},
		{VarConv, p.Conv, []int{Dv, 1, K}, conv},
	} {
		switch {
		case !w.need && w.node != nil:
			panic(errors.Errorf("protot.%s: layer %d (shared routing %v, convolution %v) takes no %q, got %s",
				name, layer, shared, conv, w.name, w.node.Shape()))
		case w.need && w.node == nil:
			panic(errors.Errorf("protot.%s: layer %d needs %q %v", name, layer, w.name, w.dims))
		case w.need && !w.node.Shape().Equal(shapes.Make(dtype, w.dims...)):
			panic(errors.Errorf("protot.%s: %q shape %s, want %s%v", name, w.name, w.node.Shape(), dtype, w.dims))
		}
	}
	for _, m := range []*Node{p.WriteMask, p.ReadMask} {
		if m != nil && (m.Rank() != 1 || m.Shape().Dim(0) != R || !m.DType().IsFloat()) {
			panic(errors.Errorf("protot.%s: mask shape %s, want a float [R=%d]", name, m.Shape(), R))
		}
	}
}

// maskBias returns 0 where mask > 0 and MaskedLogit elsewhere, as [R, 1, 1] of dtype; nil for a nil mask.
func maskBias(mask *Node, dtype dtypes.DType) *Node {
	if mask == nil {
		return nil
	}
	g, R := mask.Graph(), mask.Shape().Dim(0)
	zero, masked := ScalarZero(g, dtype), Scalar(g, dtype, MaskedLogit)
	keep := GreaterThan(mask, ScalarZero(g, mask.DType()))
	return Reshape(Where(keep, BroadcastToDims(zero, R), BroadcastToDims(masked, R)), R, 1, 1)
}

// addBias adds the optional biases to logits [R, B, T].
func addBias(logits *Node, biases ...*Node) *Node {
	for _, b := range biases {
		if b != nil {
			logits = Add(logits, b)
		}
	}
	return logits
}

// route computes equations (1), (2a) and (4) on x [B, T, D]: the raw write and read logits, π and ρ as
// [R, B, T] (softmax over axis 0, with the masks applied) and the value W_V x as [D_v, B, T]. One product of x with
// the stacked [P; P·W_r; W_V] gives all three when there are enough tokens: ⟨W_r x, P_k⟩ = ⟨x, (P·W_r)_k⟩, so the
// read query costs R·D per token rather than D·D, after R·D·D once. For few tokens (decoding) W_r x is formed
// directly instead.
func route(x *Node, p Params, layer int, cfg Config) (wLogits, rLogits, pi, rho, v *Node) {
	R, Dv := cfg.NumPrototypes, p.Value.Shape().Dim(0)
	B, T, D := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	dtype := x.DType()
	shared := cfg.SharedRouting(layer)
	foldRead := !shared && B*T*(D-R) > R*D
	tables := []*Node{p.Prototypes}
	if foldRead {
		tables = append(tables, DotGeneral(p.Prototypes, []int{1}, nil, p.ReadQuery, []int{0}, nil)) // P·W_r [R, D]
	}
	tables = append(tables, p.Value)
	all := DotGeneral(Concatenate(tables, 0), []int{1}, nil, x, []int{2}, nil) // [R(+R)+D_v, B, T]
	n := 0
	next := func(size int) *Node {
		n += size
		return SliceAxis(all, 0, AxisRange(n-size, n))
	}
	wLogits = Div(next(R), AddScalar(Abs(p.WriteTemp), TempEpsilon))
	writeBias, readBias := maskBias(p.WriteMask, dtype), maskBias(p.ReadMask, dtype)
	pi = fused.Softmax(addBias(wLogits, writeBias), 0)
	switch {
	case shared:
		rLogits, rho = wLogits, pi
		if readBias != nil {
			rho = fused.Softmax(addBias(wLogits, writeBias, readBias), 0)
		}
	case foldRead:
		rLogits = next(R)
	default:
		q := DotGeneral(x, []int{2}, nil, p.ReadQuery, []int{1}, nil)       // W_r x: [B, T, D]
		rLogits = DotGeneral(p.Prototypes, []int{1}, nil, q, []int{2}, nil) // [R, B, T]
	}
	if !shared {
		rLogits = Div(rLogits, AddScalar(Abs(p.ReadTemp), TempEpsilon))
		rho = fused.Softmax(addBias(rLogits, readBias), 0)
	}
	return wLogits, rLogits, pi, rho, next(Dv)
}

// convMix returns ½v + ½·conv(v) for v [D_v, B, T] and kernel [D_v, 1, K]: conv(v)_t[c] = Σ_i w[c,0,i]·v_{t−K+1+i}[c]
// with zeros before position 0, as K shifted slices (no per-token operations).
func convMix(v, kernel *Node) *Node {
	g := v.Graph()
	Dv, B, T := v.Shape().Dim(0), v.Shape().Dim(1), v.Shape().Dim(2)
	K := kernel.Shape().Dim(2)
	w := Reshape(kernel, Dv, K)
	padded := Concatenate([]*Node{Zeros(g, shapes.Make(v.DType(), Dv, B, K-1)), v}, 2) // [D_v, B, T+K−1]
	var conv *Node
	for i := 0; i < K; i++ {
		term := Mul(Reshape(SliceAxis(w, 1, AxisElem(i)), Dv, 1, 1), SliceAxis(padded, 2, AxisRange(i, i+T)))
		if conv == nil {
			conv = term
		} else {
			conv = Add(conv, term)
		}
	}
	return MulScalar(Add(v, conv), 0.5)
}

// Mix is the ProtoT mixer of layer `layer`, equations (1)–(5), with every weight given:
// x [B, T, D] → y [B, T, D] and the trace of intermediates. pad is nil or [B, T] of x's dtype with 1 at pad
// positions: π, ρ and the value are multiplied by 1 − pad, so pads add neither sum nor mass. The prefix mean uses
// cfg's numerics and parallel form (dense or chunked matrix products; no per-token operations). Causal: y_t
// depends on x_0 … x_t only. Panics if cfg.Validate(D) fails or p does not match cfg and layer.
func Mix(x, pad *Node, p Params, layer int, cfg Config) (*Node, Trace) {
	if x.Rank() != 3 {
		panic(errors.Errorf("protot.Mix: x.shape=%s, want [B, T, D]", x.Shape()))
	}
	B, T, D := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	checkParams("Mix", p, cfg, layer, D, x.DType())
	R, Dv := cfg.NumPrototypes, cfg.Dv(D)
	var tr Trace
	wLogits, rLogits, pi, rho, v := route(x, p, layer, cfg) // [R, B, T] ×4, [D_v, B, T]
	if pad != nil {
		if !pad.Shape().Equal(shapes.Make(x.DType(), B, T)) {
			panic(errors.Errorf("protot.Mix: pad.shape=%s, want %s[%d %d]", pad.Shape(), x.DType(), B, T))
		}
		keep := Reshape(OneMinus(pad), 1, B, T)
		pi, rho, v = Mul(pi, keep), Mul(rho, keep), Mul(v, keep)
	}
	vc := v
	if cfg.HasConv(layer) {
		vc = convMix(v, p.Conv)
	}
	read, den := readMemory(pi, rho, vc, p.DecayLogit, cfg)         // [B, T, D_v], [R, B, T]
	pre := DotGeneral(read, []int{2}, nil, p.Output, []int{1}, nil) // [B, T, D]
	y := Mul(pre, p.Alpha)
	y.AssertDims(B, T, D)

	btr := func(n *Node) *Node { return TransposeAllAxes(n, 1, 2, 0) } // [R, B, T] → [B, T, R]
	tr.WriteLogits, tr.ReadLogits, tr.Pi, tr.Rho = btr(wLogits), btr(rLogits), btr(pi), btr(rho)
	tr.V, tr.VConv = btr(v), btr(vc)
	// num and M are computed apart from y, so they cost nothing unless a probe asks for them.
	num, M := traceMemory(pi, vc, den, p.DecayLogit, cfg) // [R, D_v, B, T] each
	tr.Num, tr.M, tr.Den = TransposeAllAxes(num, 2, 3, 0, 1), TransposeAllAxes(M, 2, 3, 0, 1), btr(den)
	tr.MixPreAlpha, tr.MixOut = pre, y
	tr.Num.AssertDims(B, T, R, Dv)
	return y, tr
}

// StateShapes returns the decoding state of layer `layer` for a batch: the memory [B, R, D_v+1] (num and, in
// the last entry, den, or the reference numerics' running sums) and, in convolution layers, the last K−1 values
// before the convolution [B, K−1, D_v], oldest first. The state does not grow with the sequence: R·(D_v+1) +
// (K−1)·D_v numbers per example. Panics if cfg.Validate(width) fails.
func StateShapes(cfg Config, width, layer, batch int, dtype dtypes.DType) []shapes.Shape {
	if err := cfg.Validate(width); err != nil {
		panic(errors.WithMessage(err, "protot.StateShapes"))
	}
	Dv := cfg.Dv(width)
	out := []shapes.Shape{shapes.Make(dtype, batch, cfg.NumPrototypes, Dv+1)}
	if cfg.HasConv(layer) {
		out = append(out, shapes.Make(dtype, batch, cfg.ConvKernel-1, Dv))
	}
	return out
}

// MixStep is the recurrent form of Mix (Form D) for the token at position pos: x [B, 1, D], pos an integer
// scalar, state as StateShapes (zeros before position 0) → y [B, 1, D], the new state and the trace (T = 1). It
// reads the memory before writing the token, so after steps 0 … t it returns Mix's output at t. Costs O(1) in
// the position. Panics on bad shapes or if p does not match cfg and layer.
func MixStep(x, pos *Node, p Params, layer int, cfg Config, state []*Node) (*Node, []*Node, Trace) {
	if x.Rank() != 3 || x.Shape().Dim(1) != 1 || !pos.IsScalar() || !pos.DType().IsInt() {
		panic(errors.Errorf("protot.MixStep: x.shape=%s, pos.shape=%s: want [B, 1, D] and an integer scalar",
			x.Shape(), pos.Shape()))
	}
	B, D := x.Shape().Dim(0), x.Shape().Dim(2)
	checkParams("MixStep", p, cfg, layer, D, x.DType())
	R, Dv := cfg.NumPrototypes, cfg.Dv(D)
	want := StateShapes(cfg, D, layer, B, x.DType())
	if len(state) != len(want) {
		panic(errors.Errorf("protot.MixStep: %d state tensors, want %d (StateShapes)", len(state), len(want)))
	}
	for i, s := range want {
		if !state[i].Shape().Equal(s) {
			panic(errors.Errorf("protot.MixStep: state[%d].shape=%s, want %s", i, state[i].Shape(), s))
		}
	}
	var tr Trace
	wLogits, rLogits, pi, rho, v := route(x, p, layer, cfg)
	br := func(n *Node) *Node { return Transpose(Reshape(n, n.Shape().Dim(0), B), 0, 1) } // [·, B, 1] → [B, ·]
	pi, rho, v = br(pi), br(rho), br(v)                                                   // [B, R], [B, R], [B, D_v]
	vc := v
	newState := make([]*Node, 0, len(state))
	var window *Node // [B, K, D_v]: the conv buffer followed by this token's value
	if cfg.HasConv(layer) {
		K := cfg.ConvKernel
		window = Concatenate([]*Node{state[1], Reshape(v, B, 1, Dv)}, 1)
		taps := Reshape(Transpose(Reshape(p.Conv, Dv, K), 0, 1), 1, K, Dv) // [1, K, D_v]
		vc = MulScalar(Add(v, ReduceSum(Mul(window, taps), 1)), 0.5)       // ½v + ½·conv(v)
	}
	num, den, M, mem := stepMemory(state[0], pi, vc, p.DecayLogit, pos, cfg) // read first, then write
	newState = append(newState, mem)
	if window != nil {
		newState = append(newState, SliceAxis(window, 1, AxisRange(1, cfg.ConvKernel)))
	}
	read := ReduceSum(Mul(Reshape(rho, B, R, 1), M), 1) // [B, D_v]
	pre := Reshape(DotGeneral(read, []int{1}, nil, p.Output, []int{1}, nil), B, 1, D)
	y := Mul(pre, p.Alpha)

	b1 := func(n *Node) *Node { return InsertAxes(n, 1) } // [B, …] → [B, 1, …]
	tr.WriteLogits, tr.ReadLogits = b1(br(wLogits)), b1(br(rLogits))
	tr.Pi, tr.Rho, tr.V, tr.VConv = b1(pi), b1(rho), b1(v), b1(vc)
	tr.Num, tr.Den, tr.M = b1(num), Reshape(den, B, 1, R), b1(M)
	tr.MixPreAlpha, tr.MixOut = pre, y
	return y, newState, tr
}
