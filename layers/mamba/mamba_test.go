package mamba

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

const (
	tolParity = 1e-10 // float64 parity with the reference (docs/STYLE.md §11.1)
	tolF32    = 1e-5  // float32 parity
)

// float32Args rounds values to float32 in place (so a float64 reference sees the rounded inputs) and returns
// float32 tensors of them.
func float32Args(values [][]float64, dims [][]int) []any {
	args := make([]any, len(values))
	for j := range values {
		f32 := make([]float32, len(values[j]))
		for i, v := range values[j] {
			f32[i] = float32(v)
			values[j][i] = float64(f32[i])
		}
		args[j] = tensors.FromFlatDataAndDimensions(f32, dims[j]...)
	}
	return args
}

func flat32(t *testing.T, x *tensors.Tensor) []float64 {
	t.Helper()
	if x.DType() != dtypes.Float32 {
		t.Fatalf("output dtype %s, want float32", x.DType())
	}
	var out []float64
	for _, v := range tensors.MustCopyFlatData[float32](x) {
		out = append(out, float64(v))
	}
	return out
}

// scanInputs returns random scan inputs u [B, T, d] ~ N(0, 1), Δ [B, T, d] uniform in (0, maxDelta),
// a [d, N] = −exp(N(0, 1)·spread), b, c [B, T, N] ~ N(0, 1).
func scanInputs(seed uint64, B, T, d, N int, maxDelta, spread float64) (values [][]float64, dims [][]int) {
	rng := wbtest.RNG(seed)
	delta := make([]float64, B*T*d)
	for i := range delta {
		delta[i] = maxDelta * rng.Float64()
	}
	a := wbtest.Normal(rng, d*N, spread)
	for i := range a {
		a[i] = -math.Exp(a[i])
	}
	values = [][]float64{wbtest.Normal(rng, B*T*d, 1), delta, a, wbtest.Normal(rng, B*T*N, 1), wbtest.Normal(rng, B*T*N, 1)}
	dims = [][]int{{B, T, d}, {B, T, d}, {d, N}, {B, T, N}, {B, T, N}}
	return values, dims
}

func TestSelectiveScan_MatchesReference(t *testing.T) {
	const B, d, N = 2, 3, 4
	for _, T := range []int{1, 5, 6, 7, 19} {
		for _, chunk := range []int{1, 2, 3, 4, 8, 100} {
			t.Run(fmt.Sprintf("T=%d chunk=%d", T, chunk), func(t *testing.T) {
				vals, dims := scanInputs(uint64(100*T+chunk), B, T, d, N, 1.5, 1)
				got := wbtest.ExecFlat(t, func(in []*Node) []*Node {
					return []*Node{SelectiveScan(in[0], in[1], in[2], in[3], in[4], chunk)}
				}, wbtest.Tensors64(vals, dims)...)[0]
				want := referenceScan(vals[0], vals[1], vals[2], vals[3], vals[4], B, T, d, N)
				wbtest.RequireClose(t, "SelectiveScan", want, got, tolParity)
			})
		}
	}
}

// TestSelectiveScan_ImpulseResponse checks the closed form of one impulse u_0 = 1 with constant Δ = δ and
// b = c = 1: y_t = Σ_n δ·exp(δ·A[i, n]·t), over T = 1000 tokens with decays from ~0 to far past float32's range.
func TestSelectiveScan_ImpulseResponse(t *testing.T) {
	const B, T, d, N, delta = 1, 1000, 2, 3, 0.7
	a := []float64{-1e-3, -0.05, -1, -2, -30, -200} // per-step decay from ≈1 to e^-140
	u, dl, b := make([]float64, T*d), make([]float64, T*d), make([]float64, T*N)
	for i := range dl {
		dl[i] = delta
	}
	for i := range b {
		b[i] = 1
	}
	u[0], u[1] = 1, 1
	got := wbtest.ExecFlat(t, func(in []*Node) []*Node {
		return []*Node{SelectiveScan(in[0], in[1], in[2], in[3], in[3], 32)}
	}, wbtest.Tensor64(u, B, T, d), wbtest.Tensor64(dl, B, T, d), wbtest.Tensor64(a, d, N), wbtest.Tensor64(b, B, T, N))[0]
	want := make([]float64, T*d)
	for tt := 0; tt < T; tt++ {
		for i := 0; i < d; i++ {
			for n := 0; n < N; n++ {
				want[tt*d+i] += delta * math.Exp(delta*a[i*N+n]*float64(tt))
			}
		}
	}
	wbtest.RequireClose(t, "impulse response", want, got, tolParity)
}

// TestSelectiveScan_LongFloat32 runs T = 1000 tokens in float32 with strong decays (Δ·|A| up to ~100 per step,
// cumulative log-decays far below float32's exp range): any exp of a positive cumulative sum would overflow here.
func TestSelectiveScan_LongFloat32(t *testing.T) {
	const B, T, d, N = 1, 1000, 3, 4
	vals, dims := scanInputs(5, B, T, d, N, 3, 1.5)
	args := float32Args(vals, dims)
	out := MustExecOnce(wbtest.Backend(t), func(in []*Node) *Node {
		return SelectiveScan(in[0], in[1], in[2], in[3], in[4], 32)
	}, args...)
	want := referenceScan(vals[0], vals[1], vals[2], vals[3], vals[4], B, T, d, N)
	wbtest.RequireClose(t, "float32 SelectiveScan, T=1000", want, flat32(t, out), tolF32)
}

func TestSelectiveScan_ChunkedGradientsEqualSequential(t *testing.T) {
	const B, T, d, N = 2, 11, 3, 2
	vals, dims := scanInputs(9, B, T, d, N, 1.5, 1)
	cot := wbtest.Normal(wbtest.RNG(10), B*T*d, 1)
	grads := func(chunk int) [][]float64 {
		return wbtest.ExecFlat(t, func(in []*Node) []*Node {
			return Gradient(wbtest.CotangentLoss(SelectiveScan(in[0], in[1], in[2], in[3], in[4], chunk), cot), in...)
		}, wbtest.Tensors64(vals, dims)...)
	}
	sequential := grads(T)
	for _, chunk := range []int{1, 3, 4} {
		got := grads(chunk)
		for i, name := range []string{"u", "delta", "a", "b", "c"} {
			wbtest.RequireClose(t, fmt.Sprintf("chunk=%d d/d%s", chunk, name), sequential[i], got[i], tolParity)
		}
	}
	wbtest.CheckGradients(t, []string{"u", "delta", "a", "b", "c"}, vals, dims, func(in []*Node) *Node {
		return wbtest.CotangentLoss(SelectiveScan(in[0], in[1], in[2], in[3], in[4], 4), cot)
	})
}

// testConfig is the layer configuration of the tests: D = 6 → d_in = 12, N = 3, d_conv = 4, dt_rank = 1.
func testConfig(chunk int) Config {
	cfg := DefaultConfig()
	cfg.StateSize, cfg.ChunkSize = 3, chunk
	return cfg
}

// layerValues returns random inputs x [B, T, D] and weights in the order of weightNames, with their dims.
func layerValues(cfg Config, B, T, D int, seed uint64) (values [][]float64, dims [][]int) {
	rng := wbtest.RNG(seed)
	d, K, R, N := cfg.Inner(D), cfg.ConvSize, cfg.Rank(D), cfg.StateSize
	dims = [][]int{{B, T, D}, {D, 2 * d}, {d, K}, {d}, {d, R + 2*N}, {R, d}, {d}, {d, N}, {d}, {d, D}}
	for i, dd := range dims {
		n := 1
		for _, x := range dd {
			n *= x
		}
		std := 0.5
		if i == 0 {
			std = 1
		}
		values = append(values, wbtest.Normal(rng, n, std))
	}
	for i := range values[7] { // a_log: A = −exp(a_log) from about −(n+1), as initialised
		values[7][i] += math.Log(float64(i%N + 1))
	}
	return values, dims
}

// weightsOf maps graph inputs in the order of layerValues to Weights.
func weightsOf(in []*Node) Weights {
	return Weights{In: in[1], ConvKernel: in[2], ConvBias: in[3], XProj: in[4], DTProj: in[5], DTBias: in[6],
		ALog: in[7], DSkip: in[8], Out: in[9]}
}

func refParamsOf(v [][]float64) refParams {
	return refParams{in: v[1], convKernel: v[2], convBias: v[3], xProj: v[4], dtProj: v[5], dtBias: v[6], aLog: v[7],
		dSkip: v[8], out: v[9]}
}

func reference(cfg Config, vals [][]float64, B, T, D int) []float64 {
	return referenceMix(vals[0], refParamsOf(vals), B, T, D, cfg.Inner(D), cfg.StateSize, cfg.ConvSize, cfg.Rank(D))
}

func TestMix_MatchesReference(t *testing.T) {
	const B, D = 2, 6
	for _, c := range []struct{ T, chunk, conv int }{{5, 0, 4}, {6, 1, 4}, {7, 2, 4}, {7, 100, 4}, {6, 4, 1}, {7, 3, 2}} {
		t.Run(fmt.Sprintf("T=%d chunk=%d conv=%d", c.T, c.chunk, c.conv), func(t *testing.T) {
			cfg := testConfig(c.chunk)
			cfg.ConvSize = c.conv
			vals, dims := layerValues(cfg, B, c.T, D, uint64(20+c.T+c.chunk))
			got := wbtest.ExecFlat(t, func(in []*Node) []*Node { return []*Node{Mix(in[0], weightsOf(in), cfg)} },
				wbtest.Tensors64(vals, dims)...)[0]
			wbtest.RequireClose(t, "Mix", reference(cfg, vals, B, c.T, D), got, tolParity)
		})
	}
}

func TestMix_Float32MatchesReference(t *testing.T) {
	const B, T, D = 2, 7, 6
	cfg := testConfig(0)
	vals, dims := layerValues(cfg, B, T, D, 30)
	args := float32Args(vals, dims)
	out := MustExecOnce(wbtest.Backend(t), func(in []*Node) *Node { return Mix(in[0], weightsOf(in), cfg) }, args...)
	wbtest.RequireClose(t, "Mix float32", reference(cfg, vals, B, T, D), flat32(t, out), tolF32)
}

// TestMix_LongSequence compares the chunked form (32 chunks of ⌈√1000⌉ = 32, the last one padded) with the
// reference over T = 1000 tokens. (layers/decoder's conformance suite compares Step with it over as many tokens.)
func TestMix_LongSequence(t *testing.T) {
	const B, T, D = 1, 1000, 2
	cfg := testConfig(0)
	vals, dims := layerValues(cfg, B, T, D, 80)
	full := wbtest.ExecFlat(t, func(in []*Node) []*Node { return []*Node{Mix(in[0], weightsOf(in), cfg)} },
		wbtest.Tensors64(vals, dims)...)[0]
	wbtest.RequireClose(t, "chunked Mix vs reference, T=1000", reference(cfg, vals, B, T, D), full, tolParity)
}

// TestMixer_VariablesAndInit checks the created variables' names, shapes and initialisation, and NumParams, at
// dt_rank 2. (Step, causality and gradients: layers/decoder's conformance suite.)
func TestMixer_VariablesAndInit(t *testing.T) {
	const B, T, D = 2, 5, 20 // dt_rank = ⌈20/16⌉ = 2
	cfg := DefaultConfig()
	cfg.StateSize = 5
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(90))
	x := wbtest.Normal(wbtest.RNG(91), B*T*D, 1)
	backend := wbtest.Backend(t)
	full := model.MustExecOnce(backend, vars, func(scope *model.Scope, x *Node) *Node {
		return Mixer(scope.At("block_00"), cfg, x)
	}, wbtest.Tensor64(x, B, T, D))
	if !slices.Equal(full.Shape().Dimensions, []int{B, T, D}) {
		t.Fatalf("Mixer output shape %s, want [%d %d %d]", full.Shape(), B, T, D)
	}
	d, K, R, N := cfg.Inner(D), cfg.ConvSize, cfg.Rank(D), cfg.StateSize
	if R != 2 {
		t.Fatalf("Rank(%d)=%d, want ⌈%d/16⌉ = 2", D, R, D)
	}
	want := []string{
		fmt.Sprintf("/block_00/mamba/in_proj %v", []int{D, 2 * d}),
		fmt.Sprintf("/block_00/mamba/conv_kernel %v", []int{d, K}),
		fmt.Sprintf("/block_00/mamba/conv_bias %v", []int{d}),
		fmt.Sprintf("/block_00/mamba/x_proj %v", []int{d, R + 2*N}),
		fmt.Sprintf("/block_00/mamba/dt_proj %v", []int{R, d}),
		fmt.Sprintf("/block_00/mamba/dt_bias %v", []int{d}),
		fmt.Sprintf("/block_00/mamba/a_log %v", []int{d, N}),
		fmt.Sprintf("/block_00/mamba/d_skip %v", []int{d}),
		fmt.Sprintf("/block_00/mamba/out_proj %v", []int{d, D}),
	}
	var got []string
	total := 0
	for v := range vars.IterVariables() {
		if !v.Trainable {
			continue
		}
		got = append(got, fmt.Sprintf("%s %v", v.Path(), v.Shape().Dimensions))
		total += v.Shape().Size()
		vals := wbtest.Flat64(v.MustValue())
		within := func(bound float64) {
			for _, g := range vals {
				if math.Abs(g) > bound || g == 0 {
					t.Fatalf("%s has %g, want U(±%g)", v.Path(), g, bound)
				}
			}
		}
		switch v.Name() {
		case VarALog:
			for i, g := range vals {
				if w := math.Log(float64(i%N + 1)); math.Abs(g-w) > 1e-15 {
					t.Fatalf("a_log[%d, %d] = %g, want ln(n+1) = %g", i/N, i%N, g, w)
				}
			}
		case VarDSkip:
			for _, g := range vals {
				if g != 1 {
					t.Fatalf("d_skip starts at %g, want 1", g)
				}
			}
		case VarDTBias:
			for _, g := range vals { // softplus(b_dt) = Δ₀ ∈ [dt_min, dt_max]
				if dt := softplus(g); dt < cfg.DTMin*(1-1e-12) || dt > cfg.DTMax*(1+1e-12) {
					t.Fatalf("softplus(dt_bias) = %g, want within [%g, %g]", dt, cfg.DTMin, cfg.DTMax)
				}
			}
		case VarDTProj:
			within(1 / math.Sqrt(float64(R)))
		case VarConvKernel, VarConvBias:
			within(1 / math.Sqrt(float64(K)))
		case VarIn:
			within(1 / math.Sqrt(float64(D)))
		case VarXProj, VarOut:
			within(1 / math.Sqrt(float64(d)))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("variables:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := cfg.NumParams(D); n != total {
		t.Fatalf("NumParams(%d)=%d, the variables hold %d values", D, n, total)
	}
}

func TestDTBiasInit_LogUniformWithFloor(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DTMin, cfg.DTMax, cfg.DTFloor = 1e-5, 1e-3, 1e-4 // the floor cuts the lower half of the log range
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(95))
	const n = 4000
	out := model.MustExecOnce(wbtest.Backend(t), vars, func(scope *model.Scope, g *Graph) *Node {
		return scope.At("x").WithInitializer(dtBiasInit(scope, cfg)).
			VariableWithShape("b", shapes.Make(dtypes.Float64, n)).NodeValue(g)
	})
	floored := 0
	for _, b := range wbtest.Flat64(out) {
		dt := softplus(b)
		if dt < cfg.DTFloor*(1-1e-9) || dt > cfg.DTMax*(1+1e-9) {
			t.Fatalf("softplus(b_dt) = %g, want within [%g, %g]", dt, cfg.DTFloor, cfg.DTMax)
		}
		if math.Abs(dt-cfg.DTFloor) < 1e-12 {
			floored++
		}
	}
	// P(floored) = P(U < ½) = ½: with n = 4000 the count is 2000 ± 32 (1σ); allow 5σ.
	if math.Abs(float64(floored)-n/2) > 5*math.Sqrt(n/4.0) {
		t.Fatalf("%d of %d values at the floor, want about %d", floored, n, n/2)
	}
}

func TestConfig_Validate(t *testing.T) {
	if err := DefaultConfig().Validate(256); err != nil {
		t.Fatalf("DefaultConfig().Validate(256): %v", err)
	}
	cases := []struct {
		width int
		edit  func(c *Config)
		want  string
	}{
		{0, func(c *Config) {}, "width=0"},
		{256, func(c *Config) { c.Expand = 0 }, "expand=0"},
		{256, func(c *Config) { c.StateSize = -1 }, "state_size=-1"},
		{256, func(c *Config) { c.ConvSize = 0 }, "conv_size=0"},
		{256, func(c *Config) { c.DTRank = -2 }, "dt_rank=-2"},
		{256, func(c *Config) { c.DTMin = 0 }, "dt_min=0"},
		{256, func(c *Config) { c.DTMax = 1e-4 }, "dt_max=0.0001"},
		{256, func(c *Config) { c.DTFloor = math.NaN() }, "dt_floor=NaN"},
		{256, func(c *Config) { c.ChunkSize = -1 }, "chunk_size=-1"},
		{256, func(c *Config) { c.InitStd = -1 }, "init_std=-1"},
		{256, func(c *Config) { c.OutputInitStd = math.Inf(1) }, "output_init_std=+Inf"},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		c.edit(&cfg)
		if err := cfg.Validate(c.width); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%d) = %v, want an error containing %q", c.width, err, c.want)
		}
	}
}
