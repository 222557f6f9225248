package dictionary

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/sae"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// sparseRows returns N rows of width D, each a non-negative combination of two of 2D fixed random directions: data
// a dictionary can explain.
func sparseRows(N, D int, seed uint64) []float64 {
	rng := run.RNG(seed, "dictionary/test")
	dirs := make([][]float64, 2*D)
	for i := range dirs {
		dirs[i] = make([]float64, D)
		for d := range D {
			dirs[i][d] = rng.NormFloat64()
		}
	}
	out := make([]float64, N*D)
	for n := range N {
		for range 2 {
			a, w := dirs[rng.IntN(len(dirs))], rng.Float64()
			for d := range D {
				out[n*D+d] += w * a[d]
			}
		}
	}
	return out
}

func testConfig() Config {
	m := sae.DefaultConfig()
	m.TargetL0 = 2
	t := fit.DefaultConfig()
	t.Steps, t.WarmupSteps, t.LR, t.WeightDecay, t.EvalEvery, t.CheckpointEvery = 150, 10, 3e-3, 0, 0, 0
	return Config{Model: m, Train: t, BatchSize: 64}
}

// TestTrain_ExplainsHeldOutRows trains on some rows and encodes others drawn the same way: the dictionary
// reconstructs the held-out rows far better than the zero code (FVU 1), and encoding is a function of the rows only.
func TestTrain_ExplainsHeldOutRows(t *testing.T) {
	const N, D = 512, 8
	rows := sparseRows(2*N, D, 1)
	train, held := rows[:N*D], rows[N*D:]
	backend := wbtest.Backend(t)
	dict, err := Train(backend, train, N, D, testConfig(), 3, "test")
	require.NoError(t, err)
	require.Equal(t, D, dict.D)
	codes, st, err := dict.Encode(held[:64*D], 64)
	require.NoError(t, err)
	require.Len(t, codes, 64*dict.F)
	require.Equal(t, dict.F, st.Features)
	_, trainSt, err := dict.Encode(train[:64*D], 64)
	require.Less(t, trainSt.FVU, 0.5)
	require.NoError(t, err)
	require.Less(t, st.FVU, 0.5)
	require.Positive(t, st.L0)
	again, _, err := dict.Encode(held[:64*D], 64)
	require.NoError(t, err)
	require.Equal(t, codes, again)

	_, err = Train(backend, train, N+1, D, testConfig(), 3, "test")
	require.ErrorContains(t, err, "rows of width")
	bad := testConfig()
	bad.BatchSize = 0
	_, err = Train(backend, train, N, D, bad, 3, "test")
	require.ErrorContains(t, err, "batch_size=0")
}
