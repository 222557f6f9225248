package steer

import (
	"math"
	"sync"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/layers/sae"
	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/lm"
	control "github.com/protolab/protolab/theory/steer"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// tinySAE is the SAE of experiments/steering's Tiny preset for a bank of K prototypes with k active (F = K, top-k
// with k): 100 steps of 64 rows at lr 3e−3 without weight decay.
func tinySAE(K, k int) dictionary.Config {
	m := sae.DefaultConfig()
	m.Kind, m.Features, m.K = sae.KindTopK, K, k
	t := fit.DefaultConfig()
	t.Steps, t.LR, t.WarmupSteps, t.WeightDecay, t.ClipNorm = 100, 3e-3, 20, 0, 0
	t.EvalEvery, t.EvalBatches, t.CheckpointEvery = 0, 1, 0
	return dictionary.Config{Model: m, Train: t, BatchSize: 64}
}

func allItems(p *control.Problem) []int {
	out := make([]int, len(p.Items))
	for i := range out {
		out[i] = i
	}
	return out
}

var tinyModel struct {
	once sync.Once
	m    *lm.Model
	err  error
}

// tinyPrism trains the Tiny PRISM model once (in memory) for the tests that need a model.
func tinyPrism(t *testing.T) *lm.Model {
	t.Helper()
	tinyModel.once.Do(func() {
		tinyModel.m, tinyModel.err = lm.LoadOrTrain(lm.PrismTiny(), run.Progress(nil))
	})
	require.NoError(t, tinyModel.err)
	return tinyModel.m
}

// TestProblemOf_RowsAreTheModelsLogProbs checks the option scores at γ = 0 against the model's own next-token
// log-probabilities computed by PrismLogits on each option sequence separately.
func TestProblemOf_RowsAreTheModelsLogProbs(t *testing.T) {
	m := tinyPrism(t)
	c, err := m.FreshCorpus(20, 99)
	require.NoError(t, err)
	tasks, err := BuildTasks(c, []string{TaskTopic}, 3, 3, 1)
	require.NoError(t, err)
	task := tasks[0]
	const ctxTokens = 10
	p, err := problemOf(m, task, ctxTokens, 4)
	require.NoError(t, err)
	items := allItems(p)
	scores := p.Eval(make([]float64, len(p.Signatures)), items, false).Scores
	mc, pc := m.Config.Model, m.Config.Prism.Config
	exec := model.MustNewExec(m.Backend, m.Store, func(scope *model.Scope, tokens *Node) *Node {
		return decoder.PrismLogits(scope, mc, pc, tokens)
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

var tinyDense struct {
	once sync.Once
	m    *lm.Model
	err  error
}

// tinyDenseModel trains the Tiny PRISM model's dense baseline once (in memory).
func tinyDenseModel(t *testing.T) *lm.Model {
	t.Helper()
	tinyDense.once.Do(func() {
		tinyDense.m, tinyDense.err = lm.LoadOrTrain(lm.PrismTiny().Dense(), run.Progress(nil))
	})
	require.NoError(t, tinyDense.err)
	return tinyDense.m
}

// TestCollect_DenseRowsAreTheModelsLogProbs checks the dense model's rows (logits W z computed in Go from the
// hidden state) through the option scores at zero gain against the log-probabilities of the graph's decoder.Logits
// on each option sequence.
func TestCollect_DenseRowsAreTheModelsLogProbs(t *testing.T) {
	m := tinyDenseModel(t)
	c, err := m.FreshCorpus(20, 99)
	require.NoError(t, err)
	tasks, err := BuildTasks(c, []string{TaskNumber}, 3, 2, 1)
	require.NoError(t, err)
	task := tasks[0]
	const ctxTokens = 10
	rows, err := Collect(m, task, ctxTokens, 4)
	require.NoError(t, err)
	require.Nil(t, rows.Bank, "a dense model has no prototypes")
	mc := m.Config.Model
	p := rows.BiasProblem(mc.VocabSize)
	scores := p.Eval(make([]float64, p.Units()), allItems(p), false).Scores
	exec := model.MustNewExec(m.Backend, m.Store, func(scope *model.Scope, tokens *Node) *Node {
		return decoder.Logits(scope, mc, tokens)
	})
	d, err := m.Data()
	require.NoError(t, err)
	V := mc.VocabSize
	for i, it := range task.Items {
		prefix := append([]int32{d.EOS}, d.Tokenizer.Encode(it.Context)...)
		prefix = prefix[max(0, len(prefix)-ctxTokens):]
		for o, opt := range it.Options {
			ids := d.Tokenizer.Encode(opt)
			seq := append(append([]int32(nil), prefix...), ids...)
			logits := tensors.MustCopyFlatData[float32](exec.MustExec(tensors.FromFlatDataAndDimensions(seq, 1,
				len(seq)))[0])
			want := 0.0
			for j, y := range ids {
				row := logits[(len(prefix)-1+j)*V : (len(prefix)+j)*V]
				z := 0.0
				for _, x := range row {
					z += math.Exp(float64(x))
				}
				want += float64(row[y]) - math.Log(z)
			}
			require.InDelta(t, want, scores[i][o], 1e-4*(1+math.Abs(want)), "item %d option %q", i, opt)
		}
	}
}

// TestFeatureProblem_MinusOneRemovesTheFeatureSlices: the SAE controller's logits with γ_j = −1 for every feature
// are W(z − Σ_j f_j d_j), the logits of what the SAE's active features do not explain; checked row by row against
// that product written out from the hidden states, the codes, the directions and the head.
func TestFeatureProblem_MinusOneRemovesTheFeatureSlices(t *testing.T) {
	m := tinyDenseModel(t)
	cfg := lm.PrismTiny()
	dict, _, rowsN, err := TrainDictionary(m, tinySAE(cfg.Prism.NumPrototypes, cfg.Prism.TopK), 8, "steering/sae")
	require.NoError(t, err)
	require.Equal(t, cfg.Prism.NumPrototypes, dict.F)
	require.Positive(t, rowsN)
	c, err := m.FreshCorpus(20, 99)
	require.NoError(t, err)
	tasks, err := BuildTasks(c, []string{TaskTopic}, 3, 3, 1)
	require.NoError(t, err)
	rows, err := Collect(m, tasks[0], 10, 4)
	require.NoError(t, err)
	w, err := m.Unembed()
	require.NoError(t, err)
	V, D := cfg.Model.VocabSize, cfg.Model.Width
	p, _, err := rows.FeatureProblem(dict, w, V)
	require.NoError(t, err)
	dirs, err := dict.Directions()
	require.NoError(t, err)
	minus := make([]float64, p.Units())
	for i := range minus {
		minus[i] = -1
	}
	// The codes of all rows in one batch, as FeatureProblem encodes them: the pure-Go backend's float32 products may
	// round differently for another batch shape, and the identity checked here is the shift, not the encoder.
	var all []float64
	for _, z := range rows.Hidden {
		all = append(all, z...)
	}
	codes, _, err := dict.Encode(all, len(rows.Hidden))
	require.NoError(t, err)
	F := dict.F
	for r, z := range rows.Hidden {
		rest := append([]float64(nil), z...)
		for j, f := range codes[r*F : (r+1)*F] {
			for i := range D {
				rest[i] -= f * dirs[j*D+i]
			}
		}
		want := make([]float64, V)
		for v := range V {
			for i := range D {
				want[v] += w[v*D+i] * rest[i]
			}
		}
		wbtest.RequireClose(t, "γ = −1 on every feature", want, p.Shifted(r, minus, nil), 1e-9)
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
	p := &control.Problem{}
	for i := range K {
		p.Signatures = append(p.Signatures, sig[i*V:(i+1)*V])
	}
	gamma := make([]float64, K)
	for i, o := range omega {
		gamma[i] = -o
	}
	var got []float64
	for n := range B * T {
		row := control.Row{Logits: logits[n*V : (n+1)*V]}
		for j := range k {
			row.Units = append(row.Units, int(idx[n*k+j]))
			row.Acts = append(row.Acts, acts[n*k+j])
		}
		p.Rows = append(p.Rows, row)
		got = append(got, p.Shifted(n, gamma, nil)...)
	}
	wbtest.RequireClose(t, "γ = −1 on Ω", want, got, 1e-10)
}
