package architecture

import (
	"testing"

	"github.com/stretchr/testify/require"
)

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

func TestModelFor_ScalesWarmupAndSetsSeed(t *testing.T) {
	cfg := Small()
	rc, match, err := cfg.ModelFor("protot", "wordnet", 16, 150, 7)
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
	rc2, _, err := cfg.ModelFor("protot", "wordnet", 16, 150, 8)
	require.NoError(t, err)
	require.NotEqual(t, rc.Hash(), rc2.Hash())
	rc3, _, err := cfg.ModelFor("protot", "/data/my corpus.txt", 16, 150, 7)
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
