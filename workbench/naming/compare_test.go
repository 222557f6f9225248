package naming

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTopKOverlapAndTop1(t *testing.T) {
	p, q := []float64{0.4, 0.3, 0.2, 0.1}, []float64{0.1, 0.2, 0.3, 0.4}
	require.Zero(t, TopKOverlap(p, q, 2))
	require.InDelta(t, 2.0/3, TopKOverlap(p, q, 3), 1e-15)
	require.Equal(t, 1.0, TopKOverlap(p, p, 2))
	require.False(t, Top1Agree(p, q))
	require.True(t, Top1Agree(p, []float64{0.9, 0.05, 0.03, 0.02}))
}

func TestSpearmanTopK(t *testing.T) {
	p, q := []float64{0.4, 0.3, 0.2, 0.1}, []float64{0.1, 0.2, 0.3, 0.4}
	require.InDelta(t, -1, SpearmanTopK(p, q, 4), 1e-15)
	require.InDelta(t, 1, SpearmanTopK(p, []float64{0.5, 0.25, 0.15, 0.1}, 4), 1e-15)
	// k = 1: union {0, 3}; p ranks (2, 1), q ranks (1, 2): −1.
	require.InDelta(t, -1, SpearmanTopK(p, q, 1), 1e-15)
	// Union {0, 1, 2} (k = 2, q = (0.5, 0.1, 0.4)): p ranks (3, 2, 1), q ranks (3, 1, 2): ρ = 0.5.
	require.InDelta(t, 0.5, SpearmanTopK([]float64{0.5, 0.3, 0.2}, []float64{0.5, 0.1, 0.4}, 2), 1e-15)
	require.Zero(t, SpearmanTopK([]float64{1, 0}, []float64{1, 0}, 1), "a union of one token has no ranking")
}
