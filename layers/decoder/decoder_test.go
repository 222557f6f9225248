package decoder

import (
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/hook"
	"github.com/protolab/protolab/workbench/wbtest"
)

const (
	tolParity = 1e-10 // float64 parity with the reference (docs/STYLE.md §11.1)
	tolF32    = 1e-5  // float32 parity
	tolGrad   = 1e-6  // analytic vs finite-difference gradients (docs/STYLE.md §11.2)
)

// Test sizes: awkward on purpose (docs/STYLE.md §11.1).
const testB, testT = 2, 5

// tinyConfigs are the decoder configurations of the reference tests: D=12, V=11, L=2.
func tinyConfigs() map[string]Config {
	base := DefaultConfig()
	base.VocabSize, base.Width, base.NumLayers, base.MaxLen = 11, 12, 2, 8
	base.DType = "float64"
	base.NormEpsilon = 1e-5

	untied := base
	untied.TieEmbeddings = false
	untied.Attention = attention.Config{NumHeads: 3, RoPEBase: 10_000}

	gqa := base
	gqa.TieEmbeddings = true
	gqa.FFNHidden = 20
	gqa.Attention = attention.Config{NumHeads: 6, NumKVHeads: 2, RoPEBase: 500_000}
	return map[string]Config{"untied H=3": untied, "tied GQA H=6 Hkv=2": gqa}
}

func configNames() []string {
	names := make([]string, 0, 2)
	for name := range tinyConfigs() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// randomTokens returns B rows of T tokens in [0, V).
func randomTokens(seed uint64, B, T, V int) [][]int32 {
	rng := wbtest.RNG(seed)
	out := make([][]int32, B)
	for b := range out {
		out[b] = make([]int32, T)
		for t := range out[b] {
			out[b][t] = int32(rng.IntN(V))
		}
	}
	return out
}

// randomizeVariables overwrites every trainable variable with seeded random values: norm gains and scalars
// 1 + N(0, 0.3²), other weights N(0, 0.4²), so that the reference tests see non-trivial gains and O(1) activations
// (the scalars are ProtoT's temperatures and α: near 0, 1/|τ| would blow up and |τ| has a kink). It returns the
// values by variable path.
func randomizeVariables(t *testing.T, scope *model.Store, seed uint64) refParams {
	t.Helper()
	rng := wbtest.RNG(seed)
	p := refParams{}
	for v := range scope.IterVariables() {
		if !v.Trainable {
			continue
		}
		vals := wbtest.Normal(rng, v.Shape().Size(), 0.4)
		if strings.Contains(v.Scope(), "norm") || v.Shape().Rank() == 0 {
			for i := range vals {
				vals[i] = 1 + 0.75*vals[i]
			}
		}
		if err := v.SetValue(wbtest.Tensor64(vals, v.Shape().Dimensions...)); err != nil {
			t.Fatalf("setting %s: %+v", v.Path(), err)
		}
		p[v.Path()] = vals
	}
	return p
}

// logitsExec returns an executor of Logits on scope.
func logitsExec(t *testing.T, scope *model.Store, cfg Config) *model.Exec {
	return model.MustNewExec(wbtest.Backend(t), scope, func(scope *model.Scope, tokens *Node) *Node {
		return Logits(scope, cfg, tokens)
	})
}

// newTinyModel builds Logits for cfg on a fresh store, runs it once to create the variables, then randomizes
// them. It returns the context, the executor and the parameter values.
func newTinyModel(t *testing.T, cfg Config, seed uint64) (*model.Store, *model.Exec, refParams) {
	t.Helper()
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(seed))
	exec := logitsExec(t, vars, cfg)
	exec.MustExec(tensors.FromValue(randomTokens(seed, testB, testT, cfg.VocabSize)))
	return vars, exec, randomizeVariables(t, vars, seed+1)
}

func TestRMSNorm_MatchesReference(t *testing.T) {
	const D, eps = 12, 1e-3 // a large ε so that a misplaced ε shows
	rng := wbtest.RNG(1)
	x := wbtest.Normal(rng, testB*testT*D, 1)
	gain := wbtest.Normal(rng, D, 1)
	got := wbtest.Flat64(MustExecOnce(wbtest.Backend(t), func(x, g *Node) *Node { return RMSNorm(x, g, eps) },
		wbtest.Tensor64(x, testB, testT, D), wbtest.Tensor64(gain, D)))
	wbtest.RequireClose(t, "RMSNorm", referenceRMSNorm(x, gain, D, eps), got, tolParity)
}

func TestSwiGLU_MatchesReference(t *testing.T) {
	const D, F = 12, 7
	rng := wbtest.RNG(2)
	x, gate, up, down := wbtest.Normal(rng, testB*testT*D, 1), wbtest.Normal(rng, D*F, 0.5),
		wbtest.Normal(rng, D*F, 0.5), wbtest.Normal(rng, F*D, 0.5)
	got := wbtest.Flat64(MustExecOnce(wbtest.Backend(t), SwiGLU, wbtest.Tensor64(x, testB, testT, D),
		wbtest.Tensor64(gate, D, F), wbtest.Tensor64(up, D, F), wbtest.Tensor64(down, F, D)))
	wbtest.RequireClose(t, "SwiGLU", referenceSwiGLU(x, gate, up, down, testB*testT, D, F), got, tolParity)
}

func TestCrossEntropy_MatchesReference(t *testing.T) {
	const V = 11
	logits := wbtest.Normal(wbtest.RNG(3), testB*testT*V, 3)
	targets := randomTokens(4, testB, testT, V)
	got := wbtest.Flat64(MustExecOnce(wbtest.Backend(t), CrossEntropy, wbtest.Tensor64(logits, testB, testT, V),
		tensors.FromValue(targets)))
	wbtest.RequireClose(t, "CrossEntropy", referenceCrossEntropy(logits, slices.Concat(targets...), V), got, tolParity)
}

func TestBlock_MatchesReference(t *testing.T) {
	for i, name := range configNames() {
		cfg := tinyConfigs()[name]
		t.Run(name, func(t *testing.T) {
			vars := model.NewStore()
			vars.SetParam(model.ParamInitialSeed, int64(10+i))
			m := newStack(cfg, "test")
			exec := model.MustNewExec(wbtest.Backend(t), vars, func(scope *model.Scope, h *Node) *Node {
				c := scope.At("%s", BlockScope(0))
				return m.block(c, h, func(x *Node) *Node { return m.mixers[0].Forward(c, x) })
			})
			h := wbtest.Normal(wbtest.RNG(uint64(20+i)), testB*testT*cfg.Width, 1)
			exec.MustExec(wbtest.Tensor64(h, testB, testT, cfg.Width))
			p := randomizeVariables(t, vars, uint64(30+i))
			got := wbtest.Flat64(exec.MustExec(wbtest.Tensor64(h, testB, testT, cfg.Width))[0])
			want := referenceBlock(p, "/"+BlockScope(0), cfg, h, testB, testT)
			wbtest.RequireClose(t, "block", want, got, tolParity)
		})
	}
}

func TestLogits_MatchesReference(t *testing.T) {
	for i, name := range configNames() {
		cfg := tinyConfigs()[name]
		t.Run(name, func(t *testing.T) {
			_, exec, p := newTinyModel(t, cfg, uint64(40+10*i))
			tokens := randomTokens(uint64(41+10*i), testB, testT, cfg.VocabSize)
			got := exec.MustExec(tensors.FromValue(tokens))[0]
			if !slices.Equal(got.Shape().Dimensions, []int{testB, testT, cfg.VocabSize}) {
				t.Fatalf("Logits shape %s, want [%d %d %d]", got.Shape(), testB, testT, cfg.VocabSize)
			}
			wbtest.RequireClose(t, "logits", referenceLogits(p, cfg, tokens), wbtest.Flat64(got), tolParity)
		})
	}
}

func TestLogits_Float32MatchesReference(t *testing.T) {
	cfg := tinyConfigs()["tied GQA H=6 Hkv=2"]
	cfg.DType = "float32"
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(50))
	exec := logitsExec(t, vars, cfg)
	tokens := randomTokens(51, testB, testT, cfg.VocabSize)
	exec.MustExec(tensors.FromValue(tokens))
	// Set float32 weights; the reference sees exactly the rounded values.
	rng := wbtest.RNG(52)
	p := refParams{}
	for v := range vars.IterVariables() {
		if !v.Trainable {
			continue
		}
		vals := wbtest.Normal(rng, v.Shape().Size(), 0.4)
		f32 := make([]float32, len(vals))
		for i, x := range vals {
			if strings.Contains(v.Scope(), "norm") {
				x += 1
			}
			f32[i] = float32(x)
			vals[i] = float64(f32[i])
		}
		v.MustSetValue(tensors.FromFlatDataAndDimensions(f32, v.Shape().Dimensions...))
		p[v.Path()] = vals
	}
	out := exec.MustExec(tensors.FromValue(tokens))[0]
	got32 := tensors.MustCopyFlatData[float32](out)
	got := make([]float64, len(got32))
	for i, x := range got32 {
		got[i] = float64(x)
	}
	wbtest.RequireClose(t, "float32 logits", referenceLogits(p, cfg, tokens), got, tolF32)
}

func TestNextTokenLoss_MatchesReference(t *testing.T) {
	cfg := tinyConfigs()["untied H=3"]
	vars, _, p := newTinyModel(t, cfg, 60)
	batch := randomTokens(61, testB, testT+1, cfg.VocabSize)
	outs := model.MustExecOnceN(wbtest.Backend(t), vars, func(scope *model.Scope, batch *Node) []*Node {
		return []*Node{TokenLosses(scope, cfg, batch), NextTokenLoss(scope, cfg, batch)}
	}, tensors.FromValue(batch))
	inputs, targets := make([][]int32, testB), []int32{}
	for b := range batch {
		inputs[b] = batch[b][:testT]
		targets = append(targets, batch[b][1:]...)
	}
	want := referenceCrossEntropy(referenceLogits(p, cfg, inputs), targets, cfg.VocabSize)
	wbtest.RequireClose(t, "TokenLosses", want, wbtest.Flat64(outs[0]), tolParity)
	mean := 0.0
	for _, x := range want {
		mean += x / float64(len(want))
	}
	wbtest.RequireClose(t, "NextTokenLoss", []float64{mean}, wbtest.Flat64(outs[1]), tolParity)
}

func TestLogits_GradientsMatchFiniteDifferences(t *testing.T) {
	for i, name := range configNames() {
		cfg := tinyConfigs()[name]
		t.Run(name, func(t *testing.T) {
			cfg.FFNHidden = 6 // fewer coordinates to difference; the FFN code is the same
			vars, _, p := newTinyModel(t, cfg, uint64(70+i))
			tokens := tensors.FromValue(randomTokens(uint64(71+i), testB, testT, cfg.VocabSize))
			cot := wbtest.Normal(wbtest.RNG(uint64(72+i)), testB*testT*cfg.VocabSize, 1) // random cotangent
			var params []*model.Variable
			for v := range vars.IterVariables() {
				if v.Trainable {
					params = append(params, v)
				}
			}
			loss := func(scope *model.Scope, tokens *Node) *Node {
				logits := Logits(scope, cfg, tokens)
				return ReduceAllSum(Mul(logits, Reshape(ConstAsDType(tokens.Graph(), dtypes.Float64, cot),
					logits.Shape().Dimensions...)))
			}
			backend := wbtest.Backend(t)
			lossExec := model.MustNewExec(backend, vars, loss)
			gradExec := model.MustNewExec(backend, vars, func(scope *model.Scope, tokens *Node) []*Node {
				l := loss(scope, tokens)
				nodes := make([]*Node, len(params))
				for j, v := range params {
					nodes[j] = v.NodeValue(tokens.Graph())
				}
				return Gradient(l, nodes...)
			})
			grads := gradExec.MustExec(tokens)
			for j, v := range params {
				orig := p[v.Path()]
				f := func(x []float64) float64 {
					v.MustSetValue(wbtest.Tensor64(x, v.Shape().Dimensions...))
					return wbtest.Flat64(lossExec.MustExec(tokens)[0])[0]
				}
				wbtest.RequireGradient(t, v.Path(), f, orig, wbtest.Flat64(grads[j]), tolGrad)
				v.MustSetValue(wbtest.Tensor64(orig, v.Shape().Dimensions...))
			}
		})
	}
}

// lmHeadBatches returns the batch size of every LM-head product [B', T, V] in the graph of TokenLosses on a
// [B, testT+1] batch, with a hook attached when hooked.
func lmHeadBatches(t *testing.T, cfg Config, B int, hooked bool) []int {
	t.Helper()
	vars, _, _ := newTinyModel(t, cfg, 62)
	g := NewGraph(wbtest.Backend(t), "branches")
	if hooked {
		defer hook.Attach(g, func(_ string, x *Node) *Node { return x })()
	}
	batch := Parameter(g, "batch", tensors.FromValue(randomTokens(63, B, testT+1, cfg.VocabSize)).Shape())
	TokenLosses(vars.Scope("/"), cfg, batch)
	var out []int
	for _, n := range g.Nodes() {
		if n.Type() == NodeTypeDotGeneral && n.Rank() == 3 && n.Shape().Dim(2) == cfg.VocabSize {
			out = append(out, n.Shape().Dim(0))
		}
	}
	return out
}

// TokenLosses computes an even batch as two independent halves (the reference tests, at B = 2, check their values),
// an odd one whole, and a hooked graph whole, so that each probe is emitted once.
func TestTokenLosses_BranchesOverBatchHalves(t *testing.T) {
	cfg := tinyConfigs()["untied H=3"]
	require.Equal(t, []int{2, 2}, lmHeadBatches(t, cfg, 4, false), "even B: two halves")
	require.Equal(t, []int{3}, lmHeadBatches(t, cfg, 3, false), "odd B: whole")
	require.Equal(t, []int{4}, lmHeadBatches(t, cfg, 4, true), "hooked: whole")
}
