package protot

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
)

func TestMatchParams_HitsTargetWithinTolerance(t *testing.T) {
	for _, c := range []struct{ width, layers, vocab int }{{16, 2, 320}, {24, 2, 320}, {32, 2, 1024}, {48, 3, 500},
		{64, 4, 2048}} {
		ref := Small().Model
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
func TestMatchParams_UnmatchedMixersDiffer(t *testing.T) {
	cfg := Small()
	cfg.MatchParams = false
	counts := map[string]int{}
	for _, mixer := range cfg.Mixers {
		_, match, err := cfg.modelFor(mixer, 32)
		require.NoError(t, err)
		counts[mixer] = match.Achieved
	}
	tol := 3 * 32 * 2 / 2
	require.Greater(t, abs(counts["protot"]-counts["attention"]), 10*tol)
	require.Greater(t, abs(counts["mamba"]-counts["attention"]), 10*tol)
}

func TestMatchParams_Errors(t *testing.T) {
	ref := Small().Model
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

func TestRunConfig_ScalesWarmupAndSetsSeed(t *testing.T) {
	cfg := Small()
	rc, match, err := cfg.RunConfig("protot", "wordnet", 16, 150, 7)
	require.NoError(t, err)
	require.Equal(t, 150, rc.Train.Steps)
	require.Equal(t, 15, rc.Train.WarmupSteps) // round(16·150/160)
	require.Equal(t, uint64(7), rc.Train.Seed)
	require.Equal(t, uint64(7), rc.Data.Seed)
	require.Equal(t, "wordnet", rc.Data.Source)
	require.Equal(t, 16, rc.Model.Width)
	require.Equal(t, cfg.Data.Tokenizer.VocabSize, rc.Model.VocabSize)
	require.Equal(t, match.FFNWidth, rc.Model.FFNHidden)
	require.Equal(t, "protot-wordnet-d16-s150-seed7", rc.Name())
	rc2, _, err := cfg.RunConfig("protot", "wordnet", 16, 150, 8)
	require.NoError(t, err)
	require.NotEqual(t, rc.Hash(), rc2.Hash())
	rc3, _, err := cfg.RunConfig("protot", "/data/my corpus.txt", 16, 150, 7)
	require.NoError(t, err)
	require.Equal(t, "protot-my_corpus-d16-s150-seed7", rc3.Name())
}

func TestConfig_ValidateErrors(t *testing.T) {
	for _, tc := range []struct {
		edit    func(c *Config)
		mention string
	}{
		{func(c *Config) { c.Seeds = nil }, "seeds"},
		{func(c *Config) { c.Mixers = []string{"attention", "rnn"} }, `mixers[1]="rnn"`},
		{func(c *Config) { c.Mixers = []string{"protot", "protot"} }, "twice"},
		{func(c *Config) { c.Sweep.Steps = []int{300, 100} }, "sweep.steps"},
		{func(c *Config) { c.Sweep.Widths = nil }, "sweep.widths"},
		{func(c *Config) { c.Classify.Tasks = []string{"colour"} }, `classify: tasks[0]="colour"`},
		{func(c *Config) { c.Classify.Pool = "max" }, "pool"},
		{func(c *Config) { c.Generate.RepetitionN = 0 }, "repetition_n"},
		{func(c *Config) { c.Model.Attention.NumHeads = 3 }, "num_heads"},
		{func(c *Config) { c.Train.Steps = 0 }, "steps"},
		{func(c *Config) { c.FFNRatio = -1 }, "ffn_ratio"},
	} {
		cfg := Tiny()
		tc.edit(&cfg)
		err := cfg.Validate()
		require.Error(t, err, tc.mention)
		require.Contains(t, err.Error(), tc.mention)
	}
	for _, name := range []string{"tiny", "small", "paper"} {
		cfg, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, cfg.Validate(), name)
	}
	_, err := Preset("huge")
	require.ErrorContains(t, err, "huge")
}

func TestPaper_CitesSpecDefaults(t *testing.T) {
	c := Paper()
	require.Equal(t, 256, c.Model.Width)
	require.Equal(t, 6, c.Model.NumLayers)
	require.Equal(t, 32, c.Model.ProtoT.NumPrototypes)
	require.Equal(t, 256, c.Data.SeqLen)
	// F = ⌊2.7·D/16⌋·16 = 688 at D = 256 (docs/spec/protot.md §1).
	require.Equal(t, 688, c.referenceFFN(256))
	require.Equal(t, 1376, c.referenceFFN(512))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
