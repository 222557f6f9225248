package speed

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
)

// TestCost_TinyIsTheHandCount: every mixer at T = 16 (B = 128/16 = 8) and T = 64 (B = 2), warmup + steps = 3
// steps of 128 tokens each; nothing exceeds Tiny's memory limit.
func TestCost_TinyIsTheHandCount(t *testing.T) {
	c := Tiny()
	got := c.Cost()
	rows := len(c.Mixers) * len(c.Contexts)
	require.Equal(t, rows, got.Runs)
	require.Equal(t, int64(rows*3*128), got.TrainTokens)
	want := 0.0
	for _, m := range c.Mixers {
		for _, T := range c.Contexts {
			want += 3 * 3 * 128 * decoder.FLOPsPerToken(c.ModelConfig(m), T)
		}
	}
	require.InEpsilon(t, want, got.TrainFLOPs, 1e-12)
	require.Positive(t, got.EvalFLOPs, "decoding rows")
}

func TestCost_GrowsWithStepsAndContexts(t *testing.T) {
	base := Tiny().Cost()
	c := Tiny()
	c.Steps *= 2
	require.Greater(t, c.Cost().TrainTokens, base.TrainTokens)
	c = Tiny()
	c.Contexts = append(c.Contexts, 128)
	require.Greater(t, c.Cost().TrainFLOPs, base.TrainFLOPs)
	c = Tiny()
	c.MaxMemoryGB = 1e-6 // every row skipped
	require.Zero(t, c.Cost().Runs)
	c = Tiny()
	c.Mode = ModeDecode
	require.Zero(t, c.Cost().TrainFLOPs)
}
