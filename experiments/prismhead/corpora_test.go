package prismhead

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/brown/browntest"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// TestRun_TinyProtocolTwoCorpora runs protocol v2's machinery at Tiny scale on the synthetic corpus and the Brown
// corpus (a fixture shaped like the installed one), with three replicate seeds so that the claims can be judged:
// each corpus has its own learning-rate choice on its validation split with the tuning seed, which no replicate
// uses; every model of a corpus trains on that corpus; the Brown evaluation reads the first eval.brown_docs
// documents of the test split (the odd eval.seed) and, with use_held, the held-out split (the even held_seed), two
// disjoint sets of documents; the Brown claim rows read the Brown comparison and the synthetic rows the synthetic
// one.
func TestRun_TinyProtocolTwoCorpora(t *testing.T) {
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	cfg := Tiny()
	cfg.Corpora = []string{lmdata.SourceSynthetic, lmdata.SourceBrown}
	cfg.Seed, cfg.Seeds = 1, []uint64{1, 2, 3}
	cfg.Eval.BrownDocs = 3
	out := t.TempDir()
	res, err := Runs.Run(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)

	corpora := res.Corpora()
	require.Len(t, corpora, 2)
	require.Len(t, res.Others, 1)
	for i, c := range corpora {
		src := cfg.Corpora[i]
		p := c.Protocol
		require.Equal(t, src, p.Source)
		require.Same(t, res.Corpus(src).Tuning, c.Tuning)
		require.Equal(t, cfg.Tune.Seed, c.Tuning.Seed)
		require.Equal(t, cfg.Tune.Seed, p.TuneSeed)
		for _, k := range []struct {
			lr   float64
			loss []float64
		}{{c.Tuning.DenseLR, c.Tuning.DenseLoss}, {c.Tuning.PrismLR, c.Tuning.PrismLoss}} {
			require.Equal(t, slices.Min(k.loss), k.loss[slices.Index(c.Tuning.LRs, k.lr)], "%s: lowest loss kept", src)
		}
		// The tuning trained its models on this corpus, with the tuning seed.
		tc := cfg.OnCorpus(src)
		tc.Seed, tc.Train.LR = cfg.Tune.Seed, c.Tuning.PrismLR
		tm, err := lm.Open(lm.RunDir(out, tc))
		require.NoError(t, err, src)
		require.Equal(t, c.Tuning.PrismLoss[slices.Index(c.Tuning.LRs, c.Tuning.PrismLR)], tm.Result.Val.Loss)

		require.Len(t, c.Replicates, 3)
		for k, rep := range c.Replicates {
			require.Equal(t, cfg.Seeds[k], rep.Seed, "replicates are seeds 1, 2, 3, never the tuning seed")
			require.NotEqual(t, cfg.Tune.Seed, rep.Seed)
			pm, err := lm.Open(rep.PrismDir)
			require.NoError(t, err)
			dm, err := lm.Open(rep.DenseDir)
			require.NoError(t, err)
			for _, m := range []*lm.Model{pm, dm} {
				require.Equal(t, src, m.Config.Data.Source)
				require.Equal(t, rep.Seed, m.Config.Seed)
			}
			require.Equal(t, c.Tuning.PrismLR, pm.Config.Train.LR)
			require.Equal(t, c.Tuning.DenseLR, dm.Config.Train.LR)
		}
		require.Equal(t, 3, c.Summary.Seeds)
	}

	// The synthetic corpus is evaluated on eval.docs fresh documents, the Brown corpus on eval.brown_docs documents
	// of its test split: the dense loss the study stored is the dense model's on exactly those documents.
	syn, br := res.Corpus(lmdata.SourceSynthetic), res.Corpus(lmdata.SourceBrown)
	require.Equal(t, cfg.Eval.Docs, syn.Protocol.EvalDocs)
	require.Equal(t, 3, br.Protocol.EvalDocs)
	dm, err := lm.Open(br.Replicates[0].DenseDir)
	require.NoError(t, err)
	lossOn := func(seed uint64) float64 {
		b, err := mprism.EvalBatches(dm, 3, seed)
		require.NoError(t, err)
		r, err := dm.Perplexity(b)
		require.NoError(t, err)
		return r.Loss
	}
	testLoss, heldLoss := lossOn(cfg.Eval.Seed), lossOn(cfg.Eval.HeldSeed)
	require.Equal(t, testLoss, br.Replicates[0].Quality.Dense.Loss, "Brown evaluation on the test split")
	require.NotEqual(t, testLoss, heldLoss)
	ids := func(seed uint64) []string {
		c, err := dm.FreshCorpus(3, seed)
		require.NoError(t, err)
		var out []string
		for _, text := range c.Texts {
			id := strings.TrimSuffix(text[strings.LastIndex(text, " ")+1:], ".") // "This is document <id>."
			out = append(out, id)
		}
		return out
	}
	for _, id := range ids(cfg.Eval.Seed) {
		require.Equal(t, brown.Test, brown.SplitOf(id), id)
		require.NotContains(t, ids(cfg.Eval.HeldSeed), id, "the held-back documents are others")
	}
	for _, id := range ids(cfg.Eval.HeldSeed) {
		require.Equal(t, brown.Heldout, brown.SplitOf(id), id)
	}

	claims := Claims(res)
	require.Len(t, claims, 12)
	for i, c := range claims {
		require.NoError(t, c.Validate())
		if i%6 < 4 { // the quality and coverage rows; a curvature row may lack κ for a seed
			require.Empty(t, c.Untestable, c.Claim)
			require.Equal(t, 3, c.Ours.Seeds, c.Claim)
		}
		s := syn.Summary
		if i >= 6 {
			require.Contains(t, c.Claim, "Brown")
			require.Contains(t, c.Method, "the Brown test split's first 3 documents (seed 3001)")
			s = br.Summary
		}
		if i%6 == 0 {
			require.InDelta(t, 100*s.RelLoss.Mean, c.Ours.Value, 1e-12, "row %d reads its corpus", i)
		}
	}
	require.NotEqual(t, claims[0].Ours.Value, claims[6].Ours.Value)

	// With use_held (after the settings are frozen) the Brown corpus is measured on its held-out split; the models
	// are the same (loaded, not retrained).
	cfg.Eval.UseHeld = true
	held, err := Runs.Run(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	hb := held.Corpus(lmdata.SourceBrown)
	require.True(t, hb.Protocol.HeldBack)
	require.Equal(t, cfg.Eval.HeldSeed, hb.Protocol.EvalSeed)
	require.Equal(t, br.Replicates[0].DenseDir, hb.Replicates[0].DenseDir)
	require.Equal(t, heldLoss, hb.Replicates[0].Quality.Dense.Loss, "the held-back set is the held-out split")
	require.Contains(t, Claims(held)[6].Method, "the Brown held-out split's first 3 documents (seed 3002")
}
