package suppression

import (
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/report"
	"github.com/protolab/protolab/workbench/run"
)

var tinyModel struct {
	once sync.Once
	m    *lm.Model
	err  error
}

// suppressTinyModel trains the Tiny PRISM model once (in memory) for the tests that need a model.
func suppressTinyModel(t *testing.T) *lm.Model {
	t.Helper()
	tinyModel.once.Do(func() {
		tinyModel.m, tinyModel.err = lm.LoadOrTrain(Tiny().Config, run.Progress(nil))
	})
	require.NoError(t, tinyModel.err)
	return tinyModel.m
}

// TestSuppress_TinyEndToEnd runs the suppression study on the Tiny model with an explicit Ω and with keyword
// selection, and checks the invariants that hold at any scale: the "none" row is the reference (reduction 0,
// perplexity change 0), rates are fractions, the judge perplexity is finite, and an explicit Ω is used as given.
func TestSuppress_TinyEndToEnd(t *testing.T) {
	m := suppressTinyModel(t)
	sc := Tiny().Suppress
	sc.Rule = RuleContexts
	sc.Prototypes = []int{3, 1, 3}
	res, err := Suppress(m, sc, run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, []int{1, 3}, res.Omega)
	require.Len(t, res.Modes, len(Modes))
	for i, md := range res.Modes {
		require.Equal(t, Modes[i], md.Mode)
		require.True(t, md.ConceptRate >= 0 && md.ConceptRate <= 1)
		require.True(t, md.AnyRate >= 0 && md.AnyRate <= 1)
		require.Greater(t, md.Words, 0)
		require.Greater(t, md.JudgePerplexity, 1.0)
		require.Greater(t, md.OtherPerplexity, 1.0)
		require.Len(t, md.Examples, sc.Examples)
	}
	none := res.Mode(ModeNone)
	require.Zero(t, none.Reduction)
	require.Zero(t, none.OtherChange)
	require.Zero(t, none.ValChange)
	require.Greater(t, res.OtherTokens, 0)
	require.True(t, res.OtherActive >= 0 && res.OtherActive <= 1)
	// The reference perplexity is the model's own (PrismLogits) on the same fresh text.
	fresh, err := m.FreshCorpus(sc.TextDocs, sc.TextSeed)
	require.NoError(t, err)
	other, concept, err := mprism.SplitByKeywords(m, fresh.Texts, res.Keywords, sc.EvalSequences)
	require.NoError(t, err)
	require.NotEmpty(t, concept)
	var rows []*tensors.Tensor
	for _, s := range other {
		rows = append(rows, tensors.FromFlatDataAndDimensions(append([]int32(nil), s...), 1, len(s)))
	}
	pr, err := m.Perplexity(rows)
	require.NoError(t, err)
	require.InDelta(t, pr.Perplexity, none.OtherPerplexity, 1e-4*pr.Perplexity)
	// PPL_val pools the tokens of both parts: exp of the token-weighted mean of their log-perplexities.
	lv := (float64(res.OtherTokens)*math.Log(none.OtherPerplexity) + float64(res.ConceptTokens)*
		math.Log(none.ConceptPerplexity)) / float64(res.OtherTokens+res.ConceptTokens)
	require.InDelta(t, math.Exp(lv), none.ValPerplexity, 1e-9*none.ValPerplexity)
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
	sel, err := Suppress(m, sc, run.Progress(nil))
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
	sig, err := Suppress(m, sc, run.Progress(nil))
	require.NoError(t, err)
	require.Len(t, sig.Omega, m.Config.Prism.NumPrototypes)
	for i, s := range sig.Selected {
		require.Equal(t, i, s.Prototype)
		require.True(t, s.HitRate >= 0 && s.HitRate <= 1)
		require.Len(t, s.Promoted, sc.SignatureTokens)
	}
}

// TestLoadOrRun_TinyProtocol runs the Tiny protocol (two seeds, two bank sizes) and checks its bookkeeping: one run
// per model in Models order, each evaluated with the protocol's settings, summaries whose means and standard errors
// are those of the runs (computed here by hand), a stored result that a second call loads, claims that are
// untestable with two seeds, and the notebook's rule comparison (one more stored result, no more models).
func TestLoadOrRun_TinyProtocol(t *testing.T) {
	out := t.TempDir()
	cfg := Tiny()
	res, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	models := cfg.Models()
	require.Len(t, res.Runs, 4)
	require.Len(t, models, 4)
	for i, r := range res.Runs {
		require.Equal(t, models[i].Label, r.Label)
		require.Equal(t, models[i].Config.Seed, r.Seed)
		require.Equal(t, models[i].Config.Prism.NumPrototypes, r.K)
		require.Len(t, r.Modes, len(Modes))
	}
	require.Equal(t, cfg.Settings(), res.Config)
	require.False(t, res.HeldBack)
	require.Len(t, res.Summaries, 2)
	for _, s := range res.Summaries {
		var red, other []float64
		for _, r := range res.Runs {
			if r.Label == s.Label {
				red = append(red, r.Mode(ModeZero).Reduction)
				other = append(other, r.Mode(ModeMask).OtherChange)
			}
		}
		require.Equal(t, []uint64{1, 2}, s.Seeds)
		// Two values: the mean is their midpoint and the standard error half their distance.
		z, m := s.Mode(ModeZero), s.Mode(ModeMask)
		require.InDelta(t, (red[0]+red[1])/2, z.Reduction.Mean, 1e-15)
		require.InDelta(t, math.Abs(red[0]-red[1])/2, z.Reduction.SE, 1e-15)
		require.InDelta(t, (other[0]+other[1])/2, m.OtherChange.Mean, 1e-15)
		require.InDelta(t, math.Abs(other[0]-other[1])/2, m.OtherChange.SE, 1e-15)
		require.Equal(t, 2, z.Reduction.N)
	}
	require.Equal(t, 32, res.Summary(ModelSpecRange).K)
	require.Contains(t, res.Summary(ModelRecipe).Note, "outside spec §12's 8D–16D")
	require.NotContains(t, res.Summary(ModelRecipe).Note, "not the model of the quality study", "Tiny's is theirs")
	q := lm.PrismTiny()
	require.Contains(t, res.Summary(ModelSpecRange).Note, fmt.Sprintf("not the model of the quality study at this "+
		"width (prismhead: K = %d, k = %d, %d updates)", q.Prism.NumPrototypes, q.Prism.TopK, q.Train.Steps))
	require.Contains(t, res.String(), "spec_range model")
	for i, c := range Claims(res) {
		require.NoError(t, c.Validate())
		if i < 4 {
			require.Contains(t, c.Untestable, "needs ≥ 3 training seeds")
		} else {
			require.Contains(t, c.Untestable, "no run on the brown corpus", "Tiny runs the synthetic corpus alone")
		}
	}
	stored, err := filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 1)
	trained, err := filepath.Glob(filepath.Join(out, lm.ModelsDir, "*"))
	require.NoError(t, err)
	require.Len(t, trained, 4)
	again, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, res.Summaries, again.Summaries)
	require.Equal(t, res.Seconds, again.Seconds, "loaded, not recomputed")

	// The notebook's rule comparison at this preset: the contexts result is the one above, the signature result a
	// second one on the same models.
	t.Setenv(run.PresetEnv, "tiny")
	results, err := CompareRules([]string{RuleContexts, RuleSignature}, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Len(t, results, 2)
	require.Equal(t, res.Seconds, results[0].Seconds, "loaded")
	require.Equal(t, RuleSignature, results[1].Config.Rule)
	stored, err = filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 2)
	trained, err = filepath.Glob(filepath.Join(out, lm.ModelsDir, "*"))
	require.NoError(t, err)
	require.Len(t, trained, 4, "the models are trained once")
	require.Contains(t, TradeoffChart(results).RenderSnippet().Option, "signature ≥ 0.50")
	nb, err := Runs.Notebook(run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, res.Seconds, nb.Seconds, "at Tiny the notebook loads the Tiny result")
}

// handResult builds a result with known summaries: the recipe's model cuts the concept by 75 ± 1% at +0.5 ± 0.1%
// other-text perplexity over 3 seeds, the spec-range model by 30 ± 2% at +0.9 ± 0.2%.
func handResult() *Result {
	sum := func(label string, k int, cut, cutSE, ppl, pplSE float64) Summary {
		st := func(m, se float64) Stat { return Stat{Mean: m, SE: se, N: 3} }
		s := Summary{Label: label, Seeds: []uint64{1, 2, 3}, K: k, D: 32, TopK: 16, Steps: 4800,
			Omega: st(12, 1)}
		for _, mode := range Modes {
			s.Modes = append(s.Modes, ModeSummary{Mode: mode})
		}
		s.Mode(ModeZero).Reduction = st(cut, cutSE)
		s.Mode(ModeZero).OtherChange = st(ppl, pplSE)
		return s
	}
	return &Result{Config: Small().Settings(), CorpusResult: CorpusResult{Source: lmdata.SourceSynthetic,
		Summaries: []Summary{
			sum(ModelRecipe, 2048, 0.75, 0.01, 0.005, 0.001),
			sum(ModelSpecRange, 512, 0.30, 0.02, 0.009, 0.002),
		}}}
}

// TestClaims_KnownVerdicts judges the claims of a hand-built result against a paper cut of 80%: the recipe's 75 ± 1%
// is within 10% of it and its +0.5 ± 0.1% stays under the 1% bound (reproduced); the spec-range model's 30 ± 2% is
// far from 80% and its +0.9 ± 0.2% may exceed 1% (not reproduced). The result has no Brown run: its four Brown rows
// say so. Without a result every claim is listed, empty; with fewer seeds or no spec-range model the claims say why
// they are untestable.
func TestClaims_KnownVerdicts(t *testing.T) {
	paper := map[string]report.Paper{PaperCut: {Value: 80, HasValue: true}, PaperQuality: {}}
	all := Claims(handResult())
	require.Len(t, all, 8)
	for _, c := range all[4:] {
		require.NoError(t, c.Validate())
		require.Contains(t, c.Untestable, "no run on the brown corpus", c.Claim)
		got, _ := report.Verdict(c, paper[c.ID])
		require.Equal(t, report.NotTestable, got)
	}
	claims := all[:4]
	want := []string{report.Reproduced, report.Reproduced, report.NotReproduced, report.NotReproduced}
	for i, c := range claims {
		require.NoError(t, c.Validate())
		got, why := report.Verdict(c, paper[c.ID])
		require.Equal(t, want[i], got, "claim %d (%s): %s", i, c.Claim, why)
		require.Equal(t, 3, c.Ours.Seeds)
	}
	require.Equal(t, []string{PaperCut, PaperQuality, PaperCut, PaperQuality},
		[]string{claims[0].ID, claims[1].ID, claims[2].ID, claims[3].ID})
	require.InDelta(t, 75, claims[0].Ours.Value, 1e-12)
	require.InDelta(t, 0.1, claims[1].Ours.SE, 1e-12)

	empty := Claims(nil)
	require.Len(t, empty, 8)
	for i, c := range empty[:4] {
		require.NoError(t, c.Validate())
		require.Equal(t, claims[i].ID, c.ID)
		require.Equal(t, claims[i].Rule, c.Rule)
		require.NotEmpty(t, c.Claim)
		require.NotEmpty(t, c.Method)
		require.Zero(t, c.Ours)
	}

	// No prototype selected on any seed: the cut is measured (0%, not reproduced); the cost of suppressing nothing
	// is no measurement of the quality claim.
	r := handResult()
	r.Summaries[0].Omega = Stat{N: 3}
	r.Summaries[0].Mode(ModeZero).Reduction = Stat{N: 3}
	r.Summaries[0].Mode(ModeZero).OtherChange = Stat{N: 3}
	none := Claims(r)
	got, _ := report.Verdict(none[0], paper[PaperCut])
	require.Equal(t, report.NotReproduced, got)
	require.Contains(t, none[1].Untestable, "selected no prototype on any training seed (|Ω| = 0)")
	got, _ = report.Verdict(none[1], paper[PaperQuality])
	require.Equal(t, report.NotTestable, got)
	require.Empty(t, none[3].Untestable, "the other model's rows are judged")

	r = handResult()
	r.Summaries = r.Summaries[:1]
	r.Summaries[0].Seeds = []uint64{1}
	few := Claims(r)
	require.Contains(t, few[0].Untestable, "needs ≥ 3 training seeds, the result has 1")
	require.Contains(t, few[1].Untestable, "needs ≥ 3")
	require.Contains(t, few[2].Untestable, "no spec_range model")
	require.Contains(t, few[3].Untestable, "no spec_range model")
}

// TestSummarise_MeansOverSeeds checks the summary of three hand-made runs against means and standard errors
// written out: reductions 0.7, 0.8, 0.75 (mean 0.75, sample sd 0.05, s.e. 0.05/√3).
func TestSummarise_MeansOverSeeds(t *testing.T) {
	var runs []ModelRun
	for i, red := range []float64{0.7, 0.8, 0.75} {
		r := ModelRun{Label: ModelRecipe, Seed: uint64(i + 1), K: 2048, D: 32, TopK: 16, Steps: 4800,
			Omega: make([]int, 2+i)}
		for _, mode := range Modes {
			r.Modes = append(r.Modes, ModeResult{Mode: mode, OtherPerplexity: 10 + float64(i)})
		}
		r.Modes[1].Reduction = red
		runs = append(runs, r)
	}
	runs = append(runs, ModelRun{Label: ModelSpecRange, Seed: 1, K: 512, D: 32, Modes: runs[0].Modes})
	sums := summarise(runs)
	require.Len(t, sums, 2)
	s := sums[0]
	require.Equal(t, []uint64{1, 2, 3}, s.Seeds)
	require.False(t, s.InSpecRange)
	require.True(t, sums[1].InSpecRange)
	q := lm.PrismSmall()
	require.Equal(t, fmt.Sprintf("K = 2048 = 64·D (D = 32), outside spec §12's 8D–16D; k = 16; 4800 updates; not "+
		"the model of the quality study at this width (prismhead: K = %d, k = %d, %d updates)",
		q.Prism.NumPrototypes, q.Prism.TopK, q.Train.Steps), s.Note)
	require.InDelta(t, 0.75, s.Mode(ModeZero).Reduction.Mean, 1e-15)
	require.InDelta(t, 0.05/math.Sqrt(3), s.Mode(ModeZero).Reduction.SE, 1e-15)
	require.InDelta(t, 11, s.Mode(ModeNone).OtherPerplexity.Mean, 1e-15)
	require.InDelta(t, 3, s.Omega.Mean, 1e-15)
	require.Equal(t, Stat{Mean: 10, N: 1}, sums[1].Mode(ModeMask).OtherPerplexity, "one seed: no standard error")
}

// TestCharts renders the figures of a constructed result (no training needed).
func TestCharts(t *testing.T) {
	su := handResult()
	su.Config.Concept, su.Config.Value = "topic", "food"
	su.Summaries[0].Omega = Stat{Mean: 2}
	z := su.Summaries[0].Mode(ModeZero)
	z.ConceptRate = Stat{Mean: 0.005}
	su.Summaries[0].Mode(ModeMask).OtherChange = Stat{Mean: 0.0011}
	su.Summaries[0].Mode(ModeNone).OtherPerplexity = Stat{Mean: 9.05}
	opt := RateChart(su).RenderSnippet().Option
	for _, s := range []string{"topic=food", "|Ω| = 2.0", "zero +0.50%", "mask +0.11%", "0.005", "spec_range"} {
		require.Contains(t, opt, s)
	}
	opt = PerplexityChart(su).RenderSnippet().Option
	for _, s := range []string{"9.05", "text without the concept, recipe", `"mask"`} {
		require.Contains(t, opt, s)
	}
	su.Config.Rule, su.Config.MinHitRate = RuleMass, 0.5
	opt = TradeoffChart([]*Result{su}).RenderSnippet().Option
	for _, s := range []string{"75", "0.5", "mass ≥ 0.50, recipe, |Ω| = 2.0", `"name":"zero"`} {
		require.Contains(t, opt, s)
	}
}
