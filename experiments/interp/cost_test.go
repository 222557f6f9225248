package interp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
)

// TestCost_TinyIsTheHandCount: a ProtoT model and its LLaMA baseline per seed and corpus.
func TestCost_TinyIsTheHandCount(t *testing.T) {
	c := Tiny()
	got := c.Cost()
	runs := 2 * c.Seeds * len(c.Corpora)
	require.Equal(t, runs, got.Runs)
	tokens := c.Train.Steps * c.Data.BatchSize * c.Data.SeqLen
	require.Equal(t, int64(runs*tokens), got.TrainTokens)
	proto, llama, err := c.Models(c.Corpora[0].Source)
	require.NoError(t, err)
	T := c.Data.SeqLen
	want := 3 * float64(tokens) * (decoder.FLOPsPerToken(proto.Model, T) + decoder.FLOPsPerToken(llama.Model, T))
	require.InEpsilon(t, float64(c.Seeds*len(c.Corpora))*want, got.TrainFLOPs, 1e-12)
	require.Equal(t, max(proto.Model.NumParams(), llama.Model.NumParams()), got.Params)
}

func TestCost_GrowsWithSeedsAndSteps(t *testing.T) {
	base := Tiny().Cost()
	c := Tiny()
	c.Seeds = 3
	require.Equal(t, 3*base.Runs, c.Cost().Runs)
	require.Greater(t, c.Cost().TrainFLOPs, 2.9*base.TrainFLOPs) // other seeds, same sizes
	c = Tiny()
	c.Train.Steps *= 2
	require.InEpsilon(t, 2*base.TrainFLOPs, c.Cost().TrainFLOPs, 1e-12)
}

// TestCost_SmallCountsTheProtocolsModels: a ProtoT model and its LLaMA baseline for each of five seeds on the
// synthetic corpus and three each on WordNet and the Brown corpus, 2 × (5 + 3 + 3) = 22 models of 1,500 steps of
// 16 × 64 tokens (protocol v2, docs/PROTOCOL.md).
func TestCost_SmallCountsTheProtocolsModels(t *testing.T) {
	got := Small().Cost()
	require.Equal(t, 22, got.Runs)
	require.Equal(t, int64(22*1500*16*64), got.TrainTokens)
}
