package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMoments_HandCase: x = (1, 2, 3, 4): x̄ = 5/2, Σ(x − x̄)² = 2·(3/2)² + 2·(1/2)² = 5, s² = 5/3, se = √(5/3 / 4).
func TestMoments_HandCase(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	require.InDelta(t, 2.5, Mean(x), 1e-15)
	require.InDelta(t, 5.0/3, Variance(x), 1e-15)
	require.InDelta(t, math.Sqrt(5.0/3), StdDev(x), 1e-15)
	m, se := MeanSE(x)
	require.InDelta(t, 2.5, m, 1e-15)
	require.InDelta(t, math.Sqrt(5.0/12), se, 1e-15)
	require.Equal(t, []float64{1, 2, 3, 4}, x, "inputs are not modified")
}

// TestMoments_ShortInputs: the mean of nothing, and the spread of one value, are undefined (NaN).
func TestMoments_ShortInputs(t *testing.T) {
	require.True(t, math.IsNaN(Mean(nil)))
	require.True(t, math.IsNaN(Variance([]float64{7})))
	require.True(t, math.IsNaN(StdDev([]float64{7})))
	m, se := MeanSE([]float64{7})
	require.Equal(t, 7.0, m)
	require.True(t, math.IsNaN(se), "n = 1: no standard error")
	m, se = MeanSE(nil)
	require.True(t, math.IsNaN(m) && math.IsNaN(se))
	// n = 2: s² = (a − b)²/2, se = |a − b|/2.
	m, se = MeanSE([]float64{3, 8})
	require.InDelta(t, 5.5, m, 1e-15)
	require.InDelta(t, 2.5, se, 1e-15)
}

// TestMedian_OddEvenEmpty: the middle value for an odd count, the mean of the two middle values for an even one.
func TestMedian_OddEvenEmpty(t *testing.T) {
	require.Equal(t, 2.0, Median([]float64{3, 1, 2}))
	x := []float64{4, 1, 3, 2}
	require.Equal(t, 2.5, Median(x)) // (2 + 3)/2
	require.Equal(t, []float64{4, 1, 3, 2}, x, "Median does not reorder its input")
	require.Equal(t, -1.0, Median([]float64{-1}))
	require.True(t, math.IsNaN(Median(nil)))
}

// TestMeanCI_ConstantAndSpread: a constant sample has a zero-width interval at its value; otherwise the interval
// holds the mean and lies within the range of the data. NaNs are skipped.
func TestMeanCI_ConstantAndSpread(t *testing.T) {
	m, lo, hi := MeanCI([]float64{2, 2, 2, math.NaN()}, 0.95, 500, 1)
	require.Equal(t, []float64{2, 2, 2}, []float64{m, lo, hi})
	m, lo, hi = MeanCI([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 0.95, 2000, 1)
	require.Equal(t, 4.5, m)
	require.True(t, lo < m && m < hi && lo >= 1 && hi <= 8, "[%g, %g]", lo, hi)
	m2, lo2, hi2 := MeanCI([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 0.95, 2000, 1)
	require.Equal(t, []float64{m, lo, hi}, []float64{m2, lo2, hi2}, "the same seed gives the same interval")
	m, lo, hi = MeanCI([]float64{5}, 0.95, 100, 1)
	require.Equal(t, []float64{5, 5, 5}, []float64{m, lo, hi})
	m, _, _ = MeanCI([]float64{math.NaN()}, 0.95, 100, 1)
	require.True(t, math.IsNaN(m))
}

func TestMeanSEOrZero(t *testing.T) {
	m, se := MeanSEOrZero(nil)
	require.Equal(t, [2]float64{0, 0}, [2]float64{m, se})
	m, se = MeanSEOrZero([]float64{2.5})
	require.Equal(t, [2]float64{2.5, 0}, [2]float64{m, se})
	m, se = MeanSEOrZero([]float64{1, 3})
	wm, wse := MeanSE([]float64{1, 3})
	require.Equal(t, [2]float64{wm, wse}, [2]float64{m, se})
	require.Equal(t, 1.0, se) // s² = 2, √(2/2)
	_, se = MeanSEOrZero([]float64{1, math.NaN()})
	require.True(t, math.IsNaN(se), "a NaN value is not hidden")
}
