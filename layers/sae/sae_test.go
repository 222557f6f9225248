package sae

import (
	"fmt"
	"math"
	"slices"
	"sort"
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

// Awkward sizes (docs/STYLE.md §11.1): N = 5 inputs, D = 4, F = 7, K = 3.
const testN, testD, testF, testK = 5, 4, 7, 3

func testConfig(kind string) Config {
	cfg := DefaultConfig()
	cfg.Width, cfg.Features, cfg.Kind, cfg.K, cfg.L1 = testD, testF, kind, testK, 0.3
	return cfg
}

// fixture is a random SAE input and weights; b_dec and b_enc are non-zero so that the tied bias is exercised.
type fixture struct {
	x, wEnc, bEnc, wDec, bDec []float64
}

func newFixture(seed uint64, N, D, F int) fixture {
	rng := wbtest.RNG(seed)
	return fixture{
		x:    wbtest.Normal(rng, N*D, 1),
		wEnc: wbtest.Normal(rng, D*F, 0.8),
		bEnc: wbtest.Normal(rng, F, 0.3),
		wDec: wbtest.Normal(rng, F*D, 0.7),
		bDec: wbtest.Normal(rng, D, 0.5),
	}
}

func (fx fixture) values() [][]float64 { return [][]float64{fx.x, fx.wEnc, fx.bEnc, fx.wDec, fx.bDec} }

func paramDims(N, D, F int) [][]int { return [][]int{{N, D}, {D, F}, {F}, {F, D}, {D}} }

// objectiveOutputs runs Objective on fx in dtype and returns [loss, mse, l1, l0, fvu, f, x̂] flattened to float64.
func objectiveOutputs(t *testing.T, fx fixture, cfg Config, N int, dtype dtypes.DType) [][]float64 {
	t.Helper()
	args := wbtest.Tensors64(fx.values(), paramDims(N, cfg.Width, cfg.NumFeatures()))
	outs := wbtest.ExecFlat(t, func(in []*Node) []*Node {
		for i := range in {
			in[i] = ConvertDType(in[i], dtype)
		}
		tm := Objective(in[0], Params{WEnc: in[1], BEnc: in[2], WDec: in[3], BDec: in[4]}, nil, cfg)
		out := []*Node{tm.Loss, tm.MSE, tm.L1, tm.L0, tm.FVU, tm.Features, tm.Reconstruction}
		for i := range out {
			out[i] = ConvertDType(out[i], dtypes.Float64)
		}
		return out
	}, args...)
	return outs
}

func TestObjective_MatchesReference(t *testing.T) {
	for _, kind := range []string{KindReLUL1, KindTopK} {
		for _, dt := range []dtypes.DType{dtypes.Float64, dtypes.Float32} {
			t.Run(fmt.Sprintf("%s/%s", kind, dt), func(t *testing.T) {
				cfg := testConfig(kind)
				fx := newFixture(1, testN, testD, testF)
				want := referenceSAE(fx.x, fx.wEnc, fx.bEnc, fx.wDec, fx.bDec, testN, testD, testF, kind, testK, cfg.L1)
				got := objectiveOutputs(t, fx, cfg, testN, dt)
				tol := tolParity
				if dt == dtypes.Float32 {
					tol = tolF32
				}
				for i, name := range []string{"loss", "mse", "l1", "l0", "fvu"} {
					w := []float64{want.loss, want.mse, want.l1, want.l0, want.fvu}[i]
					wbtest.RequireClose(t, name, []float64{w}, got[i], tol)
				}
				wbtest.RequireClose(t, "features", want.f, got[5], tol)
				wbtest.RequireClose(t, "reconstruction", want.xHat, got[6], tol)
				if want.l0 == 0 || want.l0 == testF {
					t.Fatalf("fixture gives L0=%g: want some features on and some off", want.l0)
				}
			})
		}
	}
}

// Every dictionary row has unit norm whatever the raw weights' scale (equation 1), so rescaling W_dec changes
// nothing.
func TestDictionary_UnitRowsAndScaleInvariance(t *testing.T) {
	fx := newFixture(2, testN, testD, testF)
	scaled := make([]float64, len(fx.wDec))
	for i, w := range fx.wDec {
		scaled[i] = 3.5 * w
	}
	outs := wbtest.ExecFlat(t, func(in []*Node) []*Node { return []*Node{Dictionary(in[0]), Dictionary(in[1])} },
		wbtest.Tensor64(fx.wDec, testF, testD), wbtest.Tensor64(scaled, testF, testD))
	for j := 0; j < testF; j++ {
		norm := 0.0
		for d := 0; d < testD; d++ {
			norm += outs[0][j*testD+d] * outs[0][j*testD+d]
		}
		if math.Abs(norm-1) > 1e-10 {
			t.Fatalf("row %d has squared norm %.15g, want 1", j, norm)
		}
	}
	wbtest.RequireClose(t, "rescaled W_dec", outs[0], outs[1], 1e-10)
}

// TopKByArgMax keeps exactly k entries per row, the k largest, even when values tie (ties go to the lower index).
func TestTopKByArgMax_SelectsExactlyK(t *testing.T) {
	const N, F = 6, 11
	rng := wbtest.RNG(3)
	a := wbtest.Normal(rng, N*F, 1)
	for j := 0; j < F; j++ { // row 4: all equal; row 5: three-way tie at the top
		a[4*F+j] = 0.25
	}
	a[5*F+2], a[5*F+7], a[5*F+9] = 5, 5, 5
	for _, k := range []int{1, 3, F} {
		got := wbtest.ExecFlat(t, func(in []*Node) []*Node {
			return []*Node{ConvertDType(TopKByArgMax(in[0], k), dtypes.Float64)}
		}, wbtest.Tensor64(a, N, F))[0]
		for n := 0; n < N; n++ {
			order := make([]int, F)
			for j := range order {
				order[j] = j
			}
			row := a[n*F : (n+1)*F]
			sort.SliceStable(order, func(i, j int) bool { return row[order[i]] > row[order[j]] })
			var sel []int
			for j := 0; j < F; j++ {
				if got[n*F+j] == 1 {
					sel = append(sel, j)
				}
			}
			want := slices.Sorted(slices.Values(order[:k]))
			if !slices.Equal(sel, want) {
				t.Fatalf("k=%d row %d: selected %v, want %v (values %v)", k, n, sel, want, row)
			}
		}
	}
}

// TopKByArgMax gives gomlx's graph.TopKMask (an independent implementation: a stable sort per row), ties included.
func TestTopKByArgMax_MatchesGomlxTopKMask(t *testing.T) {
	const N, F = 5, 9
	a := wbtest.Normal(wbtest.RNG(4), N*F, 1)
	a[2*F+1], a[2*F+4] = 3, 3 // a tie at the top
	for _, k := range []int{1, 2, 4, F} {
		out := wbtest.ExecFlat(t, func(in []*Node) []*Node {
			return []*Node{ConvertDType(TopKByArgMax(in[0], k), dtypes.Float64),
				ConvertDType(TopKMask(in[0], k, -1), dtypes.Float64)}
		}, wbtest.Tensor64(a, N, F))
		wbtest.RequireClose(t, fmt.Sprintf("k=%d", k), out[1], out[0], 0)
	}
}

// Gradients of the loss (and of ⟨x̂, c⟩) match central finite differences for x and every weight. The fixture keeps
// every pre-activation, and the gap at the top-k boundary, well away from the kinks.
func TestObjective_GradientsMatchFiniteDifferences(t *testing.T) {
	for _, kind := range []string{KindReLUL1, KindTopK} {
		t.Run(kind, func(t *testing.T) {
			cfg := testConfig(kind)
			fx := newFixture(7, testN, testD, testF) // a seed whose fixture passes requireAwayFromKinks
			requireAwayFromKinks(t, fx, cfg)
			c := wbtest.Normal(wbtest.RNG(5), testN*testD, 1)
			wbtest.CheckGradients(t, []string{"x", "W_enc", "b_enc", "W_dec", "b_dec"}, fx.values(),
				paramDims(testN, testD, testF), func(in []*Node) *Node {
					tm := Objective(in[0], Params{WEnc: in[1], BEnc: in[2], WDec: in[3], BDec: in[4]}, nil, cfg)
					return Add(tm.Loss, MulScalar(wbtest.CotangentLoss(tm.Reconstruction, c), 0.1))
				})
		})
	}
}

// requireAwayFromKinks fails unless every pre-activation is ≥ 0.05 from 0 and, for top-k, the k-th and (k+1)-th
// largest differ by ≥ 0.05: finite differences across a kink are meaningless.
func requireAwayFromKinks(t *testing.T, fx fixture, cfg Config) {
	t.Helper()
	D, F := cfg.Width, cfg.NumFeatures()
	for n := 0; n < len(fx.x)/D; n++ {
		a := make([]float64, F)
		for j := range a {
			a[j] = fx.bEnc[j]
			for d := 0; d < D; d++ {
				a[j] += (fx.x[n*D+d] - fx.bDec[d]) * fx.wEnc[d*F+j]
			}
			if math.Abs(a[j]) < 0.05 {
				t.Fatalf("fixture: pre-activation a[%d,%d]=%g too close to 0", n, j, a[j])
			}
		}
		if cfg.Kind == KindTopK {
			s := slices.Clone(a)
			sort.Sort(sort.Reverse(sort.Float64Slice(s)))
			if s[cfg.K-1]-s[cfg.K] < 0.05 {
				t.Fatalf("fixture: row %d has top-k gap %g", n, s[cfg.K-1]-s[cfg.K])
			}
		}
	}
}

// Loss creates the documented variables: the encoder starts as the dictionary's transpose, the biases at 0, λ at
// cfg.L1 (not trainable); the variables hold NumParams trainable values; leading axes of x are flattened.
func TestLoss_VariablesAndInit(t *testing.T) {
	cfg := testConfig(KindReLUL1)
	vars := model.NewStore()
	x := wbtest.Tensor64(newFixture(6, 2*3, testD, testF).x, 2, 3, testD)
	outs := model.MustExecOnceN(wbtest.Backend(t), vars, func(scope *model.Scope, x *Node) []*Node {
		tm := Loss(scope, cfg, x)
		return []*Node{tm.Features, tm.Lambda}
	}, x)
	if d := outs[0].Shape().Dimensions; !slices.Equal(d, []int{6, testF}) {
		t.Fatalf("features dims %v, want [6 %d]", d, testF)
	}
	if l := wbtest.Flat64(outs[1])[0]; l != cfg.L1 {
		t.Fatalf("λ = %g, want %g", l, cfg.L1)
	}
	vals := map[string][]float64{}
	trainable := 0
	for v := range vars.IterVariables() {
		vals[v.Name()] = wbtest.Flat64(v.MustValue())
		if v.Scope() != "/"+Scope {
			t.Fatalf("variable %s outside scope /%s", v.Path(), Scope)
		}
		if v.Trainable {
			trainable += v.Shape().Size()
		} else if v.Name() != VarL1 {
			t.Fatalf("variable %s is not trainable", v.Name())
		}
	}
	if len(vals) != 5 || trainable != cfg.NumParams() {
		t.Fatalf("variables %d holding %d trainable values, want 5 and NumParams=%d", len(vals), trainable, cfg.NumParams())
	}
	dec, enc := vals[VarWDec], vals[VarWEnc]
	for j := 0; j < testF; j++ {
		norm := 0.0
		for d := 0; d < testD; d++ {
			norm += dec[j*testD+d] * dec[j*testD+d]
			if math.Abs(enc[d*testF+j]-dec[j*testD+d]) > 1e-12 {
				t.Fatalf("W_enc[%d,%d]=%g, want W_dec[%d,%d]=%g (tied init)", d, j, enc[d*testF+j], j, d, dec[j*testD+d])
			}
		}
		if math.Abs(norm-1) > 1e-10 {
			t.Fatalf("initial dictionary row %d has squared norm %g", j, norm)
		}
	}
	if wbtest.MaxAbsDiff(vals[VarBEnc], make([]float64, testF)) != 0 || wbtest.MaxAbsDiff(vals[VarBDec], make([]float64, testD)) != 0 {
		t.Fatal("biases do not start at 0")
	}
}

// In a training graph λ follows equation (7): up while L0 is above the target, down while below, by at most e^η.
func TestLoss_AdaptsLambdaInTraining(t *testing.T) {
	for _, c := range []struct {
		target float64
		up     bool
	}{{0.5, true}, {testF, false}} {
		cfg := testConfig(KindReLUL1)
		cfg.TargetL0, cfg.L1Rate = c.target, 0.2
		vars := model.NewStore()
		x := wbtest.Tensor64(newFixture(7, testN, testD, testF).x, testN, testD)
		exec := model.MustNewExec(wbtest.Backend(t), vars, func(scope *model.Scope, x *Node) []*Node {
			scope.Store().SetTraining(x.Graph(), true)
			tm := Loss(scope, cfg, x)
			return []*Node{tm.L0, tm.Lambda}
		})
		outs := exec.MustExec(x)
		l0, before := wbtest.Flat64(outs[0])[0], wbtest.Flat64(outs[1])[0]
		after := wbtest.Flat64(vars.GetVariable(model.JoinPath("/", Scope, VarL1)).MustValue())[0]
		rel := math.Max(-1, math.Min(1, (l0-c.target)/c.target))
		want := before * math.Exp(cfg.L1Rate*rel)
		if !wbtest.Close(want, after, 1e-12) || (after > before) != c.up {
			t.Fatalf("target %g, L0 %g: λ %g → %g, want %g", c.target, l0, before, after, want)
		}
	}
}

func TestConfig_Validate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	if f := DefaultConfig().NumFeatures(); f != 8*256 {
		t.Fatalf("default F = %d, want 8·D = 2048", f)
	}
	for _, mod := range []func(c *Config){
		func(c *Config) { c.Width = 0 },
		func(c *Config) { c.Features = -1 },
		func(c *Config) { c.Kind = "jumprelu" },
		func(c *Config) { c.Kind, c.K = KindTopK, 0 },
		func(c *Config) { c.Kind, c.Features, c.K = KindTopK, 16, 17 },
		func(c *Config) { c.L1 = -1 },
		func(c *Config) { c.L1 = math.Inf(1) },
		func(c *Config) { c.TargetL0 = -1 },
		func(c *Config) { c.L1Rate = math.NaN() },
		func(c *Config) { c.L1 = 0 },
	} {
		c := DefaultConfig()
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("Validate accepted %+v", c)
		}
	}
}

// tensorsOf is a small helper for the training test.
func tensorsOf(x []float64, N, D int) *tensors.Tensor { return wbtest.Tensor64(x, N, D) }

// BenchmarkTopKMask times TopKByArgMax against gomlx's graph.TopKMask (a sort per row) on the codes of an SAE
// training batch, [256, 48] with k = 3, on the pure-Go backend: the reason Encode keeps its own.
func BenchmarkTopKMask(b *testing.B) {
	const N, F, k = 256, 48, 3
	x := wbtest.Tensor64(wbtest.Normal(wbtest.RNG(1), N*F, 1), N, F)
	for _, c := range []struct {
		name string
		mask func(a *Node) *Node
	}{
		{"argmax", func(a *Node) *Node { return TopKByArgMax(a, k) }},
		{"gomlx_sort", func(a *Node) *Node { return TopKMask(a, k, -1) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			exec := MustNewExec(wbtest.Backend(b), func(a *Node) *Node { return ConvertDType(c.mask(a), dtypes.Float64) })
			exec.MustExec(x)[0].FinalizeAll()
			b.ResetTimer()
			for range b.N {
				exec.MustExec(x)[0].FinalizeAll()
			}
		})
	}
}
