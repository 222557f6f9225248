package architecture

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/lmdata"
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
		{func(c *Config) { c.Inits = nil }, "inits is empty"},
		{func(c *Config) { c.Inits = []string{"xavier"} }, `inits[0]="xavier"`},
		{func(c *Config) { c.Inits = []string{"gpt2", "gpt2"} }, "twice"},
		{func(c *Config) { c.LRGrid = []float64{1e-3, -1} }, "lr_grid[1]=-1"},
		{func(c *Config) { c.SharedLR = true }, "shared_lr=true needs lr_grid"},
		{func(c *Config) { c.Test.Seed = c.Data.Synthetic.Seed }, "test: seed=1 equals data.synthetic.seed"},
		{func(c *Config) { c.Test.HoldoutSeed = c.Test.Seed }, "holdout_seed"},
		{func(c *Config) { c.Test.NumDocs = 0 }, "test: num_docs=0"},
		{func(c *Config) { c.Sweep.Steps = nil }, "both empty for no sweep"},
		{func(c *Config) { c.TuneSeed = c.Seeds[0] }, "tune_seed=1 is one of seeds"},
		{func(c *Config) { c.Corpora = append(c.Corpora, lmdata.SourceBrown) }, "test.brown_docs=0"},
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
	require.NoError(t, Quick().Validate())
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

// The protocol presets: at least MinSeeds seeds, the spec's initialisation first, one grid for every mixer that
// holds train.lr (so the shared-rate comparison reuses the search's runs), a held-back test corpus, and
// checkpoints to follow the ranking. Small (protocol v2, docs/PROTOCOL.md) searches with a seed that is no
// replicate, on the synthetic and the Brown corpus, whose test seed is odd (the Brown test split, not the held-out
// one: lm.EvalSplitOf); Quick keeps one seed and no search.
func TestPresets_Protocol(t *testing.T) {
	for _, c := range []Config{Small(), Paper()} {
		require.GreaterOrEqual(t, len(c.Seeds), MinSeeds)
		require.Equal(t, decoder.InitPyTorch, c.Inits[0])
		require.GreaterOrEqual(t, len(c.LRGrid), 3)
		require.Contains(t, c.LRGrid, c.Train.LR)
		require.True(t, c.SharedLR)
		require.NotZero(t, c.Test.HoldoutSeed)
		require.GreaterOrEqual(t, c.Train.Steps/c.Train.EvalEvery, 4)
	}
	require.Equal(t, decoder.KnownInits, Paper().Inits)
	s := Small()
	require.NotZero(t, s.TuneSeed)
	require.NotContains(t, s.Seeds, s.TuneSeed)
	require.Equal(t, []string{lmdata.SourceSynthetic, lmdata.SourceBrown}, s.Corpora)
	require.Equal(t, brown.Test, lm.EvalSplitOf(s.Test.Seed))
	require.Equal(t, brown.Heldout, lm.EvalSplitOf(s.Test.HoldoutSeed))
	q := Quick()
	require.Equal(t, []uint64{1}, q.Seeds)
	require.Equal(t, 160, q.Train.Steps)
	require.Empty(t, q.LRGrid)
	require.Zero(t, q.Test.HoldoutSeed, "the held-back corpus is the protocol's")
}
