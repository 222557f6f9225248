package suppression

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
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

// TestLoadOrRun_StoresOneResultPerRule runs the Tiny study twice with another rule each (the notebook's trade-off
// cell): two stored results, one model, and a second call loads.
func TestLoadOrRun_StoresOneResultPerRule(t *testing.T) {
	out := t.TempDir()
	var results []*Result
	for _, rule := range []string{RuleContexts, RuleSignature} {
		cfg := Tiny()
		cfg.Suppress.Rule = rule
		res, err := LoadOrRun(cfg, run.Out(out), run.Progress(nil))
		require.NoError(t, err)
		require.Equal(t, rule, res.Config.Rule)
		require.Equal(t, cfg.Seed, res.Provenance.Seed)
		results = append(results, res)
	}
	stored, err := filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 2)
	models, err := filepath.Glob(filepath.Join(out, lm.ModelsDir, "*"))
	require.NoError(t, err)
	require.Len(t, models, 1)
	again, err := LoadOrRun(Tiny(), run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, results[0].Modes, again.Modes)
	require.Equal(t, results[0].Seconds, again.Seconds, "loaded, not recomputed")
	require.Contains(t, TradeoffChart(results).RenderSnippet().Option, "signature ≥ 0.50")
	require.Contains(t, results[1].String(), `rule "signature"`)
}

// TestConfig_PresetModels: Tiny suppresses on the other PRISM studies' Tiny model and Paper on their Paper model;
// Small's model is lm.PrismSmall with K = 2048, k = 16, 4800 updates at lr 1e-2, seeded from 16 batches. Every
// preset validates, and bad values name their key.
func TestConfig_PresetModels(t *testing.T) {
	require.Equal(t, lm.PrismTiny(), Tiny().Config)
	require.Equal(t, lm.PrismPaper(), Paper().Config)
	s := Small().Config
	want := lm.PrismSmall()
	want.Train.Steps, want.Train.LR = 4800, 1e-2
	want.Prism.NumPrototypes, want.Prism.TopK, want.Prism.SeedBatches = 2048, 16, 16
	require.Equal(t, want, s)
	for _, name := range []string{"tiny", "small", "paper"} {
		cfg, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, cfg.Validate(), name)
	}
	for _, tc := range []struct{ set, mention string }{
		{"suppress.rule=words", `suppress: rule="words"`},
		{"suppress.min_contexts=11", "min_contexts=11"},
		{"suppress.prototypes=[-1]", "prototypes[0]"},
		{"head=dense", `head="dense"`},
		{"prism.seed_batches=0", "seed_batches"},
	} {
		cfg := Tiny()
		require.NoError(t, run.Override(&cfg, tc.set))
		require.ErrorContains(t, cfg.Validate(), tc.mention, tc.set)
	}
}

// TestCharts renders the figures of a constructed result (no training needed).
func TestCharts(t *testing.T) {
	su := &Result{Run: "prism-test", Config: Settings{Concept: "topic", Value: "food"},
		Omega: []int{1, 2}, Modes: []ModeResult{
			{Mode: ModeNone, ConceptRate: 0.04, AnyRate: 0.3, OtherPerplexity: 9, ConceptPerplexity: 10, JudgePerplexity: 8},
			{Mode: ModeZero, ConceptRate: 0.005, AnyRate: 0.05, OtherPerplexity: 9.05, OtherChange: 0.0055},
			{Mode: ModeMask, ConceptRate: 0.01, AnyRate: 0.1, OtherPerplexity: 9.01, OtherChange: 0.0011},
		}}
	opt := RateChart(su).RenderSnippet().Option
	for _, s := range []string{"topic=food", "|Ω| = 2", "zero +0.55%", "mask +0.11%", "0.005"} {
		require.Contains(t, opt, s)
	}
	opt = PerplexityChart(su).RenderSnippet().Option
	for _, s := range []string{"9.05", "text without the concept", `"mask"`} {
		require.Contains(t, opt, s)
	}
	su.Config.Rule, su.Config.MinHitRate = RuleMass, 0.5
	su.Modes[1].Reduction, su.Modes[1].OtherChange = 0.875, 0.0125
	opt = TradeoffChart([]*Result{su}).RenderSnippet().Option
	for _, s := range []string{"87.5", "1.25", "mass ≥ 0.50, |Ω| = 2", `"name":"zero"`} {
		require.Contains(t, opt, s)
	}
}
