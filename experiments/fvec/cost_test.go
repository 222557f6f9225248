package fvec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCost_TinyIsTheHandCount: per seed, 4 tree rows (A, A′, B, C) at M ∈ {1, 2} and 3 Gaussian rows (A, B, C) at
// M ∈ {2, 6}, each model train.steps = 150 steps of 32 contexts of 32 tokens.
func TestCost_TinyIsTheHandCount(t *testing.T) {
	c := Tiny()
	got := c.Cost()
	runs := c.Sweep.Seeds * (4*len(c.Sweep.TreeM) + 3*len(c.Sweep.GaussianM))
	require.Equal(t, 28, runs)
	require.Equal(t, runs, got.Runs)
	require.Equal(t, int64(runs*c.Train.Steps*c.Data.Batch*c.Data.Tokens), got.TrainTokens)
	require.Positive(t, got.TrainFLOPs)
	require.Positive(t, got.EvalFLOPs)
}

func TestCost_GrowsWithSeedsAndSteps(t *testing.T) {
	base := Tiny().Cost()
	c := Tiny()
	c.Sweep.Seeds++
	require.Equal(t, base.Runs*3/2, c.Cost().Runs)
	c = Tiny()
	c.Train.Steps *= 2
	require.InEpsilon(t, 2*base.TrainFLOPs, c.Cost().TrainFLOPs, 1e-12)
	c = Tiny()
	c.Model.Hidden *= 2
	require.Greater(t, c.Cost().TrainFLOPs, base.TrainFLOPs)
}
