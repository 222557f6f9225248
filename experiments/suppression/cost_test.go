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

// TestCost_SmallIsTheHandCount: protocol v2 trains, on each of its two corpora (the corpus changes no FLOPs) and for
// each of 3 seeds, the v1 suppression model (4800 updates of 8×32 tokens = 1,228,800 tokens, K = 2048) and the
// spec-range model at lm.PrismSmallV2's shape (500 updates of 16×64 tokens = 512,000 tokens, K = 1024): 12 runs and
// 6 × (1,228,800 + 512,000) = 10,444,800 training tokens.
func TestCost_SmallIsTheHandCount(t *testing.T) {
	c := Small()
	got := c.Cost()
	require.Equal(t, 12, got.Runs)
	require.Equal(t, int64(10_444_800), got.TrainTokens)
	spec := c.SpecRangeModel
	spec.Prism.NumPrototypes = 1024
	want := 3 * 6 * (1_228_800*decoder.PrismFLOPsPerToken(c.Model, c.Prism.Config, 32) +
		512_000*decoder.PrismFLOPsPerToken(spec.Model, spec.Prism.Config, 64))
	require.InEpsilon(t, want, got.TrainFLOPs, 1e-12)
	c.Corpora = c.Corpora[:1]
	require.InEpsilon(t, want/2, c.Cost().TrainFLOPs, 1e-12, "one corpus: half")
}
