package attribution

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
)

// TestCost_TinyIsTheHandCount: model_seeds attributed models, each with lds_subsets retrained models of the same
// recipe.
func TestCost_TinyIsTheHandCount(t *testing.T) {
	c := Tiny()
	a := c.Attribution
	got := c.Cost()
	runs := a.ModelSeeds * (1 + a.LDSSubsets) // 2 × (1 + 4)
	require.Equal(t, 10, runs)
	require.Equal(t, runs, got.Runs)
	tokens := c.Train.Steps * c.Data.BatchSize * c.Data.SeqLen
	require.Equal(t, int64(runs*tokens), got.TrainTokens)
	fwd := decoder.PrismFLOPsPerToken(c.Model, c.Prism.Config, c.Data.SeqLen)
	require.InEpsilon(t, 3*float64(runs*tokens)*fwd, got.TrainFLOPs, 1e-12)
}

func TestCost_GrowsWithSeedsAndSubsets(t *testing.T) {
	base := Tiny().Cost()
	c := Tiny()
	c.Attribution.ModelSeeds++
	require.Equal(t, base.Runs+1+c.Attribution.LDSSubsets, c.Cost().Runs)
	c = Tiny()
	c.Attribution.LDSSubsets *= 2
	require.Greater(t, c.Cost().TrainFLOPs, base.TrainFLOPs)
	c = Tiny()
	c.Attribution.TrainSeqs = 100
	require.Greater(t, c.Cost().EvalFLOPs, base.EvalFLOPs)
}
