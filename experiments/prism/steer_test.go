package prism

import (
	"math"
	"sync"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/wbtest"
)

var tinySteerModel struct {
	once sync.Once
	m    *Model
	err  error
}

// steerTinyModel trains the Tiny PRISM model once for the steering and suppression tests (in memory).
func steerTinyModel(t *testing.T) *Model {
	t.Helper()
	tinySteerModel.once.Do(func() {
		tinySteerModel.m, tinySteerModel.err = LoadOrTrain(Tiny(), false, Progress(nil))
	})
	require.NoError(t, tinySteerModel.err)
	return tinySteerModel.m
}

// TestRunSteering_TinyEndToEnd runs the controller study on the Tiny preset and checks its bookkeeping: split sizes,
// accuracies are fractions, gains are named by prototype, non-zero and within the support, and a second call
// loads the model and the result from the cache.
func TestRunSteering_TinyEndToEnd(t *testing.T) {
	cfg := Tiny()
	cfg.Out = t.TempDir()
	sc := cfg.Steering
	res, err := RunSteering(cfg, Progress(nil))
	require.NoError(t, err)
	require.Len(t, res.Tasks, len(sc.Tasks))
	mean := 0.0
	for i, ts := range res.Tasks {
		require.Equal(t, sc.Tasks[i], ts.Task)
		require.Greater(t, ts.Calibration, 1)
		require.Greater(t, ts.HeldOut, 0)
		require.LessOrEqual(t, ts.Calibration+ts.HeldOut, sc.ItemsPerTask)
		require.Len(t, ts.BetaAccuracy, len(sc.Betas))
		require.Contains(t, sc.Betas, ts.Beta)
		for _, acc := range []float64{ts.Before, ts.After, ts.CalibBefore, ts.CalibAfter} {
			require.True(t, acc >= 0 && acc <= 1)
		}
		require.Equal(t, len(ts.Weights), ts.ActiveWeights)
		require.LessOrEqual(t, ts.ActiveWeights, ts.Support)
		require.LessOrEqual(t, ts.Support, cfg.Prism.NumPrototypes)
		for _, w := range ts.Weights {
			require.NotZero(t, w.Gain)
			require.True(t, w.Prototype >= 0 && w.Prototype < cfg.Prism.NumPrototypes)
		}
		mean += ts.Before / float64(len(res.Tasks))
	}
	require.InDelta(t, mean, res.MeanBefore, 1e-12)
	again, err := RunSteering(cfg, Progress(nil))
	require.NoError(t, err)
	require.Equal(t, res.Tasks, again.Tasks)
	require.Equal(t, res.Seconds, again.Seconds, "loaded from the cache, not recomputed")
}

// TestCtrlProblemOf_RowsAreTheModelsLogProbs checks the option scores at γ = 0 against the model's own next-token
// log-probabilities computed by PrismLogits on each option sequence separately.
func TestCtrlProblemOf_RowsAreTheModelsLogProbs(t *testing.T) {
	m := steerTinyModel(t)
	c, err := freshCorpus(m, 20, 99)
	require.NoError(t, err)
	tasks, err := BuildTasks(c, []string{TaskTopic}, 3, 3, 1)
	require.NoError(t, err)
	task := tasks[0]
	const ctxTokens = 10
	p, err := ctrlProblemOf(m, task, ctxTokens, 4)
	require.NoError(t, err)
	items := allItems(p)
	scores := p.eval(make([]float64, len(p.sig)), items, false).scores
	exec := context.MustNewExec(m.Backend, m.Ctx.Reuse(), func(ctx *context.Context, tokens *Node) *Node {
		return decoder.PrismLogits(ctx, m.Cfg, m.Prism, tokens)
	})
	V := m.Cfg.VocabSize
	tok := m.Data.Tokenizer
	for i, it := range task.Items {
		prefix := append([]int32{m.Data.EOS}, tok.Encode(it.Context)...)
		prefix = prefix[max(0, len(prefix)-ctxTokens):]
		for o, opt := range it.Options {
			ids := tok.Encode(opt)
			seq := append(append([]int32(nil), prefix...), ids...)
			logits := tensors.MustCopyFlatData[float32](exec.MustExec(tensors.FromFlatDataAndDimensions(seq, 1,
				len(seq)))[0])
			want := 0.0
			for j, y := range ids {
				row := logits[(len(prefix)-1+j)*V : (len(prefix)+j)*V]
				mx := math.Inf(-1)
				for _, x := range row {
					mx = math.Max(mx, float64(x))
				}
				z := 0.0
				for _, x := range row {
					z += math.Exp(float64(x) - mx)
				}
				want += float64(row[y]) - mx - math.Log(z)
			}
			require.InDelta(t, want, scores[i][o], 1e-4*(1+math.Abs(want)), "item %d option %q", i, opt)
		}
	}
}

// TestSuppressedStep_MatchesFullForward decodes a random float64 model token by token with SuppressedStep and
// compares every step's logits with SuppressedLogits of the full forward pass, in both modes.
func TestSuppressedStep_MatchesFullForward(t *testing.T) {
	backend := wbtest.Backend(t)
	cfg := decoder.DefaultConfig()
	cfg.VocabSize, cfg.Width, cfg.NumLayers, cfg.MaxLen, cfg.DType = 11, 8, 2, 16, "float64"
	cfg.Attention.NumHeads = 2
	pc := prism.DefaultConfig()
	pc.NumPrototypes, pc.TopK = 5, 2
	pc.InitStd = 1
	ctx := context.New()
	ctx.SetRNGStateFromSeed(3)
	const B, T = 2, 6
	tokens := tensors.FromFlatDataAndDimensions([]int32{1, 4, 2, 9, 0, 7, 3, 3, 10, 5, 8, 6}, B, T)
	omega := []float64{0, 1, 0, 0, 1}
	for _, mode := range []string{SuppressZero, SuppressMask} {
		full := context.MustNewExec(backend, ctx.Checked(false), func(ctx *context.Context, tok, om *Node) *Node {
			return SuppressedLogits(decoder.PrismHead(ctx, cfg, pc, tok), om, mode)
		})
		want := tensors.MustCopyFlatData[float64](full.MustExec(tokens, wbtest.Tensor64(omega, 5))[0])
		stepFn := SuppressedStep(cfg, pc, omega, mode)
		step := context.MustNewExec(backend, ctx.Reuse(), func(ctx *context.Context, in []*Node) []*Node {
			logits, state := stepFn(ctx, in[0], in[1], in[2:])
			return append([]*Node{logits}, state...)
		})
		state := decoder.NewState(cfg, B, T)
		flat := tensors.MustCopyFlatData[int32](tokens)
		V := cfg.VocabSize
		for pos := range T {
			args := []any{tensors.FromFlatDataAndDimensions([]int32{flat[pos], flat[T+pos]}, B, 1), int32(pos)}
			for _, s := range state {
				args = append(args, s)
			}
			out := step.MustExec(args...)
			got := tensors.MustCopyFlatData[float64](out[0])
			for b := range B {
				w := want[(b*T+pos)*V : (b*T+pos+1)*V]
				wbtest.RequireClose(t, mode, w, got[b*V:(b+1)*V], 1e-10)
			}
			state = out[1:]
		}
	}
}

// TestSuppress_TinyEndToEnd runs the suppression study on the Tiny model with an explicit Ω and with keyword
// selection, and checks the invariants that hold at any scale: the "none" row is the reference (reduction 0,
// perplexity change 0), rates are fractions, the judge perplexity is finite, and an explicit Ω is used as given.
func TestSuppress_TinyEndToEnd(t *testing.T) {
	m := steerTinyModel(t)
	sc := TinySuppress()
	sc.Rule = RuleContexts
	sc.Prototypes = []int{3, 1, 3}
	res, err := Suppress(m, sc, Progress(nil))
	require.NoError(t, err)
	require.Equal(t, []int{1, 3}, res.Omega)
	require.Len(t, res.Modes, len(SuppressModes))
	for i, md := range res.Modes {
		require.Equal(t, SuppressModes[i], md.Mode)
		require.True(t, md.ConceptRate >= 0 && md.ConceptRate <= 1)
		require.True(t, md.AnyRate >= 0 && md.AnyRate <= 1)
		require.Greater(t, md.Words, 0)
		require.Greater(t, md.JudgePerplexity, 1.0)
		require.Greater(t, md.OtherPerplexity, 1.0)
		require.Len(t, md.Examples, sc.Examples)
	}
	none := res.Mode(SuppressNone)
	require.Zero(t, none.Reduction)
	require.Zero(t, none.OtherChange)
	require.Greater(t, res.OtherTokens, 0)
	require.True(t, res.OtherActive >= 0 && res.OtherActive <= 1)
	// The reference perplexity is the model's own (PrismLogits) on the same text.
	other, _, err := splitByKeywords(m, res.Keywords, sc.EvalSequences)
	require.NoError(t, err)
	var rows []*tensors.Tensor
	for _, s := range other {
		rows = append(rows, tensors.FromFlatDataAndDimensions(append([]int32(nil), s...), 1, len(s)))
	}
	pr, err := m.Perplexity(rows)
	require.NoError(t, err)
	require.InDelta(t, pr.Perplexity, none.OtherPerplexity, 1e-4*pr.Perplexity)
	// The Ω-activity fraction counts the tokens whose selection holds prototype 1 or 3 with a > 0.
	st, err := m.HeadStats(rows)
	require.NoError(t, err)
	active := 0
	for n := range st.N {
		for j := range st.TopK {
			if i := st.Indices[n*st.TopK+j]; (i == 1 || i == 3) && st.Acts[n*st.TopK+j] > 0 {
				active++
				break
			}
		}
	}
	require.Equal(t, st.N, res.OtherTokens)
	require.InDelta(t, float64(active)/float64(st.N), res.OtherActive, 1e-12)
	require.Greater(t, active, 0, "Ω = {1, 3} is used somewhere")

	sc.Prototypes = nil
	sel, err := Suppress(m, sc, Progress(nil))
	require.NoError(t, err)
	require.True(t, sel.BaseHitRate > 0 && sel.BaseHitRate < 1, "food words occur in some contexts only")
	require.Len(t, sel.Omega, len(sel.Selected))
	for _, s := range sel.Selected {
		require.GreaterOrEqual(t, s.HitRate, sc.MinHitRate)
		require.GreaterOrEqual(t, s.Contexts, sc.MinContexts)
		require.NotEmpty(t, s.Example)
		require.Len(t, s.Promoted, sc.SignatureTokens)
	}

	// Rule "signature" with a zero threshold selects every prototype, with its card's promoted tokens.
	sc.Rule, sc.MinHitRate = RuleSignature, 0
	sig, err := Suppress(m, sc, Progress(nil))
	require.NoError(t, err)
	require.Len(t, sig.Omega, m.Prism.NumPrototypes)
	for i, s := range sig.Selected {
		require.Equal(t, i, s.Prototype)
		require.True(t, s.HitRate >= 0 && s.HitRate <= 1)
		require.Len(t, s.Promoted, sc.SignatureTokens)
	}
}

// TestConfig_SuppressionConfig: the suppression model's non-zero fields replace the study's, zero ones keep them.
func TestConfig_SuppressionConfig(t *testing.T) {
	cfg := Tiny()
	require.Equal(t, cfg, cfg.SuppressionConfig(), "Tiny suppresses on the study's own model")
	cfg.Steering.Suppress.Model = SuppressModel{Steps: 90, NumPrototypes: 32, TopK: 6}
	sc := cfg.SuppressionConfig()
	require.Equal(t, 90, sc.Train.Steps)
	require.Equal(t, 32, sc.Prism.NumPrototypes)
	require.Equal(t, 6, sc.Prism.TopK)
	require.Equal(t, cfg.Train.LR, sc.Train.LR)
	require.Equal(t, 40, cfg.Train.Steps, "the study's config is unchanged")
	require.Equal(t, cfg.SeedBatches, sc.SeedBatches)
	sc.Steering.Suppress.Model.LR = 0.5
	sc.Steering.Suppress.Model.SeedBatches = 7
	require.Equal(t, 0.5, sc.SuppressionConfig().Train.LR)
	require.Equal(t, 7, sc.SuppressionConfig().SeedBatches)
	cfg.Steering.Suppress.Model.LR = -1
	require.ErrorContains(t, cfg.Validate(), "steering.suppress: model=")
	cfg.Steering.Suppress.Model.LR = 0
	cfg.Steering.Suppress.Model.SeedBatches = -1
	require.ErrorContains(t, cfg.Validate(), "steering.suppress: model=")
}
