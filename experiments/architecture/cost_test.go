package architecture

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
)

// TestCost_TinyIsTheHandCount: Tiny has one seed, one init, no search and no shared-rate comparison; the
// comparison trains the 4 mixers at width 24 for 30 steps, the sweep every mixer at widths {16, 24} × steps
// {15, 30}, whose (24, 30) point is the comparison's model, so 4 + 4·3 = 16 runs; each mixer's comparison model is
// fine-tuned on 1 task for 60 steps of 16 examples of 24 tokens.
func TestCost_TinyIsTheHandCount(t *testing.T) {
	c := Tiny()
	require.Equal(t, 4, len(c.Mixers))
	got := c.Cost()
	B, T := c.Data.BatchSize, c.Data.SeqLen
	require.Equal(t, 16, got.Runs)
	lmTokens := 4 * (30 + 15 + 30 + 15) * B * T // per mixer: the comparison and three new sweep points
	ftTokens := 4 * 1 * 60 * 16 * 24
	require.Equal(t, int64(lmTokens+ftTokens), got.TrainTokens)

	flops, params := 0.0, 0
	for _, m := range c.Mixers {
		for _, p := range []struct{ w, steps int }{{24, 30}, {16, 15}, {16, 30}, {24, 15}} {
			mc, _, err := c.ModelAt(Point{Mixer: m, Source: c.Data.Source, Init: c.Inits[0], LR: c.Train.LR,
				Width: p.w, Steps: p.steps}, c.Seeds[0])
			require.NoError(t, err)
			flops += 3 * float64(p.steps*B*T) * decoder.FLOPsPerToken(mc.Model, T)
			params = max(params, mc.Model.NumParams())
			if p.w == 24 && p.steps == 30 {
				D, V := mc.Model.Width, mc.Model.VocabSize
				flops += 3 * float64(60*16*24) * (decoder.FLOPsPerToken(mc.Model, 24) - 2*float64(D*V))
			}
		}
	}
	require.InEpsilon(t, flops, got.TrainFLOPs, 1e-12)
	require.Equal(t, params, got.Params)
}

func TestCost_GrowsWithSeedsStepsAndWidths(t *testing.T) {
	base := Tiny().Cost()
	c := Tiny()
	c.Seeds = []uint64{1, 2}
	require.Equal(t, 2*base.Runs, c.Cost().Runs)
	require.Greater(t, c.Cost().TrainFLOPs, base.TrainFLOPs)
	c = Tiny()
	c.Sweep.Steps = []int{15, 30, 60}
	require.Equal(t, base.Runs+4*2, c.Cost().Runs) // 4 mixers × 2 widths
	require.Greater(t, c.Cost().TrainTokens, base.TrainTokens)
	c = Tiny()
	c.Sweep.Widths = []int{16, 24, 48}
	require.Greater(t, c.Cost().Params, base.Params)
	require.Greater(t, c.Cost().TrainFLOPs, base.TrainFLOPs)
}

// TestCost_SmallCountsTheProtocolsModels: per corpus (synthetic and Brown), 4 mixers × 3 rates with the tuning seed,
// 3 replicate seeds of each mixer at its chosen rate, and 3 more of each mixer at the shared rate (when the search
// chose another): 12 + 12 + 12 = 36 per corpus, the protocol's "at most 36 models" per corpus (presets.go).
func TestCost_SmallCountsTheProtocolsModels(t *testing.T) {
	require.Equal(t, 2*36, Small().Cost().Runs)
}
