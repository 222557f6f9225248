package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQuantile_HandCase(t *testing.T) {
	x := []float64{3, 1, 2, 4}
	// Sorted 1, 2, 3, 4; h = 3q: q = ¼ → 1 + 0.75·(2−1), ½ → 2.5, ¾ → 3 + 0.25·(4−3).
	require.Equal(t, 1.75, Quantile(x, 0.25))
	require.Equal(t, 2.5, Quantile(x, 0.5))
	require.Equal(t, 3.25, Quantile(x, 0.75))
	require.Equal(t, []float64{3, 1, 2, 4}, x, "not reordered")
	require.True(t, math.IsNaN(Quantile(nil, 0.5)))
	require.Equal(t, Spread{N: 4, Min: 1, Q1: 1.75, Median: 2.5, Q3: 3.25, Max: 4}, NewSpread(x))
	require.Equal(t, Spread{N: 1, Min: 7, Q1: 7, Median: 7, Q3: 7, Max: 7}, NewSpread([]float64{7}))
}
