package fvec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/linattn"
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

// TestStepFLOPs_ModelC is model C's count written out: keys 2·N·D·M per context (unshared), φ 2·N·M, readout
// 2·D·M.
func TestStepFLOPs_ModelC(t *testing.T) {
	mc := linattn.Config{Kind: linattn.KindC, Measurements: 3}
	N, D, B := 5, 7, 2
	require.Equal(t, float64(B*(2*N*D*3+2*N*3+2*D*3)), stepFLOPs(mc, D, N, B, false))
	require.Equal(t, float64(2*N*D*3+B*(2*N*3+2*D*3)), stepFLOPs(mc, D, N, B, true))
	for _, k := range []string{linattn.KindA, linattn.KindB, linattn.KindAPrime} {
		mc := linattn.Config{Kind: k, Measurements: 3, Hidden: 4}
		require.Less(t, stepFLOPs(mc, D, N, B, true), stepFLOPs(mc, D, N, B, false)+1e-9, k)
		require.Greater(t, stepFLOPs(mc, D, N, 2*B, false), stepFLOPs(mc, D, N, B, false), k)
	}
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
