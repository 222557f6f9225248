package steering

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/report"
	"github.com/protolab/protolab/workbench/run"
)

// TestLoadOrRun_TinyEndToEnd runs the Tiny protocol (two models, two splits, every controller) and checks its
// bookkeeping: split sizes, accuracies are fractions, gains are named by unit, non-zero and within the support, the
// "sae" controller steers the dense baseline, the SAEs are sized from the bank, the summaries average the runs, the
// claims are untestable with two seeds, and a second call loads the stored result.
func TestLoadOrRun_TinyEndToEnd(t *testing.T) {
	cfg := Tiny()
	out := t.TempDir()
	sc := cfg.Steering
	res, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, cfg.Seeds[0], res.Provenance.Seed)
	require.Len(t, res.Models, len(cfg.Seeds))
	V := cfg.Model.VocabSize
	for mi, mr := range res.Models {
		require.Equal(t, cfg.Seeds[mi], mr.Seed)
		require.Contains(t, mr.Dense, "-seed")
		require.NotContains(t, mr.Dense, "prism")
		require.Len(t, mr.SAE, 2)
		for _, st := range mr.SAE {
			require.Equal(t, cfg.Prism.NumPrototypes, st.Features, "F = K")
			// A top-k SAE keeps k = prism.top_k features per row, fewer where a kept pre-activation is not positive.
			require.True(t, st.L0 > 0 && st.L0 <= float64(cfg.Prism.TopK)+1e-9, "L0 = %g", st.L0)
		}
		require.Len(t, mr.Splits, len(sc.Splits))
		for si, sr := range mr.Splits {
			require.Equal(t, sc.Splits[si], sr.Seed)
			require.Len(t, sr.Controllers, len(sc.Controllers))
			for ci, cr := range sr.Controllers {
				require.Equal(t, sc.Controllers[ci], cr.Controller)
				if cr.Controller == ControllerSAE {
					require.Equal(t, mr.Dense, cr.Model)
				} else {
					require.Equal(t, mr.Run, cr.Model)
				}
				require.Len(t, cr.Tasks, len(sc.Tasks))
				mean := 0.0
				for i, ts := range cr.Tasks {
					require.Equal(t, sc.Tasks[i], ts.Task)
					require.Greater(t, ts.Calibration, 1)
					require.Greater(t, ts.HeldOut, 0)
					require.LessOrEqual(t, ts.Calibration+ts.HeldOut, sc.ItemsPerTask)
					require.Len(t, ts.BetaAccuracy, len(sc.Betas))
					require.Contains(t, sc.Betas, ts.Beta)
					for _, acc := range []float64{ts.Before, ts.After, ts.CalibBefore, ts.CalibAfter} {
						require.True(t, acc >= 0 && acc <= 1)
					}
					require.Equal(t, len(ts.Weights), ts.ActiveWeights)
					require.LessOrEqual(t, ts.ActiveWeights, ts.Support)
					limit := cfg.Prism.NumPrototypes // prototypes or SAE features (F = K)
					if cr.Controller == ControllerBias {
						limit = V
					}
					require.LessOrEqual(t, ts.Support, limit)
					for _, w := range ts.Weights {
						require.NotZero(t, w.Gain)
						require.True(t, w.Unit >= 0 && w.Unit < limit)
					}
					if cr.Controller == ControllerSAE || cr.Controller == ControllerSAEPrism {
						require.Positive(t, ts.FVU)
					}
					mean += ts.Before / float64(len(cr.Tasks))
				}
				require.InDelta(t, mean, cr.MeanBefore, 1e-12)
				if cr.Controller != ControllerSAE {
					require.Equal(t, sr.Controllers[0].MeanBefore, cr.MeanBefore, "the same frozen PRISM model")
				}
			}
		}
	}
	require.Len(t, res.Summaries, len(sc.Controllers))
	for _, c := range Claims(res) {
		require.NoError(t, c.Validate())
		require.NotEmpty(t, c.Untestable, c.Claim)
	}
	require.Contains(t, res.String(), "sae_prism")
	stored, err := filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 1)
	again, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, res.Summaries, again.Summaries)
	require.Equal(t, res.Seconds, again.Seconds, "loaded, not recomputed")
	t.Setenv(run.PresetEnv, "tiny")
	nb, err := Runs.Notebook(run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, res.Seconds, nb.Seconds, "at Tiny the notebook loads the Tiny result")
}

// TestConfig_PresetsAndErrors: Small is protocol v2 (five models of lm.PrismSmallV2, two fresh split seeds, fresh
// documents, every controller, SAEs of F = K = 8·D = 512 features with k = 8), Quick the development run on
// lm.PrismSmall, Tiny and Paper the other PRISM studies' models; every preset validates; bad values name their key.
func TestConfig_PresetsAndErrors(t *testing.T) {
	s, q := Small(), Quick()
	require.Equal(t, lm.PrismSmallV2(), s.Config)
	require.Equal(t, lm.PrismSmall(), q.Config)
	require.Equal(t, lm.PrismTiny(), Tiny().Config)
	require.Equal(t, lm.PrismPaper(), Paper().Config)
	require.Len(t, s.Models(), 5)
	for i, m := range s.Models() {
		require.Equal(t, uint64(i+1), m.Seed)
		require.Equal(t, lmdata.SourceSynthetic, m.Data.Source, "the tasks are the synthetic corpus's labels")
	}
	require.Equal(t, uint64(3101), s.Steering.DocSeed)
	require.Equal(t, uint64(3102), s.HeldBack.DocSeed)
	sae, err := s.Steering.SAE.resolved(s.Prism.NumPrototypes, s.Prism.TopK, s.Model.Width)
	require.NoError(t, err)
	require.Equal(t, 8*s.Model.Width, sae.Model.Features, "F = K = 8·D")
	require.Equal(t, 512, sae.Model.Features)
	require.Equal(t, 8, sae.Model.K)
	v1 := Quick().Steering
	v1.Controllers = s.Steering.Controllers
	v1.DocSeed, v1.Splits = s.Steering.DocSeed, s.Steering.Splits
	require.Equal(t, v1, s.Steering, "the rest of the recipe is v1's")
	require.Equal(t, AllControllers, s.Steering.Controllers)
	require.NotEqual(t, q.Steering.DocSeed, s.Steering.DocSeed, "the protocol evaluates on documents no choice saw")
	for _, sp := range s.Steering.Splits {
		require.NotContains(t, q.Steering.Splits, sp)
	}
	require.False(t, s.UseHeldBack)
	require.NotEqual(t, s.HeldBack.DocSeed, s.Steering.DocSeed)
	for _, name := range []string{"tiny", "small", "paper"} {
		cfg, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, cfg.Validate(), name)
	}
	require.NoError(t, q.Validate())
	for _, tc := range []struct{ set, mention string }{
		{"steering.tasks=[\"colour\"]", `steering: tasks[0]="colour"`},
		{"steering.items_per_task=3", "items_per_task=3"},
		{"steering.betas=[-1]", "betas[0]"},
		{"head=dense", `head="dense"`},
		{"seeds=[2,2]", "seeds[1]=2"},
		{"steering.splits=[]", "splits is empty"},
		{"steering.controllers=[\"sae\",\"sae\"]", "controllers[1]"},
		{"steering.controllers=[\"probe\"]", "controllers[0]=\"probe\""},
		{"steering.sae.model.k=100", "steering.sae"},
		{"held_back.doc_seed=3101", "held_back.doc_seed=3101"},
		{"steering.doc_seed=1", "data.synthetic.seed"},
	} {
		cfg := Tiny()
		require.NoError(t, run.Override(&cfg, tc.set))
		require.ErrorContains(t, cfg.Validate(), tc.mention, tc.set)
	}
	cfg := Tiny()
	cfg.UseHeldBack = true
	require.NoError(t, cfg.Validate())
	require.Equal(t, cfg.HeldBack.Splits, cfg.Settings().Splits)
}

// handResult is a result with five models whose summaries are known: the prototype controller gains 2 ± 0.5
// points, the SAE controller 0.3 ± 0.4, the same-state SAE controller as much as the prototype one, the bias-only
// controller 1.9 ± 0.5 (differences to the prototype controller: +1.7, 0 and +0.1 points, s.e. 0.3).
func handResult() *Result {
	iv := func(mean, se float64) Interval {
		t := 2.776445 // t_{0.975, 4}
		return Interval{Mean: mean / 100, SE: se / 100, Lo: (mean - t*se) / 100, Hi: (mean + t*se) / 100, N: 5}
	}
	return &Result{Config: Small().Settings(), Summaries: []Summary{
		{Controller: ControllerPrototype, Gain: iv(2, 0.5)},
		{Controller: ControllerSAE, Gain: iv(0.3, 0.4), VsPrototype: iv(1.7, 0.3)},
		{Controller: ControllerSAEPrism, Gain: iv(2, 0.5), VsPrototype: iv(0, 0.3)},
		{Controller: ControllerBias, Gain: iv(1.9, 0.5), VsPrototype: iv(0.1, 0.3)},
	}}
}

// TestClaims_KnownVerdicts judges the hand-built result's claims against paper numbers chosen for the test (an SAE
// gain of 0.5 points): the prototype gain 2 ± 0.5 (interval [0.61, 3.39]) holds; the benchmark claim is untestable;
// the SAE gain's interval [−0.81, 1.41] holds 0.5; the prototype controller beats the SAE controller (1.7 ± 0.3) but
// neither the same-state SAE (0 ± 0.3) nor the bias-only controller (0.1 ± 0.3). Without a result every claim is
// listed with Ours empty; with fewer seeds or a missing controller the claims say why they are untestable.
func TestClaims_KnownVerdicts(t *testing.T) {
	paper := map[string]report.Paper{PaperGainMC4: {Value: 3, HasValue: true}, PaperGain: {Value: 3, HasValue: true},
		PaperGainSAE: {Value: 0.5, HasValue: true}}
	claims := Claims(handResult())
	want := []string{report.Reproduced, report.NotTestable, report.Reproduced, report.Reproduced,
		report.NotReproduced, report.NotReproduced}
	require.Len(t, claims, len(want))
	for i, c := range claims {
		require.NoError(t, c.Validate())
		got, why := report.Verdict(c, paper[c.ID])
		require.Equal(t, want[i], got, "claim %d (%s): %s", i, c.Claim, why)
	}
	require.Equal(t, []string{PaperGainMC4, PaperGain, PaperGainSAE, "", "", ""},
		[]string{claims[0].ID, claims[1].ID, claims[2].ID, claims[3].ID, claims[4].ID, claims[5].ID})
	require.InDelta(t, 2, claims[0].Ours.Value, 1e-12)
	require.Equal(t, "points", claims[0].Ours.Unit)
	require.Equal(t, 5, claims[0].Ours.Seeds)
	require.InDelta(t, 1.7, claims[3].Ours.Value, 1e-12)

	empty := Claims(nil)
	require.Len(t, empty, len(want))
	for i, c := range empty {
		require.NoError(t, c.Validate())
		require.Equal(t, claims[i].ID, c.ID)
		require.Equal(t, claims[i].Rule.Kind, c.Rule.Kind)
		require.Equal(t, claims[i].Rule.Test, c.Rule.Test)
		require.NotEmpty(t, c.Claim)
		require.Zero(t, c.Ours)
	}

	r := handResult()
	r.Summaries = r.Summaries[:2]
	r.Summaries[1].Gain.N = 2
	few := Claims(r)
	require.Empty(t, few[0].Untestable)
	require.Contains(t, few[2].Untestable, "needs ≥ 3 training seeds, the result has 2")
	require.Contains(t, few[3].Untestable, "needs ≥ 3")
	require.Contains(t, few[4].Untestable, `no "sae_prism" controller`)
	require.Contains(t, few[5].Untestable, `no "bias" controller`)
}
