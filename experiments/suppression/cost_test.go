package suppression

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
)

// TestCost_TinyIsTheHandCount: per seed the recipe model and the spec-range bank (spec_range_k prototypes).
func TestCost_TinyIsTheHandCount(t *testing.T) {
	c := Tiny()
	require.Positive(t, c.SpecRangeK)
	got := c.Cost()
	n := len(c.Seeds)
	require.Equal(t, 2*n, got.Runs)
	tokens := c.Train.Steps * c.Data.BatchSize * c.Data.SeqLen
	require.Equal(t, int64(2*n*tokens), got.TrainTokens)
	spec := c.Prism.Config
	spec.NumPrototypes = c.SpecRangeK
	T := c.Data.SeqLen
	want := 3 * float64(n*tokens) * (decoder.PrismFLOPsPerToken(c.Model, c.Prism.Config, T) +
		decoder.PrismFLOPsPerToken(c.Model, spec, T))
	require.InEpsilon(t, want, got.TrainFLOPs, 1e-12)
	require.Equal(t, decoder.PrismNumParams(c.Model, spec), got.Params)
}

func TestCost_GrowsWithSeedsAndBank(t *testing.T) {
	base := Tiny().Cost()
	c := Tiny()
	c.Seeds = append(c.Seeds, 9)
	require.Equal(t, base.Runs+2, c.Cost().Runs)
	c = Tiny()
	c.SpecRangeK *= 4
	require.Greater(t, c.Cost().TrainFLOPs, base.TrainFLOPs)
	c = Tiny()
	c.SpecRangeK = 0
	require.Equal(t, base.Runs/2, c.Cost().Runs)
}
