package robustness

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
)

// TestCost_TinyIsTheHandCount: a ProtoT model and its LLaMA baseline per corpus.
func TestCost_TinyIsTheHandCount(t *testing.T) {
	c := Tiny()
	got := c.Cost()
	require.Equal(t, 2*len(c.Corpora), got.Runs)
	tokens := c.Train.Steps * c.Data.BatchSize * c.Data.SeqLen
	require.Equal(t, int64(2*len(c.Corpora)*tokens), got.TrainTokens)
	proto, llama, err := c.Models(c.Corpora[0].Source)
	require.NoError(t, err)
	T := c.Data.SeqLen
	want := 3 * float64(tokens) * (decoder.FLOPsPerToken(proto.Model, T) + decoder.FLOPsPerToken(llama.Model, T))
	require.InEpsilon(t, want, got.TrainFLOPs, 1e-12)
}

func TestCost_GrowsWithCorporaAndWidth(t *testing.T) {
	base := Tiny().Cost()
	c := Tiny()
	c.Corpora = append(c.Corpora, WordNet())
	require.Equal(t, 2*base.Runs, c.Cost().Runs)
	c = Tiny()
	c.Model.Width *= 2
	require.Greater(t, c.Cost().TrainFLOPs, base.TrainFLOPs)
}

// TestCost_SmallCountsTheProtocolsModels: a ProtoT model and its LLaMA baseline on each of the synthetic corpus,
// WordNet and the Brown corpus, 2 × 3 = 6 models of 1,500 steps of 16 × 64 tokens, interp's first seed.
func TestCost_SmallCountsTheProtocolsModels(t *testing.T) {
	got := Small().Cost()
	require.Equal(t, 6, got.Runs)
	require.Equal(t, int64(6*1500*16*64), got.TrainTokens)
}
