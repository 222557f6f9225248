package attribution

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
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
	res, err := LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, cfg.Seed, res.Provenance.Seed)
	require.Len(t, res.Models, ac.ModelSeeds)
	for i, mr := range res.Models {
		require.Equal(t, cfg.Seed+uint64(i), mr.Seed)
		require.Equal(t, modelConfig(cfg, i).Name(), mr.Run)
		var names []string
		for _, m := range mr.Methods {
			names = append(names, m.Name)
		}
		require.Equal(t, []string{MethodPrism, MethodPrismFullC, MethodPrismDot, MethodExactCE, MethodExactCEDiagC,
			MethodReference, MethodEKFAC, MethodGradDot, MethodEKFACBank}, names)
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
			if m.Name != MethodReference {
				require.Len(t, m.Overlap, len(ac.TopK), m.Name)
			}
			for _, o := range append(m.Overlap, m.OverlapEKFAC...) {
				require.True(t, 0 <= o.Lo && o.Lo <= o.Mean && o.Mean <= o.Hi && o.Hi <= 1, "%s: %+v", m.Name, o)
			}
			require.NotNil(t, m.LDS, m.Name)
			require.True(t, -1 <= m.LDS.Lo && m.LDS.Lo <= m.LDS.Mean && m.LDS.Mean <= m.LDS.Hi && m.LDS.Hi <= 1,
				"%s: %+v", m.Name, *m.LDS)
			if m.Name == MethodGradDot {
				require.Zero(t, m.Latency.Repeats, "the gradient dot product is not timed apart from EK-FAC")
				continue
			}
			require.Greater(t, m.Latency.Median, 0.0, m.Name)
			require.True(t, m.Latency.Q1 <= m.Latency.Median && m.Latency.Median <= m.Latency.Q3, m.Name)
		}
		p, ek, bank := mr.Method(MethodPrism), mr.Method(MethodEKFAC), mr.Method(MethodEKFACBank)
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
		if sm.Name != MethodEKFAC {
			require.NotNil(t, sm.LDSVsEKFAC, sm.Name)
		}
	}
	require.Len(t, res.Cost, 2)
	require.Equal(t, "paper", res.Cost[1].Name)
	require.Equal(t, "cg", res.Cost[1].Method(MethodExactCE).Solver, "K = 4096 > direct_max_k at the Paper preset")
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

	again, err := LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, res.Summary, again.Summary)
	require.Equal(t, res.Models[0].Methods, again.Models[0].Methods)
	require.Nil(t, again.Models[0].Scores(MethodPrism), "a stored result has no scores")
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

// TestAttributor_CacheReloads checks that a second Attributor over the same model and corpus loads the caches from
// the run folder and scores every cached method exactly as the one that built them.
func TestAttributor_CacheReloads(t *testing.T) {
	m := tinyModel(t)
	ac := shortAttribution()
	ac.TrainSeqs = 24
	at, err := NewAttributor(m, ac)
	require.NoError(t, err)
	require.False(t, at.Cached)
	qs, err := at.validationQueries()
	require.NoError(t, err)
	again, err := NewAttributor(m, ac)
	require.NoError(t, err)
	require.True(t, again.Cached)
	require.FileExists(t, filepath.Join(again.dir, CodesFile))
	require.FileExists(t, filepath.Join(again.dir, ColumnsFile))
	for _, method := range cachedMethods {
		want, err := at.Scores(qs[:2], method)
		require.NoError(t, err)
		reloaded, err := again.Scores(qs[:2], method)
		require.NoError(t, err)
		require.Equal(t, want, reloaded, method)
	}
}

// TestAttributor_TextQuery checks how a text becomes a query: the completion after "|" is attributed, a text
// without "|" attributes every token after the first, long texts keep their end, and an empty completion errors.
func TestAttributor_TextQuery(t *testing.T) {
	m := tinyModel(t)
	ac := shortAttribution()
	ac.TrainSeqs = 8
	at, err := NewAttributor(m, ac)
	require.NoError(t, err)
	d, err := m.Data()
	require.NoError(t, err)
	tok := d.Tokenizer
	T := m.Config.Data.SeqLen
	sum := func(w []float64) (s float64) {
		for _, v := range w {
			s += v
		}
		return s
	}
	q, err := at.textQuery("the queen|went home")
	require.NoError(t, err)
	np, nc := len(tok.Encode("the queen")), len(tok.Encode("went home"))
	require.Len(t, q.tokens, T+1)
	require.Equal(t, float64(nc), sum(q.weights))
	require.Equal(t, 1.0, q.weights[np-1], "the first completion token is predicted at position len(prompt)−1")
	require.Equal(t, d.EOS, q.tokens[T])

	q, err = at.textQuery("the queen went home")
	require.NoError(t, err)
	require.Equal(t, float64(len(tok.Encode("the queen went home"))-1), sum(q.weights))

	long := strings.Repeat("the queen went home. ", 20)
	q, err = at.textQuery(long)
	require.NoError(t, err)
	all := tok.Encode(long)
	require.Equal(t, all[len(all)-T-1:], q.tokens)
	require.Equal(t, float64(T), sum(q.weights))

	_, err = at.textQuery("the queen|")
	require.ErrorContains(t, err, "no token to attribute")
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
	require.GreaterOrEqual(t, Small().Attribution.ModelSeeds, 3, "a claim needs at least 3 seeds")
	require.Contains(t, run.Keys(Tiny()), "attribution.lds_subsets")
	require.Contains(t, run.Keys(Tiny()), "attribution.model_seeds")
	require.Contains(t, run.Keys(Tiny()), "attribution.query_offset")
	require.Contains(t, run.Keys(Tiny()), "prism.num_prototypes")
	for _, tc := range []struct{ set, mention string }{
		{"attribution.prompt_tokens=16", "attribution: prompt_tokens=16"},
		{"attribution.top_k=[]", "top_k is empty"},
		{"attribution.ekfac=all", "ekfac"},
		{"attribution.lds_subsets=2", "lds_subsets"},
		{"attribution.model_seeds=0", "model_seeds"},
		{"attribution.query_offset=-1", "query_offset"},
		{"attribution.cg_tol=0", "cg_tol"},
		{"head=dense", `head="dense"`},
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
	for _, name := range cachedMethods {
		require.Len(t, lo.Overlaps[name], len(cfg.Attribution.TopK), name)
	}
	require.Contains(t, SweepChart(sw).RenderSnippet().Option, `"name":"prism_full_c"`)
}

// TestAttributor_ReferenceDirectEqualsCG: the exact eigenbasis solve of the co-usage curvature and its CG solve (to
// 1e-10) give the same scores, for the reference and the cached methods that use it.
func TestAttributor_ReferenceDirectEqualsCG(t *testing.T) {
	m := tinyModel(t)
	ac := shortAttribution()
	ac.TrainSeqs = 24
	at, err := NewAttributor(m, ac)
	require.NoError(t, err)
	qs, err := at.validationQueries()
	require.NoError(t, err)
	qs = qs[:2]
	ac.DirectMaxK, ac.CGTol = 0, 1e-10
	cg, err := NewAttributor(m, ac)
	require.NoError(t, err)
	require.Nil(t, cg.Curvature.Direct)
	require.NotNil(t, at.Curvature.Direct)
	for _, method := range []string{MethodReference, MethodExactCE, MethodPrismFullC} {
		want, err := cg.Scores(qs, method)
		require.NoError(t, err)
		got, err := at.Scores(qs, method)
		require.NoError(t, err)
		for q := range want {
			for s := range want[q] {
				require.InDelta(t, want[q][s], got[q][s], 1e-6*(math.Abs(want[q][s])+1e-9), "%s q%d s%d", method, q, s)
			}
		}
	}
}

// TestAttributor_QueriesFromOffset checks that the queries are the validation sequences from query_offset on, with
// the prompt excluded, and that an offset past the validation split is an error naming the key.
func TestAttributor_QueriesFromOffset(t *testing.T) {
	m := tinyModel(t)
	ac := shortAttribution()
	ac.TrainSeqs, ac.QueryOffset = 8, 3
	at, err := NewAttributor(m, ac)
	require.NoError(t, err)
	qs, err := at.validationQueries()
	require.NoError(t, err)
	d, err := m.Data()
	require.NoError(t, err)
	require.Len(t, qs, ac.Queries)
	for i, q := range qs {
		require.Equal(t, d.ValSeqs.Sequence(3+i), q.tokens)
		require.Zero(t, q.weights[ac.PromptTokens-1])
		require.Equal(t, 1.0, q.weights[ac.PromptTokens])
	}
	at.Settings.QueryOffset = d.ValSeqs.NumSequences()
	_, err = at.validationQueries()
	require.ErrorContains(t, err, "query_offset")
}

// TestAttributor_MatchedEKFACQueriesCoverTheCorpus checks the matched-memory EK-FAC queries: as many training
// gradients are stored as fit beside the factors in the budget, and one query scores every corpus sequence once
// (stored or recomputed) for both EK-FAC baselines.
func TestAttributor_MatchedEKFACQueriesCoverTheCorpus(t *testing.T) {
	m := tinyModel(t)
	ac := shortAttribution()
	ac.TrainSeqs = 40
	at, err := NewAttributor(m, ac)
	require.NoError(t, err)
	qs, err := at.validationQueries()
	require.NoError(t, err)
	require.NoError(t, at.fitBlockEKFAC())
	grad := at.ekfac.timing.GradBytes
	require.Equal(t, int64(4*at.ekfac.f.NumParams()), grad)
	budget := at.ekfac.f.Bytes() + 13*grad + grad/2
	require.Equal(t, 13, storedWithin(budget-at.ekfac.f.Bytes(), grad, len(at.Corpus)))
	require.Equal(t, len(at.Corpus), storedWithin(1<<40, grad, len(at.Corpus)))
	require.Zero(t, storedWithin(-1, grad, len(at.Corpus)))
	at.ekfac.timing.Stored = 13
	_, _, _, err = at.blockScores(qs[:1])
	require.NoError(t, err)
	require.Len(t, at.ekfac.stored, 13)
	scores, err := at.timeMatchedBlockQuery(qs[0])
	require.NoError(t, err)
	require.Len(t, scores, len(at.Corpus))
	for s, v := range scores {
		require.NotZero(t, v, "sequence %d was neither stored nor recomputed", s)
	}

	require.NoError(t, at.fitBankEKFAC())
	at.storeBankGradients(4 * int64(4+4*at.mc.Width) * int64(at.pc.TopK))
	require.Positive(t, at.bank.timing.Stored)
	require.Less(t, at.bank.timing.Stored, len(at.Corpus))
	require.LessOrEqual(t, at.bank.storedBytes, 4*int64(4+4*at.mc.Width)*int64(at.pc.TopK))
	scores, err = at.timeMatchedBankQuery(qs[0])
	require.NoError(t, err)
	for s, v := range scores {
		require.NotZero(t, v, "sequence %d was neither stored nor recomputed", s)
	}
}

// TestAttributor_RetrainCyclesASmallSubset checks that an LDS retraining on fewer sequences than its updates need
// cycles the subset (train.steps = 40 batches of 4 from 10 sequences) and yields a model.
func TestAttributor_RetrainCyclesASmallSubset(t *testing.T) {
	m := tinyModel(t)
	d, err := m.Data()
	require.NoError(t, err)
	// A corpus of the whole training split, so that no sequence outside it joins the subset.
	at := &Attributor{Model: m, data: d}
	for i := 0; i < d.TrainSeqs.NumSequences(); i++ {
		at.Corpus = append(at.Corpus, d.TrainSeqs.Sequence(i))
	}
	keep := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	tm, err := at.retrain(keep, "test", run.NewOptions())
	require.NoError(t, err)
	require.Equal(t, m.Config.Train.Steps, len(tm.Result.History.Steps))
	_, err = at.retrain(keep[:2], "test", run.NewOptions())
	require.ErrorContains(t, err, "cannot fill one batch")
}
