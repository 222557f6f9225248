package architecture

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/generation"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/brown/browntest"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// TestRunCompare_TinyShapeAndCache trains the four mixers at Tiny scale, checks the comparison's shape and the
// achieved parameter counts, then checks that the same config loads from the cache and a changed one retrains.
func TestRunCompare_TinyShapeAndCache(t *testing.T) {
	cfg := Tiny()
	out := run.Out(t.TempDir())
	q := run.Progress(nil)
	cmp, err := RunCompare(cfg, "synthetic", out, q)
	require.NoError(t, err)
	require.Equal(t, "synthetic", cmp.Source)
	require.Equal(t, cfg.Model.Width, cmp.Width)
	require.Equal(t, cfg.Train.Steps, cmp.Steps)
	require.Len(t, cmp.Scores, len(decoder.KnownMixers))
	vocab := float64(cfg.Data.Tokenizer.VocabSize)
	for i, s := range cmp.Scores {
		require.Equal(t, cfg.Mixers[i], s.Mixer)
		require.Len(t, s.Runs, 1)
		m := s.Runs[0]
		r := m.Result
		require.False(t, m.Cached)
		require.Equal(t, s.Params, r.NumParams)
		require.Equal(t, m.Config.Model.NumParams(), r.NumParams)
		require.LessOrEqual(t, abs(s.Match.Achieved-s.Match.Target), lm.MatchTolerance(m.Config.Model))
		require.Equal(t, cmp.Scores[0].Match.Achieved, s.Match.Target, "attention is the reference")
		require.Equal(t, r.Val.Perplexity, s.Perplexity)
		require.InDelta(t, math.Exp(s.Loss), s.Perplexity, 1e-9*s.Perplexity)
		// Training takes every mixer below the uniform predictor, whose perplexity is V.
		require.Less(t, s.Perplexity, vocab, s.Mixer)
		require.Greater(t, s.Perplexity, 1.0)
		require.Equal(t, cfg.Train.Steps*cfg.Data.BatchSize*cfg.Data.SeqLen, s.Tokens)
		require.Equal(t, cfg.Inits[0], m.Config.Model.Init)
		require.Equal(t, cfg.Train.LR, s.LR)
		// The test corpus: fresh documents, scored in test.batches batches of B windows of T tokens.
		require.NotNil(t, s.Test)
		require.Nil(t, s.Holdout, "Tiny holds no corpus back")
		require.Equal(t, cfg.Test.Batches*cfg.Data.BatchSize*cfg.Data.SeqLen, s.Test.Tokens)
		require.InDelta(t, math.Exp(s.Test.Losses[0]), s.Test.Perplexity, 1e-9*s.Test.Perplexity)
		// The curve: one point per evaluation (every eval_every steps and at the end), at its token count.
		require.Len(t, s.Curve, cfg.Train.Steps/cfg.Train.EvalEvery)
		require.Equal(t, s.Tokens, s.Curve[len(s.Curve)-1].Tokens)
		require.Equal(t, r.History.Evals[len(r.History.Evals)-1].Loss, s.Curve[len(s.Curve)-1].Loss)
		for _, f := range []string{lm.ConfigFile, lm.TokenizerFile, lm.WeightsFile, lm.ResultFile} {
			require.FileExists(t, filepath.Join(m.Dir, f))
		}
	}
	require.Contains(t, cmp.String(), "protot")
	require.Len(t, cmp.Ranking, len(cmp.Scores[0].Curve))
	require.ElementsMatch(t, cfg.Mixers, cmp.Ranking[0].Order)

	// Same config: loaded, same numbers.
	again, err := RunCompare(cfg, "synthetic", out, q)
	require.NoError(t, err)
	for i, s := range again.Scores {
		require.True(t, s.Runs[0].Cached)
		require.Equal(t, cmp.Scores[i].Loss, s.Loss)
		require.Equal(t, cmp.Scores[i].Match, s.Match)
	}

	// A reopened model gives the run's validation perplexity on the same batches.
	m := again.Scores[1].Runs[0]
	prep, err := m.Data()
	require.NoError(t, err)
	vals, err := prep.ValTensors(m.Config.EvalBatches)
	require.NoError(t, err)
	ppl, err := m.Perplexity(vals)
	require.NoError(t, err)
	require.InDelta(t, cmp.Scores[1].Loss, ppl.Loss, 1e-6)

	// A different config is a different run in its own folder.
	cfg.Mixers = []string{"attention"}
	require.NoError(t, run.Override(&cfg, "train.lr=0.002"))
	changed, err := RunCompare(cfg, "synthetic", out, q)
	require.NoError(t, err)
	require.False(t, changed.Scores[0].Runs[0].Cached)
	require.NotEqual(t, cmp.Scores[0].Runs[0].Dir, changed.Scores[0].Runs[0].Dir)
	require.NotEqual(t, cmp.Scores[0].Loss, changed.Scores[0].Loss)
}

// TestSweepGenerateClassify_Tiny runs the sweep of two mixers (the comparison point is shared, so it loads), the
// generation measures and a classification fine-tuning on its top runs.
func TestSweepGenerateClassify_Tiny(t *testing.T) {
	cfg := Tiny()
	cfg.Mixers = []string{"attention", "protot"}
	out := run.Out(t.TempDir())
	q := run.Progress(nil)
	_, err := RunCompare(cfg, "synthetic", out, q)
	require.NoError(t, err)
	sw, err := RunSweep(cfg, out, q)
	require.NoError(t, err)
	require.Len(t, sw.Scores, 2*len(cfg.Sweep.Widths)*len(cfg.Sweep.Steps))
	for _, s := range sw.Scores {
		shared := s.Width == cfg.Model.Width && s.Steps == cfg.Train.Steps
		require.Equal(t, shared, s.Runs[0].Cached, "%s d%d s%d", s.Mixer, s.Width, s.Steps)
	}
	for _, m := range cfg.Mixers {
		short, _ := sw.Find(m, 24, 15)
		long, ok := sw.Find(m, 24, 30)
		require.True(t, ok)
		require.Less(t, long.Loss, short.Loss, "%s: more tokens, lower loss", m)
	}
	best := sw.Scores[sw.Best]
	for _, s := range sw.Scores {
		require.GreaterOrEqual(t, s.Loss, best.Loss)
	}
	tops, err := sw.TopModels()
	require.NoError(t, err)
	require.Len(t, tops, 2)
	require.Equal(t, "protot-synthetic-d24-s30-seed1", tops[1].Config.Name())

	g, err := RunGeneration(cfg, sw)
	require.NoError(t, err)
	judge, err := sw.BestModel()
	require.NoError(t, err)
	require.Equal(t, judge.Config.Name(), g.Judge)
	require.Len(t, g.Rows, 3)
	require.Equal(t, generation.ReferenceName, g.Rows[2].Name)
	for _, r := range g.Rows {
		require.Len(t, r.Samples, cfg.Generate.NumSamples)
		require.Len(t, r.Distinct, len(generation.DistinctNs))
		var texts []string
		for _, s := range r.Samples {
			texts = append(texts, s.Completion)
		}
		require.Equal(t, generation.DistinctN(texts, 2), r.Distinct[1])
		require.Equal(t, generation.RepetitionRate(texts, cfg.Generate.RepetitionN), r.Repetition)
		if r.JudgeTokens > 0 {
			require.Greater(t, r.JudgePerplexity, 1.0)
		}
	}
	// The judge's perplexity of the reference continuations, recomputed from its token losses of each
	// [EOS, prompt, continuation] row.
	eos, _ := judge.Tokenizer.SpecialID("<|eos|>")
	sum, n := 0.0, 0
	for _, s := range g.Rows[2].Samples {
		p, c := judge.Tokenizer.Encode(s.Prompt), generation.EncodeText(judge.Tokenizer, s.Completion)
		losses, err := judge.TokenLosses([][]int32{append(append([]int32{eos}, p...), c...)})
		require.NoError(t, err)
		for _, l := range losses[0][len(losses[0])-len(c):] {
			sum += l
			n++
		}
	}
	require.Equal(t, n, g.Rows[2].JudgeTokens)
	require.InDelta(t, math.Exp(sum/float64(n)), g.Rows[2].JudgePerplexity, 1e-4*g.Rows[2].JudgePerplexity)
	// The same measures from the stored sweep, whose models are opened from their folders.
	stored := *sw
	stored.Scores = slices.Clone(sw.Scores)
	for i := range stored.Scores {
		stored.Scores[i].Runs = nil
	}
	again, err := RunGeneration(cfg, &stored)
	require.NoError(t, err)
	require.Equal(t, g.Rows[0].Samples, again.Rows[0].Samples)

	cfg.Classify.Tasks = []string{"gender"}
	rep, err := RunClassify(cfg, tops[:1], q)
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	require.Equal(t, "gender", rep.Tasks[0].Name)
	require.Equal(t, rep.Tasks[0].Majority, rep.Results[0].Majority)
}

// TestRunCompare_SeedsGiveMeanAndSE checks the aggregation over two seeds.
func TestRunCompare_SeedsGiveMeanAndSE(t *testing.T) {
	cfg := Tiny()
	cfg.Mixers = []string{"attention"}
	cfg.Seeds = []uint64{1, 2}
	cfg.Train.Steps = 10
	cmp, err := RunCompare(cfg, "synthetic", run.Progress(nil))
	require.NoError(t, err)
	s := cmp.Scores[0]
	require.Equal(t, 2, s.Seeds)
	require.Len(t, s.Runs, 2)
	a, b := s.Runs[0].Result.Val.Loss, s.Runs[1].Result.Val.Loss
	require.NotEqual(t, a, b)
	require.InDelta(t, (a+b)/2, s.Loss, 1e-12)
	require.InDelta(t, math.Abs(a-b)/2, s.LossSE, 1e-12) // n = 2: sd = |a−b|/√2, s.e. = sd/√2
	require.Empty(t, s.Dirs, "no folder without Out")
}

func TestWordNetAvailable_ExplainsWhenMissing(t *testing.T) {
	t.Setenv("PROTOLAB_WORDNET", filepath.Join(t.TempDir(), "nowhere"))
	ok, why := WordNetAvailable()
	require.False(t, ok)
	require.Contains(t, why, "make wordnet")
	_, err := RunCompare(Tiny(), "wordnet", run.Progress(nil))
	require.ErrorContains(t, err, "wordnet")
}

func TestFromEnv(t *testing.T) {
	t.Setenv("PROTOLAB_PRESET", "tiny")
	cfg, err := Runs.FromEnv()
	require.NoError(t, err)
	require.Equal(t, Tiny().Train.Steps, cfg.Train.Steps)
	t.Setenv("PROTOLAB_PRESET", "huge")
	_, err = Runs.FromEnv()
	require.ErrorContains(t, err, `PROTOLAB_PRESET="huge" is not a preset`)
}

// TestRun_TinyStudy runs the whole study for one mixer, with WordNet missing: it is skipped with the reason and
// the study is stored under run.Out.
func TestRun_TinyStudy(t *testing.T) {
	t.Setenv("PROTOLAB_WORDNET", filepath.Join(t.TempDir(), "nowhere"))
	cfg := Tiny()
	cfg.Mixers = []string{"protot"}
	cfg.Corpora = []string{"synthetic", "wordnet"}
	cfg.Sweep = SweepConfig{Widths: []int{cfg.Model.Width}, Steps: []int{15, cfg.Train.Steps}}
	cfg.Classify.Train.Steps, cfg.Classify.Train.WarmupSteps = 10, 1
	tmp := t.TempDir()
	out := filepath.Join(tmp, "trained", "runs")
	res, err := Runs.Run(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Len(t, res.Compare, 1)
	require.Len(t, res.Skipped, 1)
	require.Contains(t, res.Skipped[0], "wordnet: ")
	require.Len(t, res.Sweep.Scores, 2)
	require.Same(t, res.Compare[0].Scores[0].Runs[0], res.Sweep.Scores[1].Runs[0], "the comparison's point")
	require.Len(t, res.Generation.Rows, 2)
	require.Len(t, res.Classify.Results, len(cfg.Classify.Tasks))
	stored, err := filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 1)
	loaded, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, res.Generation, loaded.Generation)
	for _, phase := range []string{"compare", "sweep", "generate", "classify"} {
		require.Contains(t, res.Provenance.Timings, phase)
	}

	// The stored result opens its models from the run folders it recorded; moved to another machine's run root
	// (results/ holds the result, $PROTOLAB_OUT/runs the models), it finds them there by name, and without them it
	// says how to train them.
	require.Nil(t, loaded.Compare[0].Scores[0].Runs, "a loaded result holds no models")
	tops, err := loaded.TopModels()
	require.NoError(t, err)
	require.Equal(t, res.Compare[0].Scores[0].Runs[0].Dir, tops[0].Dir)
	moved := filepath.Join(tmp, "elsewhere")
	require.NoError(t, os.Rename(filepath.Dir(out), moved))
	t.Setenv(run.OutEnv, moved)
	loaded.Compare[0].Scores[0].Runs = nil
	tops, err = loaded.TopModels()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(moved, "runs", lm.ModelsDir, filepath.Base(res.Compare[0].Scores[0].Runs[0].Dir)),
		tops[0].Dir)
	require.Equal(t, res.Compare[0].Scores[0].Loss, tops[0].Result.Val.Loss)
	t.Setenv(run.OutEnv, t.TempDir())
	loaded.Compare[0].Scores[0].Runs = nil
	_, err = loaded.TopModels()
	require.ErrorContains(t, err, "is not on this machine")
	require.ErrorContains(t, err, "protolab run architecture")
}

// TestRun_TinyProtocol runs the protocol's machinery at Tiny scale for one mixer: the learning-rate search under
// both policies, the comparisons at the chosen rates with two seeds, the shared-rate comparison and the held-back
// test corpus; the search's run is the first seed's run of the comparison, and the stored result loads with the
// same claims.
func TestRun_TinyProtocol(t *testing.T) {
	cfg := Tiny()
	cfg.Mixers = []string{"protot"}
	cfg.Inits = []string{"pytorch", "gpt2"}
	cfg.LRGrid = []float64{3e-3, 1e-2}
	cfg.SharedLR = true
	cfg.Seeds = []uint64{1, 2}
	cfg.Train.Steps, cfg.Train.WarmupSteps, cfg.Train.EvalEvery = 10, 1, 5
	cfg.Test.HoldoutSeed = 9002
	cfg.Sweep = SweepConfig{}
	cfg.Generate.NumSamples = 1
	cfg.Classify.Train.Steps, cfg.Classify.Train.WarmupSteps = 4, 1
	out := t.TempDir()
	res, err := Runs.Run(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Len(t, res.Tuning, 2)
	for _, tu := range res.Tuning {
		require.Equal(t, cfg.LRGrid, tu.LRs)
		require.Len(t, tu.Losses, 2)
		require.Contains(t, cfg.LRGrid, tu.Chosen)
		best := -1 // the lowest validation loss among the runs that did not diverge
		for i := range tu.LRs {
			if !tu.Diverged[i] && (best < 0 || tu.Losses[i] < tu.Losses[best]) {
				best = i
			}
		}
		require.Equal(t, tu.LRs[best], tu.Chosen)
		require.True(t, tu.AtEdge, "a grid of two values has only edges")
	}
	require.Len(t, res.Compare, 3) // pytorch and gpt2 at the searched rates, pytorch at train.lr
	for i, c := range res.Compare {
		want := []string{LRTuned, LRTuned, LRShared}[i]
		require.Equal(t, want, c.LRMode)
		s := c.Scores[0]
		require.Equal(t, 2, s.Seeds)
		require.Len(t, s.Test.Perplexities, 2)
		require.NotNil(t, s.Holdout)
		require.NotEqual(t, s.Test.Loss, s.Holdout.Loss, "two corpora")
		if c.LRMode == LRTuned {
			require.Equal(t, res.Tuning[i].Chosen, s.LR)
			// The search's first-seed run is the comparison's: its validation loss is the search's at that rate.
			k := slices.Index(res.Tuning[i].LRs, s.LR)
			require.Equal(t, res.Tuning[i].Losses[k], s.Runs[0].Result.Val.Loss)
		} else {
			require.Equal(t, cfg.Train.LR, s.LR)
		}
		require.Equal(t, []string{"pytorch", "gpt2", "pytorch"}[i], s.Runs[0].Config.Model.Init)
	}
	require.Nil(t, res.Sweep)
	require.NotNil(t, res.Generation)
	require.Contains(t, res.String(), "lr search protot")
	loaded, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, fmt.Sprint(Claims(res)), fmt.Sprint(Claims(loaded))) // NaN ≠ NaN: compare the printed rows
	for _, c := range Claims(loaded) {
		require.NotEmpty(t, c.Untestable, "one mixer and two seeds test no claim: %s", c.Claim)
	}
}

// TestRun_TinyProtocolTwoCorpora runs protocol v2's machinery at Tiny scale for one mixer on the synthetic corpus and
// the Brown corpus (a fixture shaped like the installed one): each corpus has its own search with the tuning seed,
// which no replicate uses; each has its comparisons at the chosen and the shared rate; the Brown comparisons are
// tested on the test split and the held-out split (odd and even seed), two disjoint sets of documents.
func TestRun_TinyProtocolTwoCorpora(t *testing.T) {
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	cfg := Tiny()
	cfg.Mixers = []string{"attention"}
	cfg.Corpora = []string{lmdata.SourceSynthetic, lmdata.SourceBrown}
	cfg.LRGrid = []float64{3e-3, 1e-2}
	cfg.SharedLR = true
	cfg.Seeds, cfg.TuneSeed = []uint64{1, 2}, 11
	cfg.Train.Steps, cfg.Train.WarmupSteps, cfg.Train.EvalEvery = 10, 1, 5
	cfg.Test.Seed, cfg.Test.HoldoutSeed, cfg.Test.BrownDocs = 9003, 9004, 3
	cfg.Sweep = SweepConfig{}
	cfg.Generate.NumSamples = 1
	cfg.Classify.Train.Steps, cfg.Classify.Train.WarmupSteps = 4, 1
	res, err := Runs.Run(cfg, run.Out(t.TempDir()), run.Progress(nil))
	require.NoError(t, err)
	require.Len(t, res.Tuning, 2)
	for i, tu := range res.Tuning {
		require.Equal(t, cfg.Corpora[i], tu.Source)
		require.Equal(t, uint64(11), tu.Seed)
	}
	require.Len(t, res.Compare, 4)
	for i, c := range res.Compare {
		require.Equal(t, cfg.Corpora[i/2], c.Source)
		require.Equal(t, []string{LRTuned, LRShared}[i%2], c.LRMode)
		s := c.Scores[0]
		require.Equal(t, 2, s.Seeds)
		for k, m := range s.Runs {
			require.Equal(t, cfg.Seeds[k], m.Config.Seed, "replicates are seeds 1 and 2, never the tuning seed")
			require.Equal(t, c.Source, m.Config.Data.Source)
		}
		if c.LRMode == LRTuned {
			require.Equal(t, res.Tuning[i/2].Chosen, s.LR)
		}
		require.NotNil(t, s.Test, c.Source)
		require.NotNil(t, s.Holdout, c.Source)
		require.NotEqual(t, s.Test.Loss, s.Holdout.Loss, "two sets of documents")
	}
	claims := Claims(res)
	require.Contains(t, claims[7].Claim, "Brown")
	require.Contains(t, claims[7].Untestable, "this run has 2", "the Brown row reads the Brown comparison")
}
