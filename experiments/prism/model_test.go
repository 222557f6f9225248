package prism

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/run"
)

// TestLoadOrTrain_TinyTrainsSeedsAndCaches trains the Tiny PRISM model and its dense baseline, checks the seeded
// bank, the head's per-token outputs and the run folder, then checks that the same config loads from the cache
// with the same perplexity on the same batches.
func TestLoadOrTrain_TinyTrainsSeedsAndCaches(t *testing.T) {
	cfg := Tiny()
	cfg.Out = t.TempDir()
	pm, err := LoadOrTrain(cfg, false, Progress(nil))
	require.NoError(t, err)
	require.False(t, pm.Cached)
	require.False(t, pm.Dense)
	require.Equal(t, cfg.Prism, pm.Prism)
	dm, err := LoadOrTrain(cfg, true, Progress(nil))
	require.NoError(t, err)
	require.True(t, dm.Dense)
	require.NotEqual(t, pm.Dir, dm.Dir)
	for _, m := range []*Model{pm, dm} {
		for _, f := range []string{ConfigFile, TokenizerFile, WeightsFile, ResultFile} {
			require.FileExists(t, filepath.Join(m.Dir, f))
		}
		V := float64(cfg.Data.Tokenizer.VocabSize)
		require.Less(t, m.Run.Val.Perplexity, V/2, "40 updates beat the uniform guess")
		require.Greater(t, m.Run.Val.Perplexity, 1.0)
		require.Len(t, m.Run.History.Steps, cfg.Train.Steps)
	}
	require.Equal(t, pm.Run.NumParams-dm.Run.NumParams, cfg.Prism.NumPrototypes*cfg.Model.Width)

	bank, err := pm.Bank()
	require.NoError(t, err)
	D, K := cfg.Model.Width, cfg.Prism.NumPrototypes
	require.Len(t, bank, K*D)

	vals, err := pm.ValTensors(cfg.EvalBatches)
	require.NoError(t, err)
	st, err := pm.HeadStats(vals[:1])
	require.NoError(t, err)
	B, T, k := cfg.Data.BatchSize, cfg.Data.SeqLen, cfg.Prism.TopK
	require.Equal(t, B*T, st.N)
	require.Len(t, st.Z, st.N*D)
	require.Len(t, st.Indices, st.N*k)
	require.Len(t, st.Acts, st.N*k)
	require.Equal(t, int32(B-1), st.Seq[st.N-1])
	require.Equal(t, int32(T-1), st.Pos[st.N-1])
	for n := 0; n < st.N; n++ {
		seen := map[int32]bool{}
		for j := 0; j < k; j++ {
			i, a := st.Indices[n*k+j], st.Acts[n*k+j]
			require.False(t, seen[i], "token %d selects prototype %d twice", n, i)
			seen[i] = true
			require.True(t, i >= 0 && int(i) < K)
			require.True(t, a >= 0 && a <= 1+1e-6, "cosine activation %g outside [0, 1]", a)
		}
	}

	// Cached: loaded, same config, same perplexity on the same batches.
	again, err := LoadOrTrain(cfg, false, Progress(nil))
	require.NoError(t, err)
	require.True(t, again.Cached)
	require.Equal(t, pm.Dir, again.Dir)
	p1, err := pm.Perplexity(vals)
	require.NoError(t, err)
	p2, err := again.Perplexity(vals)
	require.NoError(t, err)
	require.InDelta(t, p1.Loss, p2.Loss, 1e-6)
	require.InDelta(t, pm.Run.Val.Loss, p2.Loss, 1e-6)

	// A changed head retrains into another folder; the dense run does not depend on the head.
	cfg2 := cfg
	cfg2.Prism.R1Weight = 1
	require.NotEqual(t, cfg.RunConfig(false).Hash(), cfg2.RunConfig(false).Hash())
	require.Equal(t, cfg.RunConfig(true).Hash(), cfg2.RunConfig(true).Hash())
}

// seedCheck returns, over the seeding tokens of a model trained one step past the warm-up, the mean of
// max_j cos(z_t, p_j) and of ‖z_t − ẑ_t‖²/‖z_t‖².
func seedCheck(t *testing.T, cfg Config) (coverage, rec float64) {
	t.Helper()
	m, err := LoadOrTrain(cfg, false, Progress(nil))
	require.NoError(t, err)
	batches, err := m.trainTensors(cfg.SeedBatches)
	require.NoError(t, err)
	st, err := m.HeadStats(batches)
	require.NoError(t, err)
	bank, err := m.Bank()
	require.NoError(t, err)
	D, k := st.D, st.TopK
	norm := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v * v
		}
		return math.Sqrt(s)
	}
	for n := 0; n < st.N; n++ {
		z := st.Z[n*D : (n+1)*D]
		best := -1.0
		for j := 0; j < st.K; j++ {
			p := bank[j*D : (j+1)*D]
			dot := 0.0
			for d := range z {
				dot += z[d] * p[d]
			}
			best = math.Max(best, dot/(norm(z)*norm(p)))
		}
		coverage += best / float64(st.N)
		r := append([]float64(nil), z...)
		for x := 0; x < k; x++ {
			j, a := int(st.Indices[n*k+x]), st.Acts[n*k+x]
			for d := range r {
				r[d] -= a * bank[j*D+d]
			}
		}
		rec += norm(r) * norm(r) / (norm(z) * norm(z)) / float64(st.N)
	}
	return coverage, rec
}

// TestLoadOrTrain_SeedsAndRescalesTheBank trains Tiny models one step past the warm-up: the bank then holds
// (nearly) the seeding tokens' hidden states, so they are covered with cosines near 1; rescaling makes the
// reconstruction error small, while the raw seeded bank reconstructs z about k times too large.
func TestLoadOrTrain_SeedsAndRescalesTheBank(t *testing.T) {
	cfg := Tiny()
	cfg.Train.Steps = cfg.ProtoWarmup + 1
	cov, rec := seedCheck(t, cfg)
	require.Greater(t, cov, 0.95)
	require.Less(t, rec, 0.5)
	cfg.RescaleSeed = false
	cov, recRaw := seedCheck(t, cfg)
	require.Greater(t, cov, 0.95)
	require.Greater(t, recRaw, 1.0, "k prototypes with cosines near 1 reconstruct z about k times too large")
}

// TestConfig_PresetsValidate checks the three presets and a few rejected values.
func TestConfig_PresetsValidate(t *testing.T) {
	for _, name := range []string{"tiny", "small", "paper"} {
		c, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, c.Validate(), name)
	}
	_, err := Preset("huge")
	require.Error(t, err)
	for key, val := range map[string]string{"proto_warmup": "40", "seed_batches": "0", "curvature.prototypes": "17",
		"prism.top_k": "0", "eval_batches": "-1"} {
		c := Tiny()
		require.NoError(t, run.Override(&c, key+"="+val))
		require.Error(t, c.Validate(), key)
	}
	require.Equal(t, prism.DefaultConfig().RecWeight, Small().Prism.RecWeight)
}
