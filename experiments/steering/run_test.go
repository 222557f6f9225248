package steering

import (
	"math"
	"path/filepath"
	"sync"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

var tinyModel struct {
	once sync.Once
	m    *lm.Model
	err  error
}

// steerTinyModel trains the Tiny PRISM model once (in memory) for the tests that need a model.
func steerTinyModel(t *testing.T) *lm.Model {
	t.Helper()
	tinyModel.once.Do(func() {
		tinyModel.m, tinyModel.err = lm.LoadOrTrain(Tiny().Config, run.Progress(nil))
	})
	require.NoError(t, tinyModel.err)
	return tinyModel.m
}

// TestLoadOrRun_TinyEndToEnd runs the controller study on the Tiny preset and checks its bookkeeping: split sizes,
// accuracies are fractions, gains are named by prototype, non-zero and within the support, and a second call
// loads the stored result.
func TestLoadOrRun_TinyEndToEnd(t *testing.T) {
	cfg := Tiny()
	out := t.TempDir()
	sc := cfg.Steering
	res, err := LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, cfg.Seed, res.Provenance.Seed)
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
	require.Contains(t, res.String(), "topic")
	stored, err := filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 1)
	again, err := LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, res.Tasks, again.Tasks)
	require.Equal(t, res.Seconds, again.Seconds, "loaded, not recomputed")
}

// TestConfig_PresetsAndErrors: every preset validates; bad values name their key.
func TestConfig_PresetsAndErrors(t *testing.T) {
	for _, name := range []string{"tiny", "small", "paper"} {
		cfg, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, cfg.Validate(), name)
	}
	for _, tc := range []struct{ set, mention string }{
		{"steering.tasks=[\"colour\"]", `steering: tasks[0]="colour"`},
		{"steering.items_per_task=3", "items_per_task=3"},
		{"steering.betas=[-1]", "betas[0]"},
		{"head=dense", `head="dense"`},
	} {
		cfg := Tiny()
		require.NoError(t, run.Override(&cfg, tc.set))
		require.ErrorContains(t, cfg.Validate(), tc.mention, tc.set)
	}
}

// TestCtrlProblemOf_RowsAreTheModelsLogProbs checks the option scores at γ = 0 against the model's own next-token
// log-probabilities computed by PrismLogits on each option sequence separately.
func TestCtrlProblemOf_RowsAreTheModelsLogProbs(t *testing.T) {
	m := steerTinyModel(t)
	c, err := m.FreshCorpus(20, 99)
	require.NoError(t, err)
	tasks, err := BuildTasks(c, []string{TaskTopic}, 3, 3, 1)
	require.NoError(t, err)
	task := tasks[0]
	const ctxTokens = 10
	p, err := ctrlProblemOf(m, task, ctxTokens, 4)
	require.NoError(t, err)
	items := allItems(p)
	scores := p.eval(make([]float64, len(p.sig)), items, false).scores
	mc, pc := m.Config.Model, m.Config.Prism.Config
	exec := context.MustNewExec(m.Backend, m.Ctx.Reuse(), func(ctx *context.Context, tokens *Node) *Node {
		return decoder.PrismLogits(ctx, mc, pc, tokens)
	})
	V := mc.VocabSize
	d, err := m.Data()
	require.NoError(t, err)
	tok := d.Tokenizer
	for i, it := range task.Items {
		prefix := append([]int32{d.EOS}, tok.Encode(it.Context)...)
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

// TestController_MinusOneGainIsZeroSuppression: the controller's logits (S1) with γ_i = −1 on Ω and 0 elsewhere are
// the "zero"-mode suppressed logits of layers/prism, since the slice of i becomes (1 + γ_i)·a·W p_i = 0. Awkward
// sizes: B = 2, T = 3, D = 4, K = 5, k = 2, V = 7.
func TestController_MinusOneGainIsZeroSuppression(t *testing.T) {
	const B, T, D, K, k, V = 2, 3, 4, 5, 2, 7
	rng := wbtest.RNG(3)
	z, bank, w := wbtest.Normal(rng, B*T*D, 1), wbtest.Normal(rng, K*D, 1), wbtest.Normal(rng, V*D, 1)
	omega := []float64{0, 1, 0, 1, 0}
	pc := prism.DefaultConfig()
	pc.NumPrototypes, pc.TopK = K, k
	out := wbtest.ExecFlat(t, func(in []*Node) []*Node {
		d := prism.Decompose(in[0], in[1], in[2], pc)
		return []*Node{d.Logits, ConvertDType(d.Indices, in[0].DType()), d.Activations,
			prism.Signatures(d.Bank, d.Unembed), prism.SuppressedLogits(d, in[3], prism.SuppressZero)}
	}, wbtest.Tensor64(z, B, T, D), wbtest.Tensor64(bank, K, D), wbtest.Tensor64(w, V, D), wbtest.Tensor64(omega, K))
	logits, idx, acts, sig, want := out[0], out[1], out[2], out[3], out[4]
	p := &ctrlProblem{}
	for i := range K {
		p.sig = append(p.sig, sig[i*V:(i+1)*V])
	}
	gamma := make([]float64, K)
	for i, o := range omega {
		gamma[i] = -o
	}
	var got []float64
	for n := range B * T {
		row := ctrlRow{logits: logits[n*V : (n+1)*V]}
		for j := range k {
			row.protos = append(row.protos, int(idx[n*k+j]))
			row.acts = append(row.acts, acts[n*k+j])
		}
		p.rows = append(p.rows, row)
		got = append(got, p.shifted(n, gamma, nil)...)
	}
	wbtest.RequireClose(t, "γ = −1 on Ω", want, got, 1e-10)
}
