package dictionary

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/wbtest"
)

// TestDirections_ReconstructTheGraphsFVU rebuilds the reconstruction x̂ = Σ_j f_j d_j + b_dec in float64 from the
// codes of Encode, Directions and Bias, and checks the fraction of variance unexplained written out from it against
// the one the SAE graph reports; the directions have unit norm up to ε.
func TestDirections_ReconstructTheGraphsFVU(t *testing.T) {
	const N, D = 256, 6
	rows := sparseRows(2*N, D, 2)
	dict, err := Train(wbtest.Backend(t), rows[:N*D], N, D, testConfig(), 5, "test")
	require.NoError(t, err)
	held := rows[N*D:]
	codes, st, err := dict.Encode(held, N)
	require.NoError(t, err)
	dirs, err := dict.Directions()
	require.NoError(t, err)
	require.Len(t, dirs, dict.F*D)
	bias, err := dict.Bias()
	require.NoError(t, err)
	require.Len(t, bias, D)
	for j := range dict.F {
		ss := 0.0
		for _, x := range dirs[j*D : (j+1)*D] {
			ss += x * x
		}
		require.InDelta(t, 1, ss, 1e-6, "direction %d", j)
	}
	mean := make([]float64, D)
	for n := range N {
		for i := range D {
			mean[i] += held[n*D+i] / N
		}
	}
	sq, tot := 0.0, 0.0
	for n := range N {
		for i := range D {
			xHat := bias[i]
			for j := range dict.F {
				xHat += codes[n*dict.F+j] * dirs[j*D+i]
			}
			x := held[n*D+i]
			sq += (x - xHat) * (x - xHat)
			tot += (x - mean[i]) * (x - mean[i])
		}
	}
	require.InDelta(t, sq/tot, st.FVU, 1e-4*(1+st.FVU), "the graph runs in float32")
}
