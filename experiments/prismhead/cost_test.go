package prismhead

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
)

// TestCost_TinyIsTheHandCount: a dense and a PRISM model per tuning rate, then per replicate seed a dense model
// and one PRISM model per distinct (λ_1, λ_2) of the sweep and the configured pair.
func TestCost_TinyIsTheHandCount(t *testing.T) {
	c := Tiny()
	got := c.Cost()
	pairs := len(c.Curvature.Sweep)
	if p := c.Prism; p.R1Weight != p.R2Weight || !slices.Contains(c.Curvature.Sweep, p.R1Weight) {
		pairs++
	}
	dense := len(c.Tune.LRs) + len(c.Seeds)
	prism := len(c.Tune.LRs) + len(c.Seeds)*pairs
	require.Equal(t, dense+prism, got.Runs)
	tokens := c.Train.Steps * c.Data.BatchSize * c.Data.SeqLen
	require.Equal(t, int64((dense+prism)*tokens), got.TrainTokens)
	m, T := c.Model, c.Data.SeqLen
	want := 3 * float64(tokens) * (float64(dense)*decoder.FLOPsPerToken(m, T) +
		float64(prism)*decoder.PrismFLOPsPerToken(m, c.Prism.Config, T))
	require.InEpsilon(t, want, got.TrainFLOPs, 1e-12)
	require.Equal(t, decoder.PrismNumParams(m, c.Prism.Config), got.Params)
}

func TestCost_GrowsWithSeedsAndSteps(t *testing.T) {
	base := Tiny().Cost()
	c := Tiny()
	c.Seeds = append(c.Seeds, 7)
	require.Greater(t, c.Cost().Runs, base.Runs)
	c = Tiny()
	c.Train.Steps *= 2
	require.InEpsilon(t, 2*base.TrainFLOPs, c.Cost().TrainFLOPs, 1e-12)
}

// TestCost_SmallCountsTheProtocolsModels: per corpus (synthetic and Brown), a dense and a PRISM model at each of 3
// tuning rates, then per replicate seed (3) a dense model and a PRISM model per sweep weight (3; the configured
// λ = 0.1 is one of them): 6 + 3 + 9 = 18 per corpus, the protocol's count (presets, Small). The corpus changes no
// FLOPs: the Brown half costs what the synthetic half does.
func TestCost_SmallCountsTheProtocolsModels(t *testing.T) {
	c := Small()
	got := c.Cost()
	require.Equal(t, 2*18, got.Runs)
	c.Corpora = nil
	one := c.Cost()
	require.Equal(t, 18, one.Runs)
	require.InEpsilon(t, 2*one.TrainFLOPs, got.TrainFLOPs, 1e-12)
	require.Equal(t, int64(36*c.Train.Steps*c.Data.BatchSize*c.Data.SeqLen), got.TrainTokens)
}
