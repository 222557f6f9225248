package baseline

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
)

func TestCost_TinyIsTheHandCount(t *testing.T) {
	c := Tiny()
	got := c.Cost()
	m := c.Model
	m.VocabSize = c.Data.Tokenizer.VocabSize
	tokens := int64(c.Train.Steps * c.Data.BatchSize * c.Data.SeqLen) // 40 steps of 8×32
	require.Equal(t, int64(40*8*32), tokens)
	require.Equal(t, 1, got.Runs)
	require.Equal(t, tokens, got.TrainTokens)
	require.Equal(t, m.NumParams(), got.Params)
	require.InEpsilon(t, 3*float64(tokens)*decoder.FLOPsPerToken(m, c.Data.SeqLen), got.TrainFLOPs, 1e-12)
	// Validation after steps 20 and 40 (2 batches of 8) and the final perplexity over 4 batches.
	evalTokens := float64((2*2 + 4) * 8 * 32)
	require.InEpsilon(t, evalTokens*decoder.FLOPsPerToken(m, c.Data.SeqLen), got.EvalFLOPs, 1e-12)
}

func TestCost_GrowsWithStepsAndWidth(t *testing.T) {
	base := Tiny().Cost()
	c := Tiny()
	c.Train.Steps *= 2
	require.InEpsilon(t, 2*base.TrainFLOPs, c.Cost().TrainFLOPs, 1e-12)
	c = Tiny()
	c.Model.Width *= 2
	require.Greater(t, c.Cost().TrainFLOPs, base.TrainFLOPs)
	require.Greater(t, c.Cost().Params, base.Params)
}
