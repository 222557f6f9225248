package steering

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
)

// TestCost_TinyIsTheHandCount: a PRISM model per seed and, with the sae controller, its dense baseline.
func TestCost_TinyIsTheHandCount(t *testing.T) {
	c := Tiny()
	require.True(t, slices.Contains(c.Steering.Controllers, ControllerSAE))
	got := c.Cost()
	require.Equal(t, 2*len(c.Seeds), got.Runs)
	tokens := c.Train.Steps * c.Data.BatchSize * c.Data.SeqLen
	require.Equal(t, int64(2*len(c.Seeds)*tokens), got.TrainTokens)
	T := c.Data.SeqLen
	want := 3 * float64(len(c.Seeds)*tokens) * (decoder.PrismFLOPsPerToken(c.Model, c.Prism.Config, T) +
		decoder.FLOPsPerToken(c.Model, T))
	require.InEpsilon(t, want, got.TrainFLOPs, 1e-12)
}

func TestCost_GrowsWithSeedsAndSteps(t *testing.T) {
	base := Tiny().Cost()
	c := Tiny()
	c.Seeds = append(c.Seeds, 9)
	require.Equal(t, base.Runs+2, c.Cost().Runs)
	c = Tiny()
	c.Steering.Controllers = []string{ControllerPrototype}
	require.Equal(t, base.Runs/2, c.Cost().Runs, "no dense baselines without the sae controller")
	c = Tiny()
	c.Train.Steps *= 2
	require.InEpsilon(t, 2*base.TrainFLOPs, c.Cost().TrainFLOPs, 1e-12)
}

// TestCost_SmallIsTheHandCount: protocol v2 trains five lm.PrismSmallV2 models and their five dense baselines, each
// 500 updates of 16×64 tokens: 10 runs and 10 × 512,000 = 5,120,000 training tokens.
func TestCost_SmallIsTheHandCount(t *testing.T) {
	c := Small()
	got := c.Cost()
	require.Equal(t, 10, got.Runs)
	require.Equal(t, int64(5_120_000), got.TrainTokens)
	T := 64
	want := 3 * 5 * 512_000 * (decoder.PrismFLOPsPerToken(c.Model, c.Prism.Config, T) + decoder.FLOPsPerToken(c.Model, T))
	require.InEpsilon(t, want, got.TrainFLOPs, 1e-12)
}
