package attribution

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/run"
)

// shortAttribution is the Tiny settings cut down for -short: 160 corpus sequences, 4 queries, one timed query, an
// LDS over 3 retrained models per model.
func shortAttribution() Settings {
	ac := Tiny().Attribution
	ac.TrainSeqs, ac.Queries, ac.TimedQueries, ac.LDSSubsets, ac.Bootstrap = 160, 4, 1, 3, 50
	return ac
}

// tinyModel trains the Tiny model into a temporary run.Out, so that attribution caches are written and reloaded.
func tinyModel(t testing.TB) *lm.Model {
	m, err := lm.LoadOrTrain(Tiny().Config, run.Out(t.TempDir()), run.Progress(nil))
	require.NoError(t, err)
	return m
}

// TestLoadOrRun_Tiny runs the whole study on two models and checks its bookkeeping: every method on every model,
// the sizes, overlaps and intervals in [-1, 1] around their means, the LDS, EK-FAC's matched memory, the summary over
// models, the cost models, the claims, the charts and table, and the stored result of a second call.
func TestLoadOrRun_Tiny(t *testing.T) {
	cfg := Tiny()
	out := t.TempDir()
	ac := shortAttribution()
	cfg.Attribution = ac
	res, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, cfg.Seed, res.Provenance.Seed)
	require.Len(t, res.Models, ac.ModelSeeds)
	for i, mr := range res.Models {
		require.Equal(t, cfg.Seed+uint64(i), mr.Seed)
		require.Equal(t, modelConfig(cfg, cfg.Data.Source, i).Name(), mr.Run)
		var names []string
		for _, m := range mr.Methods {
			names = append(names, m.Name)
		}
		require.Equal(t, []string{prism.MethodPrism, prism.MethodPrismFullC, prism.MethodPrismDot, prism.MethodExactCE,
			prism.MethodExactCEDiagC,
			prism.MethodReference, prism.MethodEKFAC, prism.MethodGradDot, prism.MethodEKFACBank}, names)
		require.Equal(t, 160, mr.NumSeqs)
		require.Equal(t, 160*cfg.Data.SeqLen, mr.NumTokens)
		require.Equal(t, 4, mr.NumQueries)
		require.Equal(t, ac.LDSSubsets, mr.LDSModels)
		require.Len(t, mr.Layers, 4*cfg.Model.NumLayers)
		for _, m := range mr.Methods {
			require.Len(t, m.Top, 4, m.Name)
			require.Len(t, m.Top[0], 10, m.Name)
			require.Len(t, mr.Scores(m.Name), 4, m.Name)
			require.Len(t, mr.Scores(m.Name)[0], 160, m.Name)
			if m.Name != prism.MethodReference {
				require.Len(t, m.Overlap, len(ac.OverlapK), m.Name)
			}
			for _, o := range append(m.Overlap, m.OverlapEKFAC...) {
				require.True(t, 0 <= o.Lo && o.Lo <= o.Mean && o.Mean <= o.Hi && o.Hi <= 1, "%s: %+v", m.Name, o)
			}
			require.NotNil(t, m.LDS, m.Name)
			require.True(t, -1 <= m.LDS.Lo && m.LDS.Lo <= m.LDS.Mean && m.LDS.Mean <= m.LDS.Hi && m.LDS.Hi <= 1,
				"%s: %+v", m.Name, *m.LDS)
			if m.Name == prism.MethodGradDot {
				require.Zero(t, m.Latency.Repeats, "the gradient dot product is not timed apart from EK-FAC")
				continue
			}
			require.Greater(t, m.Latency.Median, 0.0, m.Name)
			require.True(t, m.Latency.Q1 <= m.Latency.Median && m.Latency.Median <= m.Latency.Q3, m.Name)
		}
		p, ek, bank := mr.Method(prism.MethodPrism), mr.Method(prism.MethodEKFAC), mr.Method(prism.MethodEKFACBank)
		require.Equal(t, mr.NumQueries, p.Latency.Repeats, "every query timed")
		require.Equal(t, ac.TimedQueries, ek.Latency.Repeats)
		require.Equal(t, 1.0, ek.SpeedUp)
		require.InDelta(t, ek.Latency.Median/p.Latency.Median, p.SpeedUp, 1e-12)
		// Matched memory: the stored training gradients fit beside the factors in the default method's memory, and
		// one more would not.
		grad := int64(4 * influenceParams(&mr))
		if ek.StoredSeqs > 0 {
			require.LessOrEqual(t, ek.Bytes, p.Bytes)
		}
		if ek.StoredSeqs < mr.NumSeqs {
			require.Greater(t, ek.Bytes+grad, p.Bytes)
		}
		if bank.StoredSeqs > 0 {
			require.LessOrEqual(t, bank.Bytes, p.Bytes)
		}
		require.Positive(t, mr.Conditions.Damping)
		require.GreaterOrEqual(t, mr.Conditions.BlockCondMax, mr.Conditions.BlockCondMean)
		require.Positive(t, mr.Conditions.CGIterations, "the CG count runs whatever the solver")
	}
	require.Len(t, res.Summary, len(res.Models[0].Methods))
	for _, sm := range res.Summary {
		require.Equal(t, ac.ModelSeeds, sm.Models)
		require.NotNil(t, sm.LDS, sm.Name)
		require.True(t, sm.LDS.Lo <= sm.LDS.Mean && sm.LDS.Mean <= sm.LDS.Hi, "%s: %+v", sm.Name, *sm.LDS)
		if sm.Name != prism.MethodEKFAC {
			require.NotNil(t, sm.LDSVsEKFAC, sm.Name)
		}
	}
	require.Len(t, res.Cost, 2)
	require.Equal(t, "paper", res.Cost[1].Name)
	require.Equal(t, "cg", res.Cost[1].Method(prism.MethodExactCE).Solver,
		"K = 4096 > direct_max_k at the Paper preset")
	claims := Claims(res)
	require.Len(t, claims, len(Claims(nil)))
	for _, c := range claims {
		require.NoError(t, c.Validate(), c.Claim)
	}
	charts := Charts(res)
	require.Len(t, charts, 3, "overlap, speed and LDS")
	require.Contains(t, charts[0].RenderSnippet().Option, `"name":"prism_full_c"`)
	// Latencies spanning two decades get a log axis, narrower ones a linear axis (plot.MinLogSpan).
	lat := []float64{}
	for _, m := range res.Summary {
		if m.LatencyMs > 0 {
			lat = append(lat, m.LatencyMs)
		}
	}
	axis := `"type":"value"`
	if slices.Max(lat)/slices.Min(lat) >= plot.MinLogSpan {
		axis = `"type":"log"`
	}
	require.Contains(t, charts[1].RenderSnippet().Option, axis)
	require.Contains(t, charts[2].RenderSnippet().Option, `"type":"boxplot"`)
	var sb strings.Builder
	require.NoError(t, WriteTable(&sb, res))
	require.Contains(t, sb.String(), "exact_ce_diag_c")
	require.Contains(t, sb.String(), "cost model at paper")
	require.Equal(t, sb.String(), res.String())

	again, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, res.Summary, again.Summary)
	require.Equal(t, res.Models[0].Methods, again.Models[0].Methods)
	require.Nil(t, again.Models[0].Scores(prism.MethodPrism), "a stored result has no scores")
	stored, err := filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 1)
}

func influenceParams(r *ModelResult) int {
	n := 0
	for _, l := range r.Layers {
		n += l.Params()
	}
	return n
}

// TestConfig_PresetsValidate checks the presets and a few rejected values, named by their key.
func TestConfig_PresetsValidate(t *testing.T) {
	for _, name := range []string{"tiny", "small", "paper"} {
		cfg, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, cfg.Validate(), name)
	}
	require.NoError(t, Quick().Validate())
	require.Equal(t, lm.PrismSmall(), Quick().Config, "the quick run attributes the shared Small model")
	require.Equal(t, Quick().Config, Small().Config)
	s := Small().Attribution
	require.GreaterOrEqual(t, s.ModelSeeds, 3, "a claim needs at least 3 seeds")
	require.GreaterOrEqual(t, s.LDSSubsets, 50, "the spec's M = 50 retrained models (protocol v2)")
	require.Equal(t, []string{lmdata.SourceSynthetic, lmdata.SourceBrown}, s.Corpora)
	require.Positive(t, s.BrownTrainDocs)
	require.Empty(t, Quick().Attribution.Corpora, "the quick run attributes data.source alone")
	require.Empty(t, Tiny().Attribution.Corpora)
	require.Contains(t, run.Keys(Tiny()), "attribution.corpora")
	require.Contains(t, run.Keys(Tiny()), "attribution.brown_train_docs")
	require.Contains(t, run.Keys(Tiny()), "attribution.lds_subsets")
	require.Contains(t, run.Keys(Tiny()), "attribution.model_seeds")
	require.Contains(t, run.Keys(Tiny()), "attribution.query_offset")
	require.Contains(t, run.Keys(Tiny()), "prism.num_prototypes")
	for _, tc := range []struct{ set, mention string }{
		{"attribution.prompt_tokens=16", "attribution: prompt_tokens=16"},
		{"attribution.overlap_k=[]", "overlap_k is empty"},
		{"attribution.ekfac=all", "ekfac"},
		{"attribution.lds_subsets=2", "lds_subsets"},
		{"attribution.model_seeds=0", "model_seeds"},
		{"attribution.query_offset=-1", "query_offset"},
		{"attribution.cg_tol=0", "cg_tol"},
		{"head=dense", `head="dense"`},
		{`attribution.corpora=["synthetic","brown","synthetic"]`, `attribution.corpora lists "synthetic" twice`},
		{`attribution.corpora=["synthetic",""]`, "attribution.corpora[1] is empty"},
		{`data.source=brown;data.synthetic.num_docs=0;attribution.corpora=["brown","synthetic"]`,
			`attribution.corpora[1]="synthetic": data.synthetic`},
		{"attribution.brown_train_docs=-1", "attribution: brown_train_docs=-1"},
	} {
		cfg := Tiny()
		require.NoError(t, run.Override(&cfg, tc.set))
		require.ErrorContains(t, cfg.Validate(), tc.mention, tc.set)
	}
}

// TestRunSweep_Tiny runs the prototype-space study on a sweep λ_1 = λ_2 ∈ {0.01, 1}: a larger clustering floor
// δ_j = 2λ_1 + 2λ_2·n_j must lower the blocks' condition number (spec §5).
func TestRunSweep_Tiny(t *testing.T) {
	cfg := Tiny()
	cfg.Attribution = shortAttribution()
	cfg.Attribution.TrainSeqs = 64
	sw, err := RunSweep(cfg, []float64{0.01, 1}, run.Out(t.TempDir()), run.Progress(nil))
	require.NoError(t, err)
	require.Len(t, sw.Points, 2)
	require.Equal(t, EKFACNone, sw.Config.EKFAC)
	lo, hi := sw.Points[0], sw.Points[1]
	require.Equal(t, 1.0, hi.Weight)
	require.Less(t, hi.Conditions.BlockCondMean, lo.Conditions.BlockCondMean)
	require.Greater(t, lo.ValPerplexity, 1.0)
	for _, name := range prism.CachedMethods {
		require.Len(t, lo.Overlaps[name], len(cfg.Attribution.OverlapK), name)
	}
	require.Contains(t, SweepChart(sw).RenderSnippet().Option, `"name":"prism_full_c"`)
}
