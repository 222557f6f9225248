package steering

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/steer"
)

// TestHeldOutDoc_FractionAndPairedSE checks the document split's fraction (within 4 standard errors over 20,000
// documents) and pairedSE on a case computed by hand.
func TestHeldOutDoc_FractionAndPairedSE(t *testing.T) {
	const n, f = 20000, 0.3
	k := 0
	for d := range n {
		if heldOutDoc(d, 5, f) {
			k++
		}
	}
	require.InDelta(t, f, float64(k)/n, 4*math.Sqrt(f*(1-f)/n))
	// Differences (1, 0, 0, -1): mean 0, sample variance 2/3, SE √(2/3/4).
	se := pairedSE([]bool{false, true, false, true}, []bool{true, true, false, false})
	require.InDelta(t, math.Sqrt(2.0/3/4), se, 1e-15)
}

// TestTInterval checks the Student-t interval against the tabulated quantile t_{0.975, 2} = 4.302653 for three
// values, and the degenerate cases.
func TestTInterval(t *testing.T) {
	in := tInterval([]float64{1, 2, 3})
	se := 1 / math.Sqrt(3) // sample sd 1
	require.InDelta(t, 2, in.Mean, 1e-15)
	require.InDelta(t, se, in.SE, 1e-15)
	require.InDelta(t, 2-4.302653*se, in.Lo, 1e-6)
	require.InDelta(t, 2+4.302653*se, in.Hi, 1e-6)
	require.Equal(t, 3, in.N)
	require.Equal(t, Interval{Mean: 5, Lo: 5, Hi: 5, N: 1}, tInterval([]float64{5}))
	require.Equal(t, Interval{}, tInterval(nil))
}

// handModels builds two models with two splits each and two controllers on one task: the prototype controller
// gains 0.04 and 0.06 on model 1's splits and 0.02, 0.04 on model 2's; the bias controller 0.01 everywhere.
func handModels() []ModelRun {
	run := func(c string, before, after float64) ControllerRun {
		return ControllerRun{Controller: c, MeanBefore: before, MeanAfter: after, Tasks: []TaskResult{
			{Task: steer.TaskNumber, Before: before, After: after, Chance: 0.5, ActiveWeights: 2}}}
	}
	model := func(seed uint64, g1, g2 float64) ModelRun {
		return ModelRun{Seed: seed, Splits: []SplitRun{
			{Seed: 31, Controllers: []ControllerRun{run(ControllerPrototype, 0.5, 0.5+g1),
				run(ControllerBias, 0.5, 0.51)}},
			{Seed: 32, Controllers: []ControllerRun{run(ControllerPrototype, 0.6, 0.6+g2),
				run(ControllerBias, 0.6, 0.61)}},
		}}
	}
	return []ModelRun{model(1, 0.04, 0.06), model(2, 0.02, 0.04)}
}

// TestSummarise_AveragesSplitsWithinModels: each model contributes the mean over its splits (0.05 and 0.03), the
// interval runs over the two models, and the paired difference to the bias controller is 0.04 and 0.02.
func TestSummarise_AveragesSplitsWithinModels(t *testing.T) {
	sums := summarise(handModels(), []string{ControllerPrototype, ControllerBias})
	require.Len(t, sums, 2)
	p, b := sums[0], sums[1]
	require.InDelta(t, 0.04, p.Gain.Mean, 1e-12)
	require.InDelta(t, 0.01, p.Gain.SE, 1e-12) // |0.05 − 0.03| / 2
	require.Equal(t, 2, p.Gain.N)
	require.InDelta(t, 0.55, p.Before.Mean, 1e-12)
	require.Zero(t, p.VsPrototype.Mean)
	require.InDelta(t, 0.01, b.Gain.Mean, 1e-12)
	require.InDelta(t, 0.03, b.VsPrototype.Mean, 1e-12)
	require.InDelta(t, 0.01, b.VsPrototype.SE, 1e-12)
	require.Len(t, p.Tasks, 1)
	require.InDelta(t, 0.04, p.Tasks[0].Gain.Mean, 1e-12)
	require.InDelta(t, 0.5, p.Tasks[0].Chance, 1e-15)
	require.InDelta(t, 2, p.ActiveWeights, 1e-15)
}

// TestCharts renders the figures of a constructed result (no training needed).
func TestCharts(t *testing.T) {
	sr := &Result{Summaries: summarise(handModels(), []string{ControllerPrototype, ControllerBias})}
	opt := AccuracyChart(sr).RenderSnippet().Option
	for _, s := range []string{"frozen PRISM model", "with bias controller", "prototype +4.0", "chance", "number"} {
		require.Contains(t, opt, s)
	}
	opt = GainChart(sr).RenderSnippet().Option
	for _, s := range []string{`"name":"prototype"`, "gain (points)", "mean"} {
		require.Contains(t, opt, s)
	}
}
