package prismhead

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// TestLoadOrRun_TinyStudy runs the whole Tiny study into a folder and checks the protocol's structure: the tuning
// grid and the rates kept, one replicate per seed with its own models, the evaluation on fresh documents shared by a
// seed's models, the shape and ranges of every part, the summary over seeds, the claims (untestable with two seeds),
// then that a second call — and Notebook at the Tiny preset — loads the stored result.
func TestLoadOrRun_TinyStudy(t *testing.T) {
	cfg := Tiny()
	out := t.TempDir()
	res, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	seeds := cfg.ReplicateSeeds()
	require.Equal(t, seeds[0], res.Provenance.Seed)
	require.Equal(t, seeds, res.Protocol.Seeds)

	tu := res.Tuning
	require.NotNil(t, tu)
	require.Equal(t, cfg.Tune.LRs, tu.LRs)
	require.Len(t, tu.DenseLoss, len(cfg.Tune.LRs))
	require.Len(t, tu.PrismLoss, len(cfg.Tune.LRs))
	for _, k := range []struct {
		lr   float64
		loss []float64
	}{{tu.DenseLR, tu.DenseLoss}, {tu.PrismLR, tu.PrismLoss}} {
		i := slices.Index(tu.LRs, k.lr)
		require.GreaterOrEqual(t, i, 0, "the rate kept is on the grid")
		require.Equal(t, slices.Min(k.loss), k.loss[i], "the rate kept has the lowest validation loss")
	}

	require.Len(t, res.Replicates, len(seeds))
	dirs := map[string]bool{}
	for i, rep := range res.Replicates {
		base := cfg.Config
		base.Seed = seeds[i]
		base.Train.LR = tu.PrismLR
		dense := base.Dense()
		dense.Train.LR = tu.DenseLR
		require.Equal(t, seeds[i], rep.Seed)
		require.Equal(t, lm.RunDir(out, base), rep.PrismDir)
		require.Equal(t, lm.RunDir(out, dense), rep.DenseDir)
		require.False(t, dirs[rep.PrismDir] || dirs[rep.DenseDir], "each seed trains its own models")
		dirs[rep.PrismDir], dirs[rep.DenseDir] = true, true

		q := rep.Quality
		require.Equal(t, tu.PrismLR, q.PrismLR)
		require.Equal(t, tu.DenseLR, q.DenseLR)
		require.InDelta(t, q.Prism.Perplexity/q.Dense.Perplexity-1, q.RelPerplexity, 1e-12)
		require.InDelta(t, q.Prism.Loss/q.Dense.Loss-1, q.RelLoss, 1e-12)
		require.Equal(t, q.Prism.Tokens, q.Dense.Tokens, "both models see the same evaluation tokens")
		require.Equal(t, cfg.Prism.NumPrototypes*cfg.Model.Width, q.PrismParams-q.DenseParams)
		c := q.Coverage
		require.Equal(t, q.Prism.Tokens, c.Tokens)
		for _, x := range []float64{c.R1Bar, c.R2, c.R1Frac, c.R2Frac} {
			require.True(t, x >= -1 && x <= 1, "coverage %v", c)
		}
		require.Len(t, q.Counts, cfg.Prism.NumPrototypes)
		total := int64(0)
		for _, n := range q.Counts {
			total += n
		}
		require.InDelta(t, q.Usage.MeanActive*float64(c.Tokens), float64(total), 1e-6)

		cv := rep.Curvature
		require.Len(t, cv.Prototypes, cfg.Curvature.Prototypes)
		require.Equal(t, cfg.Curvature.Batches*cfg.Data.BatchSize*cfg.Data.SeqLen, cv.Tokens)
		require.Less(t, cv.Asymmetry, 1e-8)
		require.Len(t, cv.Approx, 5)
		require.Len(t, rep.Sweep, len(cfg.Curvature.Sweep))
		for j, p := range rep.Sweep {
			require.Equal(t, cfg.Curvature.Sweep[j], p.Weight)
			require.Equal(t, p.Weight, p.Curvature.R1Weight)
			require.Equal(t, p.Weight, p.Curvature.R2Weight)
			require.Less(t, p.Curvature.ClusterBlocksError, 1e-4, "closed-form clustering blocks vs exact")
		}
		require.Equal(t, rep.Sweep[0].Curvature.Damping, rep.FixedDamping, "the smallest weight's damping")
		for _, name := range []string{"quality-*.json", "curvature-*.json"} {
			m, err := filepath.Glob(filepath.Join(rep.PrismDir, name))
			require.NoError(t, err)
			require.Len(t, m, 1, name)
		}
	}

	s := res.Summary
	require.Equal(t, Summarize(res.Replicates), s)
	require.Equal(t, len(seeds), s.Seeds)
	require.Len(t, s.Sweep, len(cfg.Curvature.Sweep))
	require.Equal(t, len(seeds), s.OffDiagonalTrend.N)
	require.Equal(t, cfg.Eval.Docs, res.Protocol.EvalDocs)
	require.Equal(t, cfg.Eval.Seed, res.Protocol.EvalSeed)
	require.Contains(t, res.String(), "clustering-weight sweep")
	require.Equal(t, lmdata.SourceSynthetic, res.Protocol.Source)
	require.Empty(t, res.Others, "Tiny runs on data.source alone")
	for i, c := range Claims(res) {
		require.NoError(t, c.Validate())
		if i < 6 {
			require.Contains(t, c.Untestable, "≥ 3", "Tiny has two seeds")
		} else {
			require.Contains(t, c.Untestable, "no run on the brown corpus")
		}
	}

	stored, err := filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 1)
	again, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.True(t, res.Provenance.Start.Equal(again.Provenance.Start), "loaded, not recomputed")
	require.Equal(t, res.Summary, again.Summary)
	t.Setenv(run.PresetEnv, "tiny")
	nb, err := Runs.Notebook(run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.True(t, res.Provenance.Start.Equal(nb.Provenance.Start), "Notebook at tiny loads the Tiny result")
}

// TestConfig_PresetsAndErrors: every preset validates, Quick too, the model keys sit at the top level, and bad
// values name their key.
func TestConfig_PresetsAndErrors(t *testing.T) {
	for _, name := range []string{"tiny", "small", "paper"} {
		cfg, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, cfg.Validate(), name)
	}
	require.NoError(t, Quick().Validate())
	require.Equal(t, []uint64{Quick().Seed}, Quick().ReplicateSeeds())
	require.GreaterOrEqual(t, len(Small().Seeds), minClaimSeeds, "the protocol preset can test the claims")
	require.Contains(t, run.Keys(Tiny()), "prism.top_k")
	require.Contains(t, run.Keys(Tiny()), "curvature.prototypes")
	require.Contains(t, run.Keys(Tiny()), "eval.held_seed")
	for _, tc := range []struct{ set, mention string }{
		{"curvature.prototypes=17", "curvature: prototypes=17"},
		{"curvature.sweep=[0.1,-1]", "sweep[1]"},
		{"curvature.sweep=[0.1,0.1]", "repeats"},
		{"head=dense", `head="dense"`},
		{"prism.top_k=0", "prism"},
		{"seed=5", "seeds[0]=1 differs from seed=5"},
		{"seeds=[1,1]", "seeds[1]=1 repeats"},
		{"tune.seed=2", "tune: seed=2 is also a replicate seed"},
		{"tune.lrs=[0.01,0]", "tune: lrs[1]=0"},
		{"eval.seed=1", "eval: seed=1"},
		{"eval.held_seed=3001", "eval: held_seed=3001 equals seed"},
		{"eval.docs=-1", "eval: docs=-1"},
		{"eval.docs=0;eval.use_held=true", "use_held"},
		{"data.source=wordnet", `eval: docs=40 needs evaluation documents`},
		{`corpora=["synthetic","wordnet"]`, `the corpus "wordnet" has none`},
		{`corpora=["brown","synthetic"]`, `corpora[0]="brown" differs from data.source="synthetic"`},
		{`corpora=["synthetic","synthetic"]`, `corpora[1]="synthetic" repeats`},
		{`corpora=["synthetic",""]`, `corpora[1]=""`},
		{`corpora=["synthetic","brown"]`, "eval: brown_docs=0"},
		{`corpora=["synthetic","brown"];eval.brown_docs=3;eval.seed=3000`, "eval: seed=3000 is even"},
		{`corpora=["synthetic","brown"];eval.brown_docs=3;eval.held_seed=3003`, "eval: held_seed=3003 is odd"},
		{`corpora=["synthetic","brown"];eval.brown_docs=-1`, "eval: brown_docs=-1"},
	} {
		cfg := Tiny()
		require.NoError(t, run.Override(&cfg, tc.set))
		require.ErrorContains(t, cfg.Validate(), tc.mention, tc.set)
	}
	cfg := Tiny()
	require.NoError(t, run.Override(&cfg, "data.source=wordnet;eval.docs=0"))
	require.NotContains(t, errString(cfg.Validate()), "eval", "the validation split needs no synthetic corpus")
	cfg = Tiny()
	require.NoError(t, run.Override(&cfg, `corpora=["synthetic","brown"];eval.brown_docs=3`))
	require.NoError(t, cfg.Validate())
}

// TestPresets_ProtocolV2: Small is protocol v2 (docs/PROTOCOL.md, "prismhead"): lm.PrismSmallV2's models on the
// synthetic and the Brown corpus, a tuning seed that is no replicate, the Brown test split as the primary
// evaluation and the held-out split held back (lm.EvalSplitOf), a Brown document count the test split holds, and
// one vocabulary for both corpora; Quick and Tiny keep protocol v1's models on data.source alone.
func TestPresets_ProtocolV2(t *testing.T) {
	s := Small()
	want := lm.PrismSmallV2()
	want.Seed = 2
	require.Equal(t, want, s.Config)
	require.Equal(t, []string{lmdata.SourceSynthetic, lmdata.SourceBrown}, s.Corpora)
	require.Equal(t, []string{lmdata.SourceSynthetic, lmdata.SourceBrown}, s.Sources())
	require.GreaterOrEqual(t, len(s.Seeds), minClaimSeeds)
	require.NotContains(t, s.Seeds, s.Tune.Seed)
	require.Equal(t, brown.Test, lm.EvalSplitOf(s.Eval.Seed))
	require.Equal(t, brown.Heldout, lm.EvalSplitOf(s.Eval.HeldSeed))
	require.Equal(t, 28, s.Eval.DocsFor(lmdata.SourceBrown), "the test split's size: every document, no cap")
	require.Equal(t, s.Eval.Docs, s.Eval.DocsFor(lmdata.SourceSynthetic))
	require.Equal(t, 1024, s.Data.Tokenizer.VocabSize)
	require.Equal(t, 8*s.Model.Width, s.Prism.NumPrototypes)
	require.Contains(t, run.SearchedLines(s, nil)[1], "data.source is replaced by each of corpora")
	require.Equal(t, lm.PrismSmall(), Quick().Config)
	require.Empty(t, Quick().Corpora)
	require.Empty(t, Tiny().Corpora)
	require.Empty(t, Paper().Corpora)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestBestRate: searchRate keeps the rate of the lowest loss, ties go to the earlier rate, a run that diverged
// (a fit.DivergedError or a loss that is not finite; −1 in the record) never wins, and no finite run is an error.
func TestBestRate(t *testing.T) {
	losses := func(ls ...float64) func(float64) (float64, error) {
		return func(lr float64) (float64, error) {
			l := ls[int(lr)-1]
			if l < 0 {
				return 0, &fit.DivergedError{Step: 3, Loss: math.NaN()}
			}
			return l, nil
		}
	}
	lr, rec, err := searchRate([]float64{1, 2, 3}, losses(0.5, 0.4, 0.4))
	require.NoError(t, err)
	require.Equal(t, 2.0, lr)
	require.Equal(t, []float64{0.5, 0.4, 0.4}, rec)
	lr, rec, err = searchRate([]float64{1, 2, 3}, func(lr float64) (float64, error) {
		return []float64{math.Inf(1), 3, math.NaN()}[int(lr)-1], nil
	})
	require.NoError(t, err)
	require.Equal(t, 2.0, lr)
	require.Equal(t, []float64{-1, 3, -1}, rec)
	lr, rec, err = searchRate([]float64{1, 2}, losses(-1, 3))
	require.NoError(t, err)
	require.Equal(t, 2.0, lr)
	require.Equal(t, []float64{-1, 3}, rec)
	_, _, err = searchRate([]float64{1, 2}, losses(-1, -1))
	require.ErrorContains(t, err, "no learning rate")
}
