package classify

import (
	"math"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// referencePool is Pool written as loops.
func referencePool(h [][][]float64, lengths []int32, mode string) [][]float64 {
	out := make([][]float64, len(h))
	for b, row := range h {
		n := int(lengths[b])
		out[b] = make([]float64, len(row[0]))
		for d := range out[b] {
			if mode == PoolLast {
				out[b][d] = row[n-1][d]
				continue
			}
			for t := 0; t < n; t++ {
				out[b][d] += row[t][d] / float64(n)
			}
		}
	}
	return out
}

func TestPool_MatchesReference(t *testing.T) {
	rng := wbtest.RNG(3)
	const B, T, D = 3, 5, 4
	h := make([][][]float64, B)
	for b := range h {
		h[b] = make([][]float64, T)
		for t := range h[b] {
			h[b][t] = make([]float64, D)
			for d := range h[b][t] {
				h[b][t][d] = rng.NormFloat64()
			}
		}
	}
	lengths := []int32{1, 5, 3}
	backend := wbtest.Backend(t)
	for _, mode := range []string{PoolMean, PoolLast} {
		got := MustExecOnce(backend, func(h, l *Node) *Node { return Pool(h, l, mode) }, h, lengths)
		want := referencePool(h, lengths, mode)
		flat := tensors.MustCopyFlatData[float64](got)
		for b := range want {
			for d := range want[b] {
				w := want[b][d]
				require.InDelta(t, w, flat[b*D+d], 1e-12*(1+math.Abs(w)), "%s b=%d d=%d", mode, b, d)
			}
		}
	}
	require.Panics(t, func() {
		MustExecOnce(backend, func(h, l *Node) *Node { return Pool(h, l, "max") }, h, lengths)
	})
}

// tinyModel trains a small attention LM in memory (about a second): experiments/architecture's Tiny model of
// attention (the same lm.Config, so the same trained run).
func tinyModel(t *testing.T) *lm.Model {
	t.Helper()
	d, m := lm.Base(lm.SmallShape)
	lm.Shape{Docs: 120, Vocab: 320, Width: 24, MaxLen: 96}.Apply(&d, &m)
	m.VocabSize = d.Tokenizer.VocabSize
	m.DeltaNet.NumHeads = 2
	m.ProtoT.NumPrototypes = 8
	m.ProtoT.ChunkSize = 32
	m.FFNHidden = 64
	tc := fit.DefaultConfig()
	tc.Steps, tc.LR, tc.WarmupSteps = 30, 3e-3, 3
	tc.EvalEvery, tc.EvalBatches, tc.CheckpointEvery = 15, 2, 0
	mc := lm.Config{Seed: 1, Data: d, Model: m, Head: lm.HeadDense, Train: tc, EvalBatches: 4}.Resolved()
	model, err := lm.LoadOrTrain(mc, run.Progress(nil))
	require.NoError(t, err)
	return model
}

// tinyConfig is the fine-tuning of experiments/architecture's Tiny preset: the gender task, 150 documents, 60 steps.
func tinyConfig() Config {
	c := DefaultConfig()
	c.Tasks = []string{"gender"}
	c.Synthetic.NumDocs = 150
	c.Train.Steps = 60
	c.Train.WarmupSteps = 6
	return c
}

// TestFineTune_BeatsMajorityOnGender fine-tunes the Tiny LM on the gender of synthetic sentences, which pronouns
// and role nouns ("She", "his", "queen") reveal. Under the null hypothesis that the classifier is no better than
// the majority class (accuracy p0 = majority), the test accuracy has standard deviation √(p0(1−p0)/n); the test
// asks for 4 of them above p0, which chance alone essentially never gives (seeds are fixed, so this is also
// deterministic).
func TestFineTune_BeatsMajorityOnGender(t *testing.T) {
	m := tinyModel(t)
	cfg := tinyConfig()
	corpus, err := data.Synthetic(cfg.Synthetic)
	require.NoError(t, err)
	tasks, err := SentenceTasks(corpus, []string{"gender"}, cfg.TestFraction, 1)
	require.NoError(t, err)
	task := tasks[0]
	before := headlessWeights(t, m)
	res, err := FineTune(m, task, cfg, run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, len(task.Test), res.Test)
	_, p0 := task.Majority()
	n := float64(res.Test)
	require.Greater(t, res.Accuracy, p0+4*math.Sqrt(p0*(1-p0)/n), "accuracy %.3f, majority %.3f, n %d",
		res.Accuracy, p0, res.Test)
	require.Less(t, res.History.Steps[len(res.History.Steps)-1].Loss, res.History.Steps[0].Loss)
	require.Equal(t, before, headlessWeights(t, m), "FineTune trains a copy; the model is unchanged")

	// Head only: the LM's weights stay as they were; only the head moves. Fully fine-tuned, they change.
	cc := cfg
	cc.Train.Steps, cc.Train.WarmupSteps = 5, 1
	for _, headOnly := range []bool{true, false} {
		cc.HeadOnly = headOnly
		res, vars, err := fineTune(m, task, cc, run.NewOptions(run.Progress(nil)))
		require.NoError(t, err)
		require.Equal(t, headOnly, res.HeadOnly)
		tuned := &lm.Model{Store: vars}
		require.Equal(t, headOnly, slices.Equal(before, headlessWeights(t, tuned)), "head_only=%v", headOnly)
		w, err := vars.GetVariable("/" + HeadScope + "/" + HeadWeights).Value()
		require.NoError(t, err)
		require.NotZero(t, slices.Max(tensors.MustCopyFlatData[float32](w)), "the head is trained")
	}

	_, err = FineTune(m, &Task{Name: "empty", Classes: []string{"a", "b"}}, cc, run.Progress(nil))
	require.ErrorContains(t, err, "empty")
}

// headlessWeights returns a copy of the model's token embedding.
func headlessWeights(t *testing.T, m *lm.Model) []float32 {
	t.Helper()
	for v := range m.Store.IterVariables() {
		if v.Name() == "embeddings" {
			val, err := v.Value()
			require.NoError(t, err)
			return tensors.MustCopyFlatData[float32](val)
		}
	}
	t.Fatal("no embeddings variable")
	return nil
}
