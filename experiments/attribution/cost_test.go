package attribution

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/prism"
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

// TestCost_SmallIsTheHandCount: protocol v2 (docs/PROTOCOL.md) on 2 corpora × 3 attributed models × (1 + the spec's
// M = 50 retrainings) = 306 runs of the same recipe, every one of 400 updates of 8×32 tokens.
func TestCost_SmallIsTheHandCount(t *testing.T) {
	c := Small()
	got := c.Cost()
	require.Equal(t, 2*3*(1+50), got.Runs)
	require.Equal(t, int64(306*400*8*32), got.TrainTokens)
	fwd := decoder.PrismFLOPsPerToken(c.Model, c.Prism.Config, c.Data.SeqLen)
	require.InEpsilon(t, 3*float64(306*400*8*32)*fwd, got.TrainFLOPs, 1e-12)
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
	c.Attribution.Corpora = []string{"synthetic", "brown"}
	require.Equal(t, 2*base.Runs, c.Cost().Runs)
	c = Tiny()
	c.Attribution.TrainSeqs = 100
	require.Greater(t, c.Cost().EvalFLOPs, base.EvalFLOPs)
}

// TestCostModel_PaperShape checks that the Paper preset's shape is read from its config: K = 4096 above
// direct_max_k, so the full-curvature methods are costed with CG.
func TestCostModel_PaperShape(t *testing.T) {
	p := Paper()
	s := shapeOf(p, p.Attribution.TrainSeqs, 10)
	require.Equal(t, p.Prism.NumPrototypes, s.K)
	require.Equal(t, p.Data.SeqLen-p.Attribution.PromptTokens, s.Completion)
	require.Greater(t, s.K, s.DirectMaxK)
	c := prism.NewCostModel("paper", s)
	for _, name := range []string{prism.MethodExactCE, prism.MethodPrismFullC, prism.MethodReference} {
		require.Equal(t, "cg", c.Method(name).Solver, name)
	}
	require.Len(t, c.Methods, len(prism.Methods))
}
