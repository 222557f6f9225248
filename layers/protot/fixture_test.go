package protot

import (
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/wbtest"
)

const (
	tolParity = 1e-10 // float64 parity (docs/STYLE.md §11.1)
	tolF32    = 1e-5  // float32 parity, used for the reference numerics
	tolGrad   = 1e-6  // analytic vs finite-difference gradients (docs/STYLE.md §11.2)
)

// fixture is one layer's random weights and input for tests that call Mix and MixStep directly.
type fixture struct {
	L      refLayer
	x, pad []float64 // [B, T, D], nil or [B, T]
	layer  int
	cfg    Config
	// float32 runs the graphs in float32 (the reference stays float64).
	float32 bool
}

// testConfig returns DefaultConfig with small sizes: R prototypes, value width Dv, kernel K.
func testConfig(R, Dv, K int) Config {
	cfg := DefaultConfig()
	cfg.NumPrototypes, cfg.ValueWidth, cfg.ConvKernel = R, Dv, K
	return cfg
}

// newFixture draws weights and an input with a fixed seed: weights of O(1) scale so that every term matters,
// γ ~ N(0, 1.5²) so that β spreads over (0, 1), temperatures away from 0.
func newFixture(seed uint64, cfg Config, layer, B, T, D int) *fixture {
	rng := wbtest.RNG(seed)
	R, Dv, K := cfg.NumPrototypes, cfg.Dv(D), cfg.ConvKernel
	L := refLayer{B: B, T: T, D: D, R: R, Dv: Dv, K: K, shared: cfg.SharedRouting(layer), conv: cfg.HasConv(layer)}
	L.P = wbtest.Normal(rng, R*D, 0.8)
	L.WV = wbtest.Normal(rng, Dv*D, 0.6)
	L.WU = wbtest.Normal(rng, D*Dv, 0.6)
	L.gamma = wbtest.Normal(rng, R, 1.5)
	L.tauW = 0.6 + rng.Float64()
	L.alpha = 0.5 + rng.Float64()
	if !L.shared {
		L.Wr = wbtest.Normal(rng, D*D, 0.6)
		L.tauR = -(0.6 + rng.Float64()) // a negative temperature checks the |τ|
	}
	if L.conv {
		L.convW = wbtest.Normal(rng, Dv*K, 0.6)
	}
	return &fixture{L: L, x: wbtest.Normal(rng, B*T*D, 1), layer: layer, cfg: cfg}
}

// field is one graph input of a fixture.
type field struct {
	name string
	vals []float64
	dims []int
}

// fields lists the fixture's graph inputs in a fixed order: x, then pad and the Params present in this layer.
func (f *fixture) fields() []field {
	L := f.L
	out := []field{{"x", f.x, []int{L.B, L.T, L.D}}}
	add := func(name string, vals []float64, dims ...int) {
		if vals != nil {
			out = append(out, field{name, vals, dims})
		}
	}
	add("pad", f.pad, L.B, L.T)
	add(VarPrototypes, L.P, L.R, L.D)
	add(VarValue, L.WV, L.Dv, L.D)
	add(VarOutput, L.WU, L.D, L.Dv)
	add(VarReadQuery, L.Wr, L.D, L.D)
	add(VarDecayLogit, L.gamma, L.R)
	add(VarWriteTemp, []float64{L.tauW})
	if !L.shared {
		add(VarReadTemp, []float64{L.tauR})
	}
	add(VarAlpha, []float64{L.alpha})
	add(VarConv, L.convW, L.Dv, 1, L.K)
	add(VarWriteMask, L.writeMask, L.R)
	add(VarReadMask, L.readMask, L.R)
	return out
}

// inputs returns the fields as float64 tensors, or float32 ones when the fixture's dtype is float32.
func (f *fixture) inputs() []any {
	var out []any
	for _, fl := range f.fields() {
		out = append(out, f.tensor(fl.vals, fl.dims...))
	}
	return out
}

// tensor returns values as a tensor of the fixture's dtype.
func (f *fixture) tensor(vals []float64, dims ...int) *tensors.Tensor {
	if !f.float32 {
		return wbtest.Tensor64(vals, dims...)
	}
	v32 := make([]float32, len(vals))
	for i, v := range vals {
		v32[i] = float32(v)
	}
	return tensors.FromFlatDataAndDimensions(v32, dims...)
}

// flat returns a float32 or float64 tensor's values as float64.
func flat(t *tensors.Tensor) []float64 {
	if t.DType() == dtypes.Float32 {
		out := make([]float64, 0, t.Shape().Size())
		for _, x := range tensors.MustCopyFlatData[float32](t) {
			out = append(out, float64(x))
		}
		return out
	}
	return wbtest.Flat64(t)
}

// unpack maps graph inputs, in fields' order, to x, pad and Params.
func (f *fixture) unpack(nodes []*Node) (x, pad *Node, p Params) {
	for i, fl := range f.fields() {
		n := nodes[i]
		switch fl.name {
		case "x":
			x = n
		case "pad":
			pad = n
		case VarPrototypes:
			p.Prototypes = n
		case VarValue:
			p.Value = n
		case VarOutput:
			p.Output = n
		case VarReadQuery:
			p.ReadQuery = n
		case VarDecayLogit:
			p.DecayLogit = n
		case VarWriteTemp:
			p.WriteTemp = n
		case VarReadTemp:
			p.ReadTemp = n
		case VarAlpha:
			p.Alpha = n
		case VarConv:
			p.Conv = n
		case VarWriteMask:
			p.WriteMask = n
		case VarReadMask:
			p.ReadMask = n
		}
	}
	return x, pad, p
}

// traceNames are the trace outputs the tests compare, in the order mixOutputs returns them after y.
var traceNames = []string{ProbeWriteLogits, ProbeReadLogits, ProbePi, ProbeRho, ProbeV, ProbeVConv, ProbeNum,
	ProbeDen, ProbeM}

// refField returns the reference's value for a trace name.
func (o refOut) field(name string) []float64 {
	return map[string][]float64{
		ProbeWriteLogits: o.wl, ProbeReadLogits: o.rl, ProbePi: o.pi, ProbeRho: o.rho, ProbeV: o.v,
		ProbeVConv: o.vc, ProbeNum: o.num, ProbeDen: o.den, ProbeM: o.M, ProbeMixOut: o.y,
	}[name]
}

// runMix executes Mix on the fixture with cfg and returns y and the trace fields by name, flat.
func (f *fixture) runMix(t testing.TB, cfg Config) map[string][]float64 {
	t.Helper()
	outs := MustExecOnceN(wbtest.Backend(t), func(nodes []*Node) []*Node {
		x, pad, p := f.unpack(nodes)
		y, tr := Mix(x, pad, p, f.layer, cfg)
		named := tr.Named()
		res := []*Node{y}
		for _, n := range traceNames {
			res = append(res, named[n])
		}
		return res
	}, f.inputs()...)
	got := map[string][]float64{ProbeMixOut: flat(outs[0])}
	for i, n := range traceNames {
		got[n] = flat(outs[i+1])
	}
	return got
}

// runSteps runs MixStep token by token over the fixture's sequence (pads are not supported by MixStep; the
// fixture must have none) and returns y and the trace fields, concatenated over positions into Mix's layout.
func (f *fixture) runSteps(t testing.TB, cfg Config) map[string][]float64 {
	t.Helper()
	L := f.L
	if f.pad != nil {
		t.Fatal("runSteps: MixStep takes no pad mask")
	}
	dtype := dtypes.Float64
	if f.float32 {
		dtype = dtypes.Float32
	}
	stateShapes := StateShapes(cfg, L.D, f.layer, L.B, dtype)
	nState := len(stateShapes)
	exec := MustNewExec(wbtest.Backend(t), func(nodes []*Node) []*Node {
		// nodes: fields (x is [B, 1, D]), pos, state…
		nf := len(f.fields())
		x, _, p := f.unpack(nodes[:nf])
		y, state, tr := MixStep(x, nodes[nf], p, f.layer, cfg, nodes[nf+1:])
		named := tr.Named()
		res := append([]*Node{y}, state...)
		for _, n := range traceNames {
			res = append(res, named[n])
		}
		return res
	})
	state := make([]any, nState)
	for i, s := range stateShapes {
		state[i] = tensors.FromShape(s)
	}
	per := map[string][][]float64{} // name → [t][B·…]
	for pos := 0; pos < L.T; pos++ {
		xt := make([]float64, L.B*L.D)
		for b := 0; b < L.B; b++ {
			copy(xt[b*L.D:(b+1)*L.D], f.x[(b*L.T+pos)*L.D:(b*L.T+pos+1)*L.D])
		}
		in := f.inputs()
		in[0] = f.tensor(xt, L.B, 1, L.D)
		in = append(in, int32(pos))
		in = append(in, state...)
		outs := exec.MustExec(in...)
		per[ProbeMixOut] = append(per[ProbeMixOut], flat(outs[0]))
		for i := 0; i < nState; i++ {
			state[i] = outs[1+i]
		}
		for i, n := range traceNames {
			per[n] = append(per[n], flat(outs[1+nState+i]))
		}
	}
	// Interleave [t][B, rest] into [B, T, rest].
	got := map[string][]float64{}
	for name, steps := range per {
		rest := len(steps[0]) / L.B
		flat := make([]float64, L.B*L.T*rest)
		for pos, s := range steps {
			for b := 0; b < L.B; b++ {
				copy(flat[(b*L.T+pos)*rest:(b*L.T+pos+1)*rest], s[b*rest:(b+1)*rest])
			}
		}
		got[name] = flat
	}
	return got
}

// requireAll compares every named output of got with want.
func requireAll(t *testing.T, label string, want, got map[string][]float64, names []string, tol float64) {
	t.Helper()
	for _, n := range names {
		wbtest.RequireClose(t, label+" "+n, want[n], got[n], tol)
	}
}

// refMap returns the reference outputs by probe name.
func (o refOut) named() map[string][]float64 {
	m := map[string][]float64{}
	for _, n := range append([]string{ProbeMixOut}, traceNames...) {
		m[n] = o.field(n)
	}
	return m
}

// allNames is y followed by the trace names.
var allNames = append([]string{ProbeMixOut}, traceNames...)

// sigmoid is σ(x) in float64.
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
