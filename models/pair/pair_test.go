package pair

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

func TestPresets_Validate(t *testing.T) {
	for name, c := range map[string]Config{"tiny": Tiny(), "small": Small(), "small_v2": SmallV2(), "paper": Paper()} {
		require.NoError(t, c.Validate(), name)
	}
	c := Tiny()
	c.Model.Mixer = decoder.MixerAttention
	require.ErrorContains(t, c.Validate(), "model.mixer")
	c = Tiny()
	c.Train.Steps = 0
	require.ErrorContains(t, c.Validate(), "train")
}

// TestModels_EqualSize: the two lm.Configs differ only in the mixer and the FFN width, which makes the
// non-embedding parameter counts equal within lm.MatchTolerance; the corpus is the one asked for.
func TestModels_EqualSize(t *testing.T) {
	for _, c := range []Config{Tiny(), Small(), SmallV2(), Paper()} {
		proto, llama, err := c.Models(lmdata.SourceWordNet)
		require.NoError(t, err)
		require.Equal(t, decoder.MixerProtoT, proto.Model.Mixer)
		require.Equal(t, decoder.MixerAttention, llama.Model.Mixer)
		require.Equal(t, lmdata.SourceWordNet, proto.Data.Source)
		require.Equal(t, c.Data.Tokenizer.VocabSize, proto.Model.VocabSize)
		require.Equal(t, proto.Data, llama.Data)
		require.Equal(t, proto.Train, llama.Train)
		require.Equal(t, c.Train.EvalBatches, proto.EvalBatches)
		d := lm.NonEmbeddingParams(proto.Model) - lm.NonEmbeddingParams(llama.Model)
		require.LessOrEqual(t, max(d, -d), lm.MatchTolerance(proto.Model))
		same := llama.Model
		same.Mixer, same.FFNHidden = proto.Model.Mixer, proto.Model.FFNHidden
		require.Equal(t, proto.Model, same, "only the mixer and the FFN width differ")
	}
	c := Tiny()
	c.MatchParams = false
	proto, llama, err := c.Models(lmdata.SourceSynthetic)
	require.NoError(t, err)
	require.Equal(t, proto.Model.FFNWidth(), llama.Model.FFNWidth())
}

func TestProbeNames(t *testing.T) {
	require.Equal(t, []string{decoder.BlockScope(0) + ".x", decoder.BlockScope(1) + ".x"}, ProbeNames(2, "x"))
}

func TestModelsTable(t *testing.T) {
	tb := ModelsTable([]string{"synthetic"}, [][]Summary{{{Mixer: decoder.MixerProtoT}, {Mixer: decoder.MixerAttention}}})
	require.Len(t, tb.Rows, 2)
	require.Equal(t, []string{"synthetic", "ProtoT"}, tb.Rows[0][:2])
	require.Equal(t, "LLaMA", tb.Rows[1][1])
	require.Panics(t, func() { ModelsTable([]string{"a", "b"}, nil) })
}

// TestPrepare_BrownMissing: without the Brown corpus an optional Brown corpus is skipped with a note naming the fix
// and a required one fails, both before any model trains.
func TestPrepare_BrownMissing(t *testing.T) {
	t.Setenv(brown.EnvDir, t.TempDir()+"/none")
	out := t.TempDir()
	pc, note, err := Tiny().Prepare(lmdata.SourceBrown, true, false, &run.Provenance{}, run.NewOptions(run.Out(out)))
	require.NoError(t, err)
	require.Nil(t, pc)
	require.Contains(t, note, "skipped corpus brown")
	require.Contains(t, note, "make brown")
	_, _, err = Tiny().Prepare(lmdata.SourceBrown, false, false, &run.Provenance{}, run.NewOptions(run.Out(out)))
	require.ErrorContains(t, err, "make brown")
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing trained")
}
