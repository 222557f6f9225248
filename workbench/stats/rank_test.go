package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRanks_TiesShareTheirAverage: a tie at sorted positions 2–3 gets (2 + 3)/2; all equal gets (1 + n)/2.
func TestRanks_TiesShareTheirAverage(t *testing.T) {
	require.Equal(t, []float64{1, 2.5, 2.5, 4}, Ranks([]float64{-1, 2, 2, 5}))
	require.Equal(t, []float64{4, 2, 2, 2, 5}, Ranks([]float64{3, 1, 1, 1, 9}))
	require.Equal(t, []float64{2, 2, 2}, Ranks([]float64{7, 7, 7}))
	require.Empty(t, Ranks(nil))
}

// TestPearson_HandCases: x = (1, 2, 3), y = (1, 3, 2): Σdx·dy = 1, Σdx² = Σdy² = 2, r = ½; a line gives ±1.
func TestPearson_HandCases(t *testing.T) {
	require.InDelta(t, 0.5, Pearson([]float64{1, 2, 3}, []float64{1, 3, 2}), 1e-15)
	require.InDelta(t, -1, Pearson([]float64{1, 2, 3, 4}, []float64{7, 5, 3, 1}), 1e-15)
	require.True(t, math.IsNaN(Pearson([]float64{1, 2, 3}, []float64{5, 5, 5})), "a constant has no correlation")
	require.True(t, math.IsNaN(Pearson([]float64{1}, []float64{2})))
	require.Panics(t, func() { Pearson([]float64{1, 2}, []float64{1}) })
}

// TestSpearman_HandCases: without ties ρ = 1 − 6Σd²/(n(n²−1)); with ties, the Pearson correlation of the average
// ranks: x = (1, 2, 2, 3) has ranks (1, 2.5, 2.5, 4), y = (1, 2, 3, 4): Σdx·dy = 4.5, Σdx² = 4.5, Σdy² = 5, ρ = √0.9.
func TestSpearman_HandCases(t *testing.T) {
	require.InDelta(t, 1-6*2.0/60, Spearman([]float64{1, 2, 3, 4}, []float64{10, 30, 20, 40}), 1e-15)
	require.InDelta(t, math.Sqrt(0.9), Spearman([]float64{1, 2, 2, 3}, []float64{1, 2, 3, 4}), 1e-15)
	require.InDelta(t, 1, Spearman([]float64{1, 2, 3}, []float64{1, 8, 27}), 1e-15, "monotone, not linear")
	require.True(t, math.IsNaN(Spearman([]float64{1, 2, 3}, []float64{5, 5, 5})))
}

// TestTopKAndOverlap: ties go to the lower index; k is clipped; Overlap is |a ∩ b|/k.
func TestTopKAndOverlap(t *testing.T) {
	require.Equal(t, []int{1, 2, 4}, TopK([]float64{1, 3, 3, 0, 2}, 3))
	require.Equal(t, []int{1, 0}, TopK([]float64{0.3, 0.5}, 5))
	require.Empty(t, TopK([]float64{1, 2}, 0))
	require.Equal(t, 0.5, Overlap([]int{1, 2, 3, 4}, []int{4, 5, 1, 6}))
	require.Equal(t, 1.0, Overlap([]int{3, 1}, []int{1, 3}))
	require.Zero(t, Overlap(nil, nil))
	require.Panics(t, func() { Overlap([]int{1}, nil) })
}

// TestSpearmanTopK_HandCases: ρ over the union of the two top-k index sets.
func TestSpearmanTopK_HandCases(t *testing.T) {
	p, q := []float64{0.4, 0.3, 0.2, 0.1}, []float64{0.1, 0.2, 0.3, 0.4}
	require.InDelta(t, -1, SpearmanTopK(p, q, 4), 1e-15)
	// k = 1: union {0, 3}; p ranks (2, 1), q ranks (1, 2): −1.
	require.InDelta(t, -1, SpearmanTopK(p, q, 1), 1e-15)
	// k = 2, q = (0.5, 0.1, 0.4): union {0, 1, 2}; p ranks (3, 2, 1), q ranks (3, 1, 2): d = (0, 1, −1),
	// ρ = 1 − 6·2/(3·8) = ½.
	require.InDelta(t, 0.5, SpearmanTopK([]float64{0.5, 0.3, 0.2}, []float64{0.5, 0.1, 0.4}, 2), 1e-15)
	require.True(t, math.IsNaN(SpearmanTopK([]float64{1, 0}, []float64{1, 0}, 1)), "a union of one index")
	// Only the union is ranked: x = (3, 2, 1, 0), y = (2, 3, 1, 9), k = 2 gives U = {0, 1, 3}, x ranks (3, 2, 1),
	// y ranks (1, 2, 3): −1; over all four indices d = (2, 0, 1, −3) and ρ = 1 − 6·14/60 = −0.4.
	x, y := []float64{3, 2, 1, 0}, []float64{2, 3, 1, 9}
	require.InDelta(t, -1, SpearmanTopK(x, y, 2), 1e-15)
	require.InDelta(t, -0.4, Spearman(x, y), 1e-15)
	require.Panics(t, func() { SpearmanTopK([]float64{1, 2}, []float64{1}, 1) })
}
