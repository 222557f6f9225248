package linattn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

const (
	tolParity = 1e-10 // float64 parity with the reference (docs/STYLE.md §11.1)
	tolF32    = 1e-5  // float32 parity
	tolGrad   = 1e-6  // analytic vs finite-difference gradients (docs/STYLE.md §11.2)
)

// Awkward sizes (docs/STYLE.md §11.1): batch, tokens, input dimension, key hidden width, readout hidden width,
// channels.
const tB, tN, tD, tH, tHo, tM = 2, 5, 4, 3, 5, 3

// testGain is the workspace gain g of eq. (8) in the parity and gradient tests.
const testGain = 1.7

// testKeyGain is the key gain g_k of eq. (8), different from testGain so that the tests tell the two apart.
const testKeyGain = 2.3

// run executes the model's graph once and returns θ̂, p and keys flattened to float64.
func (m testCase) run(t *testing.T, p *params, dtype dtypes.DType, act string) refOut {
	t.Helper()
	outs := MustExecOnceN(wbtest.Backend(t), func(in []*Node) []*Node {
		o := m.graph(in, act)
		return []*Node{ConvertDType(o.Theta, dtypes.Float64), ConvertDType(o.Workspace, dtypes.Float64),
			ConvertDType(o.Keys, dtypes.Float64)}
	}, p.tensors(dtype, -1, nil)...)
	return refOut{theta: wbtest.Flat64(outs[0]), p: wbtest.Flat64(outs[1]), keys: wbtest.Flat64(outs[2])}
}

func requireOut(t *testing.T, want, got refOut, tol float64) {
	t.Helper()
	wbtest.RequireClose(t, "theta", want.theta, got.theta, tol)
	wbtest.RequireClose(t, "workspace", want.p, got.p, tol)
	wbtest.RequireClose(t, "keys", want.keys, got.keys, tol)
}

func TestForward_MatchesReference(t *testing.T) {
	for _, c := range cases {
		for _, act := range []string{GELU, ReLU} {
			for _, patch := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/patch=%v", c.name, act, patch), func(t *testing.T) {
					m := c.make(wbtest.RNG(7), patch)
					requireOut(t, m.ref(m.p.vals, act), m.run(t, m.p, dtypes.Float64, act), tolParity)
					r := m.p.rounded()
					requireOut(t, m.ref(r.vals, act), m.run(t, r, dtypes.Float32, act), tolF32)
				})
			}
		}
	}
}

// TestForward_SharedTokens checks the shared-token form (x of batch 1): it equals the reference run on x repeated
// for every context, with and without a patch, in float64.
func TestForward_SharedTokens(t *testing.T) {
	for _, c := range cases {
		for _, patch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/patch=%v", c.name, patch), func(t *testing.T) {
				m := c.make(wbtest.RNG(5), patch)
				one := m.p.vals[0][:tN*tD] // context 0's tokens
				repeated := make([]float64, 0, tB*tN*tD)
				for b := 0; b < tB; b++ {
					repeated = append(repeated, one...)
				}
				full := &params{names: m.p.names, dims: m.p.dims, vals: append([][]float64{repeated}, m.p.vals[1:]...)}
				shared := &params{names: m.p.names, dims: append([][]int{{1, tN, tD}}, m.p.dims[1:]...),
					vals: append([][]float64{one}, m.p.vals[1:]...)}
				requireOut(t, m.ref(full.vals, GELU), m.run(t, shared, dtypes.Float64, GELU), tolParity)
			})
		}
	}
}

// TestForward_Gradients checks the gradient of ⟨θ̂, c_1⟩ + ⟨p, c_2⟩ + ⟨keys, c_3⟩ (random cotangents) with respect to
// x, y and every weight against central finite differences.
func TestForward_Gradients(t *testing.T) {
	backend := wbtest.Backend(t)
	for _, c := range cases {
		for _, shared := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/shared=%v", c.name, shared), func(t *testing.T) {
				testGradients(t, backend, c.make, shared)
			})
		}
	}
}

// testGradients checks one case's gradients; with shared the tokens x are one context's, shared by the batch.
func testGradients(t *testing.T, backend compute.Backend, newModel func(*rand.Rand, bool) testCase, shared bool) {
	rng := wbtest.RNG(11)
	m := newModel(rng, false)
	if shared {
		m.p.vals[0] = m.p.vals[0][:tN*tD]
		m.p.dims = append([][]int{{1, tN, tD}}, m.p.dims[1:]...)
	}
	c1, c2, c3 := wbtest.Normal(rng, tB*tD, 1), wbtest.Normal(rng, tB*tM, 1), wbtest.Normal(rng, tB*tN*tM, 1)
	loss := func(in []*Node) *Node {
		o := m.graph(in, GELU)
		g := in[0].Graph()
		dot := func(a *Node, c []float64) *Node {
			return ReduceAllSum(Mul(a, Reshape(Const(g, c), a.Shape().Dimensions...)))
		}
		return Add(Add(dot(o.Theta, c1), dot(o.Workspace, c2)), dot(o.Keys, c3))
	}
	lossExec := MustNewExec(backend, func(in []*Node) *Node { return loss(in) })
	gradExec := MustNewExec(backend, func(in []*Node) []*Node { return Gradient(loss(in), in...) })
	grads := gradExec.MustExec(m.p.tensors(dtypes.Float64, -1, nil)...)
	for i, name := range m.p.names {
		f := func(x []float64) float64 {
			return wbtest.Flat64(lossExec.MustExec(m.p.tensors(dtypes.Float64, i, x)...)[0])[0]
		}
		wbtest.RequireGradient(t, "d loss/d "+name, f, m.p.vals[i], wbtest.Flat64(grads[i]), tolGrad)
	}
}

// TestForwardA_PatchAffectsOnlyLaterLayers checks the layer structure of eq. (3)–(4) and (7): replacing layer ℓ's keys
// leaves φ_1 … φ_{ℓ−1} unchanged and changes φ_ℓ and (through the workspace) the keys of layer ℓ+1.
func TestForwardA_PatchAffectsOnlyLaterLayers(t *testing.T) {
	m := caseA(wbtest.RNG(3), true)
	noPatch := m.ref(withMask(m.p, make([]float64, tB*tM)), GELU)
	for l := 1; l <= tM; l++ {
		mask := make([]float64, tB*tM)
		for b := 0; b < tB; b++ {
			mask[b*tM+l-1] = 1
		}
		p := &params{names: m.p.names, dims: m.p.dims, vals: withMask(m.p, mask)}
		p.vals[len(p.vals)-2] = noPatch.keys // donor = the target's own clean keys: nothing changes...
		requireOut(t, noPatch, m.run(t, p, dtypes.Float64, GELU), tolParity)
		p.vals[len(p.vals)-2] = wbtest.Normal(wbtest.RNG(uint64(l)), tB*tN*tM, 1) // ...random donor keys do
		got := m.run(t, p, dtypes.Float64, GELU)
		p.vals[len(p.vals)-1] = make([]float64, tB*tM)
		base := m.run(t, p, dtypes.Float64, GELU) // the same graph unpatched, so earlier layers agree exactly
		for b := 0; b < tB; b++ {
			for j := 1; j <= tM; j++ {
				d := got.p[b*tM+j-1] - base.p[b*tM+j-1]
				if j < l && d != 0 {
					t.Fatalf("patching layer %d changed φ_%d of context %d by %g", l, j, b, d)
				}
				if j == l && d == 0 {
					t.Fatalf("patching layer %d left φ_%d of context %d unchanged", l, j, b)
				}
			}
		}
	}
}

// withMask returns p's values with the last input (the patch mask) replaced.
func withMask(p *params, mask []float64) [][]float64 {
	v := append([][]float64{}, p.vals...)
	v[len(v)-1] = mask
	return v
}

// TestStatistic_IsMeanOfKeyTimesValue checks eq. (1) on constant keys: φ = k·mean(y).
func TestStatistic_IsMeanOfKeyTimesValue(t *testing.T) {
	y := []float64{1, 2, 3, -4, 0.5, 7}
	out := MustExecOnce(wbtest.Backend(t), func(y *Node) *Node {
		keys := Reshape(Const(y.Graph(), []float64{2, 2, 2, -1, -1, -1}), 1, 6, 1)
		return Statistic(Concatenate([]*Node{keys, MulScalar(keys, 3)}, 2), Reshape(y, 1, 6))
	}, wbtest.Tensor64(y, 6))
	mean := (1 + 2 + 3 - 4 + 0.5 + 7) / 6.0
	want := []float64{(2*(1+2+3) - (-4 + 0.5 + 7)) / 6, 3 * (2*(1+2+3) - (-4 + 0.5 + 7)) / 6}
	wbtest.RequireClose(t, "phi", want, wbtest.Flat64(out), tolParity)
	_ = mean
}

// TestModel_VariablesAndShapes checks the scope paths and shapes that doc.go documents, and NumParams.
func TestModel_VariablesAndShapes(t *testing.T) {
	const D, B, N = 6, 2, 5
	want := map[string][]string{
		KindA: {
			"/linattn/layer_01/key/w_x [6 7]", "/linattn/layer_01/key/b_1 [7]", "/linattn/layer_01/key/w_2 [7]",
			"/linattn/layer_01/key/b_2 []", "/linattn/layer_02/key/w_x [6 7]", "/linattn/layer_02/key/b_1 [7]",
			"/linattn/layer_02/key/w_2 [7]", "/linattn/layer_02/key/b_2 []", "/linattn/layer_02/key/w_p [1 7]",
			"/linattn/readout/w_1 [2 9]", "/linattn/readout/b_1 [9]", "/linattn/readout/w_2 [9 6]",
			"/linattn/readout/b_2 [6]",
		},
		KindB: {
			"/linattn/heads/w_1 [2 6 7]", "/linattn/heads/b_1 [2 7]", "/linattn/heads/w_2 [2 7]",
			"/linattn/heads/b_2 [2]", "/linattn/readout/w_1 [2 9]", "/linattn/readout/b_1 [9]",
			"/linattn/readout/w_2 [9 6]", "/linattn/readout/b_2 [6]",
		},
		KindC: {"/linattn/key/w [2 6]", "/linattn/readout/w [6 2]"},
		KindAPrime: {
			"/linattn/layer_01/query/q [6]", "/linattn/layer_02/query/w_1 [1 7]", "/linattn/layer_02/query/b_1 [7]",
			"/linattn/layer_02/query/w_2 [7 6]", "/linattn/layer_02/query/b_2 [6]", "/linattn/readout/w_1 [2 9]",
			"/linattn/readout/b_1 [9]", "/linattn/readout/w_2 [9 6]", "/linattn/readout/b_2 [6]",
		},
	}
	for _, kind := range []string{KindA, KindB, KindC, KindAPrime} {
		t.Run(kind, func(t *testing.T) {
			cfg := Config{Kind: kind, Measurements: 2, Hidden: 7, ReadoutHidden: 9, Activation: GELU, InitScale: 1}
			vars := model.NewStore()
			outs := model.MustExecOnceN(wbtest.Backend(t), vars, func(scope *model.Scope, x, y *Node) []*Node {
				o := Model(scope, cfg, x, y, nil)
				return []*Node{o.Theta, o.Workspace, o.Keys}
			}, wbtest.Tensor64(wbtest.Normal(wbtest.RNG(1), B*N*D, 1), B, N, D),
				wbtest.Tensor64(wbtest.Normal(wbtest.RNG(2), B*N, 1), B, N))
			for i, dims := range [][]int{{B, D}, {B, 2}, {B, N, 2}} {
				if fmt.Sprint(outs[i].Shape().Dimensions) != fmt.Sprint(dims) {
					t.Errorf("output %d shape %s, want %v", i, outs[i].Shape(), dims)
				}
			}
			var got []string
			n := 0
			for v := range vars.IterVariables() {
				if v.Trainable {
					got = append(got, fmt.Sprintf("%s %v", v.Path(), v.Shape().Dimensions))
					n += v.Shape().Size()
				}
			}
			if strings.Join(sorted(got), "\n") != strings.Join(sorted(want[kind]), "\n") {
				t.Errorf("variables:\n%s\nwant:\n%s", strings.Join(sorted(got), "\n"), strings.Join(sorted(want[kind]), "\n"))
			}
			if n != cfg.NumParams(D) {
				t.Errorf("NumParams=%d, counted %d", cfg.NumParams(D), n)
			}
		})
	}
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestConfig_Validate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	bad := map[string]func(*Config){
		"kind":           func(c *Config) { c.Kind = "d" },
		"measurements":   func(c *Config) { c.Measurements = 0 },
		"hidden":         func(c *Config) { c.Hidden = 0 },
		"readout":        func(c *Config) { c.ReadoutHidden = -1 },
		"activation":     func(c *Config) { c.Activation = "tanh" },
		"init_scale":     func(c *Config) { c.InitScale = 0 },
		"workspace_gain": func(c *Config) { c.WorkspaceGain = -1 },
		"key_gain":       func(c *Config) { c.KeyGain = math.Inf(1) },
	}
	for key, mutate := range bad {
		c := DefaultConfig()
		mutate(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: Validate() = %v, want an error naming %q", key, err, key)
		}
	}
	c := DefaultConfig()
	if c.WorkspaceGain = 3; c.KeyGainOrDefault() != 3 {
		t.Errorf("key_gain=0 with workspace_gain=3: KeyGainOrDefault() = %g, want 3", c.KeyGainOrDefault())
	}
	if c.KeyGain = 16; c.KeyGainOrDefault() != 16 || c.Gain() != 3 {
		t.Errorf("key_gain=16, workspace_gain=3: gains %g and %g, want 16 and 3", c.KeyGainOrDefault(), c.Gain())
	}
	c = DefaultConfig()
	c.Kind, c.Hidden = KindC, 0 // C has no MLP
	if err := c.Validate(); err != nil {
		t.Errorf("model C with hidden=0: %v", err)
	}
}
