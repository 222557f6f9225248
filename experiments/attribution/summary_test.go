package attribution

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/stats"
	"github.com/protolab/protolab/workbench/wbtest"
)

// TestLDSIntervals_PerfectReversedAndPaired: predictions that order the subsets exactly as the negated losses have
// LDS 1 in every resample, reversed ones −1, and a method's difference from itself is 0; a noisy method's interval
// holds its mean.
func TestLDSIntervals_PerfectReversedAndPaired(t *testing.T) {
	rng := wbtest.RNG(7)
	const Q, M = 6, 9
	var models []*ldsData
	for range 2 {
		d := &ldsData{pred: map[string][][]float64{}}
		for m := 0; m < M; m++ {
			row := make([]float64, Q)
			for q := range row {
				row[q] = rng.NormFloat64()
			}
			d.loss = append(d.loss, row)
		}
		for q := 0; q < Q; q++ {
			perfect, reversed, noisy := make([]float64, M), make([]float64, M), make([]float64, M)
			for m := 0; m < M; m++ {
				perfect[m], reversed[m] = -3*d.loss[m][q]+1, d.loss[m][q]
				noisy[m] = -d.loss[m][q] + rng.NormFloat64()
			}
			d.pred["perfect"] = append(d.pred["perfect"], perfect)
			d.pred["reversed"] = append(d.pred["reversed"], reversed)
			d.pred["noisy"] = append(d.pred["noisy"], noisy)
		}
		models = append(models, d)
	}
	lds, diff := ldsIntervals(models, []string{"perfect", "reversed", "noisy", "absent"}, "perfect", 200, 1)
	require.NotContains(t, lds, "absent")
	require.Equal(t, Interval{1, 1, 1}, lds["perfect"])
	require.Equal(t, Interval{-1, -1, -1}, lds["reversed"])
	require.Equal(t, Interval{0, 0, 0}, diff["perfect"])
	n := lds["noisy"]
	require.True(t, n.Lo <= n.Mean && n.Mean <= n.Hi && n.Lo < n.Hi, "%+v", n)
	require.InDelta(t, n.Mean-1, diff["noisy"].Mean, 1e-12)
	_, noBase := ldsIntervals(models, []string{"noisy"}, "", 10, 1)
	require.Empty(t, noBase)
}

// TestTwoStageMean checks the two-stage bootstrap of a mean: constant values give a point interval, and the
// interval of varying values holds the mean of the model means.
func TestTwoStageMean(t *testing.T) {
	require.Equal(t, Interval{0.5, 0.5, 0.5}, twoStageMean([][]float64{{0.5, 0.5}, {0.5}}, 100, 1))
	iv := twoStageMean([][]float64{{0, 1, 1, 0}, {1, 1, 1, 1}}, 500, 2)
	require.InDelta(t, 0.75, iv.Mean, 1e-12)
	require.True(t, 0 <= iv.Lo && iv.Lo < iv.Mean && iv.Mean < iv.Hi && iv.Hi <= 1, "%+v", iv)
	require.Equal(t, Interval{0.75, 0.75, 0.75}, twoStageMean([][]float64{{0, 1, 1, 0}, {1, 1, 1, 1}}, 0, 2))
}

// TestQuantile checks the interpolated quantiles latencyOf takes from stats.Quantile on hand cases, and the latency
// of hand timings.
func TestQuantile(t *testing.T) {
	x := []float64{3, 1, 2, 4}
	require.Equal(t, 1.75, stats.Quantile(x, 0.25))
	require.Equal(t, 2.5, stats.Quantile(x, 0.5))
	require.Equal(t, 4.0, stats.Quantile(x, 1))
	require.Equal(t, []float64{3, 1, 2, 4}, x, "x is not reordered")
	require.Equal(t, 7.0, stats.Quantile([]float64{7}, 0.75))
	require.True(t, math.IsNaN(stats.Quantile(nil, 0.5)), "latencyOf reads no quantile of no timings")
	require.Equal(t, Latency{}, latencyOf(nil, nil))
	l := latencyOf([]float64{0.003, 0.001, 0.002}, []float64{0.001, 0.001, 0.004})
	require.Equal(t, Latency{Median: 2, Q1: 1.5, Q3: 2.5, CPU: 1, Repeats: 3}, roundLatency(l))
	require.True(t, math.IsNaN(meanFinite(nil)))
}

func roundLatency(l Latency) Latency {
	r := func(x float64) float64 { return math.Round(x*1e9) / 1e9 }
	return Latency{Median: r(l.Median), Q1: r(l.Q1), Q3: r(l.Q3), CPU: r(l.CPU), Repeats: l.Repeats}
}
