package lm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
)

func TestMatchParams_HitsTargetWithinTolerance(t *testing.T) {
	for _, c := range []struct{ width, layers, vocab int }{{16, 2, 320}, {24, 2, 320}, {32, 2, 1024}, {48, 3, 500},
		{64, 4, 2048}} {
		ref := paramsTestModel()
		ref.Width, ref.NumLayers, ref.VocabSize = c.width, c.layers, c.vocab
		ref.Mixer = decoder.MixerAttention
		target := NonEmbeddingParams(ref)
		for _, mixer := range decoder.KnownMixers {
			m, match, err := MatchParams(ref, mixer)
			require.NoError(t, err, "%s at %+v", mixer, c)
			require.Equal(t, mixer, m.Mixer)
			require.Equal(t, ref.Width, m.Width)
			require.Equal(t, target, match.Target)
			require.Equal(t, NonEmbeddingParams(m), match.Achieved)
			require.Equal(t, m.FFNWidth(), match.FFNWidth)
			tol := MatchTolerance(ref)
			require.LessOrEqual(t, abs(match.Achieved-target), tol, "%s at %+v: %d vs %d", mixer, c,
				match.Achieved, target)
			// Embeddings are identical, so total counts match within the same tolerance.
			require.LessOrEqual(t, abs(m.NumParams()-ref.NumParams()), tol)
			// The relative error bound of doc.go: 3DL/2 over ≈ 12D²L reference parameters is 1/(8D).
			require.LessOrEqual(t, abs(match.Achieved-target), int(float64(target)/(8*float64(c.width))+1))
			if mixer == ref.Mixer {
				require.Equal(t, target, match.Achieved)
				require.Equal(t, ref.FFNWidth(), m.FFNHidden)
			}
		}
	}
}

// Without matching, the mixers differ by far more than the tolerance, so the test above checks the rule.
func TestNonEmbeddingParams_UnmatchedMixersDiffer(t *testing.T) {
	ref := paramsTestModel()
	ref.Width, ref.NumLayers, ref.VocabSize = 32, 2, 1024
	counts := map[string]int{}
	for _, mixer := range decoder.KnownMixers {
		m := ref
		m.Mixer = mixer
		require.NoError(t, m.Validate())
		counts[mixer] = NonEmbeddingParams(m)
	}
	tol := MatchTolerance(ref)
	require.Greater(t, abs(counts["protot"]-counts["attention"]), 10*tol)
	require.Greater(t, abs(counts["mamba"]-counts["attention"]), 10*tol)
}

func TestMatchParams_Errors(t *testing.T) {
	ref := paramsTestModel()
	ref.VocabSize = 320
	ref.DropFFN = true
	_, _, err := MatchParams(ref, "protot")
	require.ErrorContains(t, err, "drop_ffn")

	// A reference FFN of width 1 leaves Mamba (≈ 6D² per block) no room.
	ref.DropFFN = false
	ref.FFNHidden = 1
	_, _, err = MatchParams(ref, "mamba")
	require.ErrorContains(t, err, "match_params cannot apply")

	_, _, err = MatchParams(ref, "lstm")
	require.ErrorContains(t, err, "lstm")
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// paramsTestModel is the reference decoder of the parameter-matching tests: two heads for attention and DeltaNet,
// 16 prototypes for ProtoT, the architecture study's Small shape before its width and depth are set.
func paramsTestModel() decoder.Config {
	m := decoder.DefaultConfig()
	m.Attention.NumHeads, m.DeltaNet.NumHeads = 2, 2
	m.ProtoT.NumPrototypes, m.ProtoT.ChunkSize = 16, 32
	m.MaxLen = 128
	return m
}

// TestShape_Apply: non-zero sizes are written, zero ones kept, and model.vocab_size is never touched (the tokenizer's
// vocabulary is data.tokenizer.vocab_size; a preset sets the model's where it reads it).
func TestShape_Apply(t *testing.T) {
	d, m := Base(SmallShape)
	require.Equal(t, 2000, d.Synthetic.NumDocs)
	require.Equal(t, 1024, d.Tokenizer.VocabSize)
	require.Equal(t, decoder.DefaultConfig().VocabSize, m.VocabSize)
	require.Equal(t, 10_000.0, m.Attention.RoPEBase)
	m.VocabSize = 777
	Shape{Vocab: 300, Width: 16}.Apply(&d, &m)
	require.Equal(t, 300, d.Tokenizer.VocabSize)
	require.Equal(t, 777, m.VocabSize)
	require.Equal(t, 16, m.Width)
	require.Equal(t, 2, m.NumLayers, "a zero field is kept")
	require.Equal(t, 32, d.SeqLen)
}
