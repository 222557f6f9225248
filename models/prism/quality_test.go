package prism

import (
	"sync"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

var qualityPair struct {
	once   sync.Once
	pm, dm *lm.Model
	err    error
}

// qualityTinyPair trains lm.PrismTiny and its dense baseline once (in memory) for the tests that need models.
func qualityTinyPair(t *testing.T) (pm, dm *lm.Model) {
	t.Helper()
	qualityPair.once.Do(func() {
		c := lm.PrismTiny()
		if qualityPair.pm, qualityPair.err = lm.LoadOrTrain(c, run.Progress(nil)); qualityPair.err == nil {
			qualityPair.dm, qualityPair.err = lm.LoadOrTrain(c.Dense(), run.Progress(nil))
		}
	})
	require.NoError(t, qualityPair.err)
	return qualityPair.pm, qualityPair.dm
}

// TestComputeQuality_TinyPair checks the quality report of a PRISM model against its dense baseline on shared
// evaluation batches: the relative perplexity and loss are the ratios of the two evaluations, both models see the
// same tokens, the parameter counts differ by the bank K·D, the coverage is over those tokens, the usage counts sum to
// the mean number of active prototypes times the tokens, and the models must come in the order PRISM, dense.
func TestComputeQuality_TinyPair(t *testing.T) {
	pm, dm := qualityTinyPair(t)
	batches, err := EvalBatches(dm, 40, 3001)
	require.NoError(t, err)
	q, err := ComputeQuality(pm, dm, batches)
	require.NoError(t, err)
	require.InDelta(t, q.Prism.Perplexity/q.Dense.Perplexity-1, q.RelPerplexity, 1e-12)
	require.InDelta(t, q.Prism.Loss/q.Dense.Loss-1, q.RelLoss, 1e-12)
	require.Equal(t, q.Prism.Tokens, q.Dense.Tokens, "both models see the same evaluation tokens")
	pc := pm.Config.Prism
	require.Equal(t, pc.NumPrototypes*pm.Config.Model.Width, q.PrismParams-q.DenseParams)
	require.Equal(t, q.Prism.Tokens, q.Coverage.Tokens)
	require.Len(t, q.Counts, pc.NumPrototypes)
	total := int64(0)
	for _, n := range q.Counts {
		total += n
	}
	require.InDelta(t, q.Usage.MeanActive*float64(q.Coverage.Tokens), float64(total), 1e-6)
	require.Equal(t, pm.Config.Train.LR, q.PrismLR)
	require.Contains(t, q.String(), "perplexity on")
	_, err = ComputeQuality(dm, pm, batches)
	require.ErrorContains(t, err, "in that order")
}

// TestEvalBatches_FreshDocuments checks the evaluation data of the prismhead study's Tiny preset (lm.PrismTiny, 40
// fresh documents of seed 3001, held-back seed 3002): full [B, T+1] batches, the same for every call, different from
// the validation split's batches and from those of the held-back seed, and the validation split itself with docs = 0.
func TestEvalBatches_FreshDocuments(t *testing.T) {
	cfg := lm.PrismTiny().Dense()
	m := &lm.Model{Config: cfg} // the data and the tokenizer are all EvalBatches reads
	const docs, seed, held = 40, 3001, 3002
	fresh, err := EvalBatches(m, docs, seed)
	require.NoError(t, err)
	require.NotEmpty(t, fresh)
	for _, b := range fresh {
		require.Equal(t, []int{cfg.Data.BatchSize, cfg.Data.SeqLen + 1}, b.Shape().Dimensions)
	}
	again, err := EvalBatches(m, docs, seed)
	require.NoError(t, err)
	require.Equal(t, qualityFlat(fresh), qualityFlat(again))
	other, err := EvalBatches(m, docs, held)
	require.NoError(t, err)
	require.NotEqual(t, qualityFlat(fresh[:1]), qualityFlat(other[:1]))
	vb, err := EvalBatches(m, 0, 0)
	require.NoError(t, err)
	prep, err := m.Data()
	require.NoError(t, err)
	want, err := prep.ValTensors(cfg.EvalBatches)
	require.NoError(t, err)
	require.Equal(t, qualityFlat(want), qualityFlat(vb))
	require.NotEqual(t, qualityFlat(vb[:1]), qualityFlat(fresh[:1]))
}

func qualityFlat(bs []*tensors.Tensor) []int32 {
	var out []int32
	for _, b := range bs {
		out = append(out, tensors.MustCopyFlatData[int32](b)...)
	}
	return out
}
