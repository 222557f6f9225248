package lm

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/run"
)

// TestHeadStats_ShapesAndRouting reads the head's per-token outputs of a trained tiny PRISM model on one validation
// batch: shapes, the sequence and position of the last token, k distinct prototypes per token, cosine activations
// in [0, 1]; and the bank's size.
func TestHeadStats_ShapesAndRouting(t *testing.T) {
	cfg := tinyPrism()
	m, err := Train(cfg, "", run.Progress(nil))
	require.NoError(t, err)
	bank, err := m.Bank()
	require.NoError(t, err)
	D, K, k := cfg.Model.Width, cfg.Prism.NumPrototypes, cfg.Prism.TopK
	require.Len(t, bank, K*D)
	d, err := m.Data()
	require.NoError(t, err)
	vals, err := d.ValTensors(1)
	require.NoError(t, err)
	st, err := m.HeadStats(vals[:1])
	require.NoError(t, err)
	B, T := cfg.Data.BatchSize, cfg.Data.SeqLen
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
	dense, err := Train(tinyConfig(), "", run.Progress(nil))
	require.NoError(t, err)
	_, err = dense.Bank()
	require.ErrorContains(t, err, "no prototype bank")
	w, err := dense.Unembed()
	require.NoError(t, err)
	require.Len(t, w, cfg.Data.Tokenizer.VocabSize*D)
}

// seedCheck returns, over the seeding tokens of a model trained one step past the warm-up, the mean of
// max_j cos(z_t, p_j) and of ‖z_t − ẑ_t‖²/‖z_t‖².
func seedCheck(t *testing.T, cfg Config) (coverage, rec float64) {
	t.Helper()
	m, err := Train(cfg, "", run.Progress(nil))
	require.NoError(t, err)
	batches, err := m.TrainTensors(cfg.Prism.SeedBatches)
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

// TestTrain_SeedsAndRescalesTheBank trains tiny PRISM models one step past the warm-up: the bank then holds
// (nearly) the seeding tokens' hidden states, so they are covered with cosines near 1; rescaling makes the
// reconstruction error small, while the raw seeded bank reconstructs z about k times too large.
func TestTrain_SeedsAndRescalesTheBank(t *testing.T) {
	cfg := tinyPrism()
	cfg.Train.Steps = cfg.Prism.ProtoWarmup + 1
	cov, rec := seedCheck(t, cfg)
	require.Greater(t, cov, 0.95)
	require.Less(t, rec, 0.5)
	cfg.Prism.RescaleSeed = false
	cov, recRaw := seedCheck(t, cfg)
	require.Greater(t, cov, 0.95)
	require.Greater(t, recRaw, 1.0, "k prototypes with cosines near 1 reconstruct z about k times too large")
}
