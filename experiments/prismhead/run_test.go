package prismhead

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// TestLoadOrRun_TinyStudy runs the whole Tiny study into a folder, checks the shape and ranges of every part of the
// result, then checks that a second call loads the stored result.
func TestLoadOrRun_TinyStudy(t *testing.T) {
	cfg := Tiny()
	out := t.TempDir()
	res, err := LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, cfg.Seed, res.Provenance.Seed)
	require.Equal(t, lm.RunDir(out, cfg.Config), res.PrismDir)
	require.Equal(t, lm.RunDir(out, cfg.Config.Dense()), res.DenseDir)
	q := res.Quality
	require.InDelta(t, q.Prism.Perplexity/q.Dense.Perplexity-1, q.RelPerplexity, 1e-12)
	require.Equal(t, cfg.Prism.NumPrototypes*cfg.Model.Width, q.PrismParams-q.DenseParams)
	c := q.Coverage
	require.Equal(t, cfg.EvalBatches*cfg.Data.BatchSize*cfg.Data.SeqLen, c.Tokens)
	for _, x := range []float64{c.R1Bar, c.R2, c.R1Frac, c.R2Frac} {
		require.True(t, x >= -1 && x <= 1, "coverage %v", c)
	}
	// The bank was seeded with hidden states, so the nearest prototype of a token is close to it.
	require.Greater(t, c.R2, 0.5)
	require.Len(t, q.Counts, cfg.Prism.NumPrototypes)
	total := int64(0)
	for _, n := range q.Counts {
		total += n
	}
	require.InDelta(t, q.Usage.MeanActive*float64(c.Tokens), float64(total), 1e-6)
	require.True(t, q.Usage.OffDiagonalMass >= 0 && q.Usage.OffDiagonalMass < 1)

	cv := res.Curvature
	require.Len(t, cv.Prototypes, cfg.Curvature.Prototypes)
	require.Equal(t, cfg.Curvature.Batches*cfg.Data.BatchSize*cfg.Data.SeqLen, cv.Tokens)
	require.Less(t, cv.Asymmetry, 1e-8)
	require.Len(t, cv.Approx, 5)
	require.Len(t, res.Sweep, len(cfg.Curvature.Sweep))
	for i, p := range res.Sweep {
		require.Equal(t, cfg.Curvature.Sweep[i], p.Weight)
		require.Equal(t, p.Weight, p.Curvature.R1Weight)
		require.False(t, math.IsNaN(p.Curvature.Exact.MaxEig))
	}
	require.Contains(t, res.String(), "sweep")
	stored, err := filepath.Glob(filepath.Join(out, Study, "result-*.json"))
	require.NoError(t, err)
	require.Len(t, stored, 1)
	for _, dir := range []string{res.PrismDir} {
		for _, name := range []string{"quality-*.json", "curvature-*.json"} {
			m, err := filepath.Glob(filepath.Join(dir, name))
			require.NoError(t, err)
			require.Len(t, m, 1, name)
		}
	}

	again, err := LoadOrRun(cfg, run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, res.Quality.Prism.Loss, again.Quality.Prism.Loss)
	require.Equal(t, res.Curvature.Exact.MaxEig, again.Curvature.Exact.MaxEig)
	require.True(t, res.Provenance.Start.Equal(again.Provenance.Start), "loaded, not recomputed")
}

// TestConfig_PresetsAndErrors: every preset validates, the model keys sit at the top level, and bad values name
// their key.
func TestConfig_PresetsAndErrors(t *testing.T) {
	for _, name := range []string{"tiny", "small", "paper"} {
		cfg, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, cfg.Validate(), name)
	}
	require.Contains(t, run.Keys(Tiny()), "prism.top_k")
	require.Contains(t, run.Keys(Tiny()), "curvature.prototypes")
	for _, tc := range []struct{ set, mention string }{
		{"curvature.prototypes=17", "curvature: prototypes=17"},
		{"curvature.sweep=[0.1,-1]", "sweep[1]"},
		{"head=dense", `head="dense"`},
		{"prism.top_k=0", "prism"},
	} {
		cfg := Tiny()
		require.NoError(t, run.Override(&cfg, tc.set))
		require.ErrorContains(t, cfg.Validate(), tc.mention, tc.set)
	}
}

// TestLoadOrRun_SmallTargets runs the Small study (minutes on 2 cores; skipped with -short) and checks the brief's
// targets: PRISM perplexity within 2.5% of the dense head, R̄1 and R2 ≥ 0.9, and a damped condition number of the
// exact Hessian that falls as the clustering weight grows. Set PRISM_SMALL_OUT to keep the run folders.
func TestLoadOrRun_SmallTargets(t *testing.T) {
	out := wbtest.LongRun(t, "the Small study takes minutes", "PRISM_SMALL_OUT")
	res, err := LoadOrRun(Small(), run.Out(out), run.Progress(nil))
	require.NoError(t, err)
	t.Logf("Small study:\n%s", res)
	require.LessOrEqual(t, res.Quality.RelPerplexity, 0.025)
	require.GreaterOrEqual(t, res.Quality.Coverage.R1Bar, 0.9)
	require.GreaterOrEqual(t, res.Quality.Coverage.R2, 0.9)
	for i := 1; i < len(res.Sweep); i++ {
		prev, cur := res.Sweep[i-1].Curvature.Exact.DampedCond, res.Sweep[i].Curvature.Exact.DampedCond
		require.True(t, cur > 0 && cur < prev, "κ at λ=%g is %g, at λ=%g %g", res.Sweep[i].Weight, cur,
			res.Sweep[i-1].Weight, prev)
	}
}
