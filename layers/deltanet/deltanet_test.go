package deltanet

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

const (
	tolParity = 1e-10 // float64 parity with the reference (docs/STYLE.md §11.1)
	tolF32    = 1e-5  // float32 parity
)

// ruleInputs returns random delta-rule inputs: unit-norm q and k [B, T, H, dk], v [B, T, H, dv] ~ N(0, 1) and
// β [B, T, H] uniform in (0, 1).
func ruleInputs(seed uint64, B, T, H, dk, dv int) (values [][]float64, dims [][]int) {
	rng := wbtest.RNG(seed)
	unit := func() []float64 {
		x := wbtest.Normal(rng, B*T*H*dk, 1)
		for i := 0; i < len(x); i += dk {
			n := 0.0
			for _, a := range x[i : i+dk] {
				n += a * a
			}
			for j := i; j < i+dk; j++ {
				x[j] /= math.Sqrt(n)
			}
		}
		return x
	}
	beta := make([]float64, B*T*H)
	for i := range beta {
		beta[i] = rng.Float64()
	}
	values = [][]float64{unit(), unit(), wbtest.Normal(rng, B*T*H*dv, 1), beta}
	dims = [][]int{{B, T, H, dk}, {B, T, H, dk}, {B, T, H, dv}, {B, T, H}}
	return values, dims
}

func TestDeltaRule_MatchesReference(t *testing.T) {
	const B, H, dk, dv = 2, 3, 4, 5
	for _, T := range []int{1, 5, 6, 7, 8, 19} { // T ≤ 8 (fla issue #88) and T not a multiple of the chunk
		for _, chunk := range []int{1, 2, 4, 8, 16} {
			t.Run(fmt.Sprintf("T=%d chunk=%d", T, chunk), func(t *testing.T) {
				vals, dims := ruleInputs(uint64(100*T+chunk), B, T, H, dk, dv)
				got := wbtest.ExecFlat(t, func(in []*Node) []*Node {
					return []*Node{DeltaRule(in[0], in[1], in[2], in[3], chunk)}
				}, wbtest.Tensors64(vals, dims)...)[0]
				want := referenceDeltaRule(vals[0], vals[1], vals[2], vals[3], B, T, H, dk, dv)
				wbtest.RequireClose(t, "DeltaRule", want, got, tolParity)
			})
		}
	}
}

// TestDeltaRule_RetrievesLastWrite checks the delta rule's defining identity: with β = 1 and a unit key, the write
// replaces the value stored under k, so reading with q = k returns v exactly: S_tᵀk_t = S_{t−1}ᵀk_t + (v_t −
// S_{t−1}ᵀk_t)·‖k_t‖² = v_t.
func TestDeltaRule_RetrievesLastWrite(t *testing.T) {
	const B, T, H, dk, dv = 2, 13, 2, 3, 4
	vals, dims := ruleInputs(7, B, T, H, dk, dv)
	for i := range vals[3] {
		vals[3][i] = 1
	}
	got := wbtest.ExecFlat(t, func(in []*Node) []*Node {
		return []*Node{DeltaRule(in[0], in[0], in[1], in[2], 4)}
	}, wbtest.Tensors64([][]float64{vals[1], vals[2], vals[3]}, [][]int{dims[1], dims[2], dims[3]})...)[0]
	wbtest.RequireClose(t, "read at the written key", vals[2], got, tolParity)
}

// TestDeltaRule_EqualKeysFloat32 runs the chunked form in float32 at C = 64 on the input that breaks a Neumann-series
// inverse of eq. (6): keys drawn from only two directions and β near 1, so that A has long runs of entries ≈ 1.
func TestDeltaRule_EqualKeysFloat32(t *testing.T) {
	const B, T, H, dk, dv = 1, 150, 1, 4, 3
	vals, dims := ruleInputs(8, B, T, H, dk, dv)
	for tt := 0; tt < T; tt++ {
		src := 0 // the first chunk writes under one key
		if tt >= 64 {
			src = tt % 2 // then two alternate, with an occasional fresh key
			if tt%7 == 3 {
				src = tt
			}
		}
		copy(vals[1][tt*dk:(tt+1)*dk], vals[1][src*dk:(src+1)*dk])
		vals[3][tt] = 0.95 + 0.05*vals[3][tt]
	}
	args := make([]any, 4)
	for i := range vals {
		f32 := make([]float32, len(vals[i]))
		for j, x := range vals[i] {
			f32[j] = float32(x)
			vals[i][j] = float64(f32[j]) // the reference sees the rounded inputs
		}
		args[i] = tensors.FromFlatDataAndDimensions(f32, dims[i]...)
	}
	out := MustExecOnce(wbtest.Backend(t), func(q, k, v, beta *Node) *Node { return DeltaRule(q, k, v, beta, 64) },
		args...)
	got := make([]float64, 0, out.Shape().Size())
	for _, x := range tensors.MustCopyFlatData[float32](out) {
		got = append(got, float64(x))
	}
	want := referenceDeltaRule(vals[0], vals[1], vals[2], vals[3], B, T, H, dk, dv)
	wbtest.RequireClose(t, "float32 DeltaRule, C=64, repeated keys", want, got, tolF32)
}

func TestDeltaRule_ChunkedGradientsEqualRecurrent(t *testing.T) {
	const B, T, H, dk, dv = 2, 11, 2, 3, 4
	vals, dims := ruleInputs(9, B, T, H, dk, dv)
	cot := wbtest.Normal(wbtest.RNG(10), B*T*H*dv, 1)
	grads := func(chunk int) [][]float64 {
		return wbtest.ExecFlat(t, func(in []*Node) []*Node {
			return Gradient(wbtest.CotangentLoss(DeltaRule(in[0], in[1], in[2], in[3], chunk), cot), in...)
		}, wbtest.Tensors64(vals, dims)...)
	}
	recurrent := grads(1)
	for _, chunk := range []int{4, 16} {
		got := grads(chunk)
		for i, name := range []string{"q", "k", "v", "beta"} {
			wbtest.RequireClose(t, fmt.Sprintf("chunk=%d d/d%s", chunk, name), recurrent[i], got[i], tolParity)
		}
	}
}

// layerValues returns random inputs x [B, T, D] and weights in the order of weightNames, with their dims.
func layerValues(cfg Config, B, T, D int, seed uint64) (values [][]float64, dims [][]int) {
	rng := wbtest.RNG(seed)
	H, d, K := cfg.NumHeads, cfg.HeadSize(D), cfg.ConvSize
	dims = [][]int{{B, T, D}, {D, H * d}, {D, H * d}, {D, H * d}, {H * d, K}, {H * d, K}, {H * d, K}, {D, H}, {d},
		{H * d, D}}
	for i, dd := range dims {
		n := 1
		for _, x := range dd {
			n *= x
		}
		std := 0.5
		if i == 0 {
			std = 1
		}
		vals := wbtest.Normal(rng, n, std)
		if i == 8 { // output-norm gain around 1
			for j := range vals {
				vals[j] = 1 + 0.6*vals[j]
			}
		}
		values = append(values, vals)
	}
	return values, dims
}

// weightsOf maps graph inputs in the order of layerValues to Weights.
func weightsOf(in []*Node) Weights {
	return Weights{Query: in[1], Key: in[2], Value: in[3], QueryConv: in[4], KeyConv: in[5], ValueConv: in[6],
		Beta: in[7], OutNorm: in[8], Output: in[9]}
}

func refParamsOf(v [][]float64) refParams {
	return refParams{q: v[1], k: v[2], v: v[3], qConv: v[4], kConv: v[5], vConv: v[6], beta: v[7], outNorm: v[8],
		out: v[9]}
}

// testConfig is the layer configuration of the tests: D = 8, H = 2 heads of width 4, ShortConv 4 (one tap longer
// than the shortest sequences below would need), with the given chunk length.
func testConfig(chunk int) Config {
	cfg := DefaultConfig()
	cfg.NumHeads, cfg.ChunkSize = 2, chunk
	return cfg
}

func TestMix_MatchesReference(t *testing.T) {
	const B, D = 2, 8
	for _, c := range []struct{ T, chunk, conv int }{{5, 1, 4}, {6, 2, 4}, {7, 4, 4}, {7, 64, 4}, {6, 2, 1}, {7, 4, 3}} {
		t.Run(fmt.Sprintf("T=%d chunk=%d conv=%d", c.T, c.chunk, c.conv), func(t *testing.T) {
			cfg := testConfig(c.chunk)
			cfg.ConvSize = c.conv
			vals, dims := layerValues(cfg, B, c.T, D, uint64(20+c.T+c.chunk))
			got := wbtest.ExecFlat(t, func(in []*Node) []*Node { return []*Node{Mix(in[0], weightsOf(in), cfg)} },
				wbtest.Tensors64(vals, dims)...)[0]
			want := referenceMix(vals[0], refParamsOf(vals), B, c.T, D, cfg.NumHeads, cfg.HeadSize(D), cfg.ConvSize,
				cfg.NormEpsilon)
			wbtest.RequireClose(t, "Mix", want, got, tolParity)
		})
	}
}

func TestMix_Float32MatchesReference(t *testing.T) {
	const B, T, D = 2, 7, 8
	cfg := testConfig(4)
	vals, dims := layerValues(cfg, B, T, D, 30)
	args := make([]any, len(vals))
	for j := range vals {
		f32 := make([]float32, len(vals[j]))
		for i, v := range vals[j] {
			f32[i] = float32(v)
			vals[j][i] = float64(f32[i]) // the reference sees exactly the float32-rounded inputs
		}
		args[j] = tensors.FromFlatDataAndDimensions(f32, dims[j]...)
	}
	out := MustExecOnce(wbtest.Backend(t), func(in []*Node) *Node { return Mix(in[0], weightsOf(in), cfg) }, args...)
	if out.DType() != dtypes.Float32 {
		t.Fatalf("Mix output dtype %s, want float32", out.DType())
	}
	var got []float64
	for _, v := range tensors.MustCopyFlatData[float32](out) {
		got = append(got, float64(v))
	}
	want := referenceMix(vals[0], refParamsOf(vals), B, T, D, cfg.NumHeads, cfg.HeadSize(D), cfg.ConvSize,
		cfg.NormEpsilon)
	wbtest.RequireClose(t, "Mix float32", want, got, tolF32)
}

// TestMix_LongSequence compares the chunked form (32 chunks of 32, the last one padded) with the reference over
// T = 1000 tokens. (layers/decoder's conformance suite compares Step with it over as many tokens.)
func TestMix_LongSequence(t *testing.T) {
	const B, T, D = 1, 1000, 4
	cfg := DefaultConfig()
	cfg.NumHeads = 1
	vals, dims := layerValues(cfg, B, T, D, 80)
	full := wbtest.ExecFlat(t, func(in []*Node) []*Node { return []*Node{Mix(in[0], weightsOf(in), cfg)} },
		wbtest.Tensors64(vals, dims)...)[0]
	want := referenceMix(vals[0], refParamsOf(vals), B, T, D, cfg.NumHeads, cfg.HeadSize(D), cfg.ConvSize,
		cfg.NormEpsilon)
	wbtest.RequireClose(t, "chunked Mix vs reference, T=1000", want, full, tolParity)
}

// TestMixer_Variables checks the created variables' names, shapes and initialisation, and NumParams, at H·d ≠ D.
// (Step, causality and gradients: layers/decoder's conformance suite.)
func TestMixer_Variables(t *testing.T) {
	const B, T, D = 2, 5, 12
	cfg := DefaultConfig() // H = 4, d = 3
	cfg.HeadDim = 2        // H·d = 8 ≠ D
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
	H, d, K := cfg.NumHeads, cfg.HeadSize(D), cfg.ConvSize
	want := []string{
		fmt.Sprintf("/block_00/deltanet/q_proj %v", []int{D, H * d}),
		fmt.Sprintf("/block_00/deltanet/k_proj %v", []int{D, H * d}),
		fmt.Sprintf("/block_00/deltanet/v_proj %v", []int{D, H * d}),
		fmt.Sprintf("/block_00/deltanet/q_conv %v", []int{H * d, K}),
		fmt.Sprintf("/block_00/deltanet/k_conv %v", []int{H * d, K}),
		fmt.Sprintf("/block_00/deltanet/v_conv %v", []int{H * d, K}),
		fmt.Sprintf("/block_00/deltanet/beta_proj %v", []int{D, H}),
		fmt.Sprintf("/block_00/deltanet/out_norm %v", []int{d}),
		fmt.Sprintf("/block_00/deltanet/out_proj %v", []int{H * d, D}),
	}
	var got []string
	total := 0
	for v := range vars.IterVariables() {
		if v.Trainable {
			got = append(got, fmt.Sprintf("%s %v", v.Path(), v.Shape().Dimensions))
			total += v.Shape().Size()
			vals := wbtest.Flat64(v.MustValue())
			switch v.Name() {
			case VarOutNorm:
				for _, g := range vals {
					if g != 1 {
						t.Fatalf("%s starts at %g, want 1", v.Path(), g)
					}
				}
			case VarQueryConv, VarKeyConv, VarValueConv:
				for _, g := range vals {
					if math.Abs(g) > 1/math.Sqrt(float64(K)) || g == 0 {
						t.Fatalf("%s has %g, want U(±1/√K) = U(±%g)", v.Path(), g, 1/math.Sqrt(float64(K)))
					}
				}
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("variables:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := cfg.NumParams(D); n != total {
		t.Fatalf("NumParams(%d)=%d, the variables hold %d values", D, n, total)
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
		{256, func(c *Config) { c.NumHeads = 0 }, "num_heads=0"},
		{256, func(c *Config) { c.NumHeads = 3 }, "num_heads=3 does not divide width=256"},
		{256, func(c *Config) { c.HeadDim = -1 }, "head_dim=-1"},
		{256, func(c *Config) { c.ConvSize = 0 }, "conv_size=0"},
		{256, func(c *Config) { c.ChunkSize = 48 }, "chunk_size=48"},
		{256, func(c *Config) { c.ChunkSize = 0 }, "chunk_size=0"},
		{256, func(c *Config) { c.NormEpsilon = 0 }, "norm_epsilon=0"},
		{256, func(c *Config) { c.InitStd = math.Inf(1) }, "init_std=+Inf"},
		{256, func(c *Config) { c.OutputInitStd = -1 }, "output_init_std=-1"},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		c.edit(&cfg)
		if err := cfg.Validate(c.width); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%d) = %v, want an error containing %q", c.width, err, c.want)
		}
	}
}
