package lm

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
	"github.com/protolab/protolab/workbench/wbtest"
)

// tinyConfig is a dense model that trains in about a second: one layer of width 16, 20 updates of 4×16 tokens.
func tinyConfig() Config {
	d := lmdata.DefaultConfig()
	d.Synthetic.NumDocs, d.Tokenizer.VocabSize, d.SeqLen, d.BatchSize = 80, 300, 16, 4
	m := decoder.DefaultConfig()
	m.Width, m.NumLayers, m.Attention.NumHeads, m.MaxLen = 16, 1, 2, 64
	m.VocabSize = 0 // from the tokenizer config
	t := fit.DefaultConfig()
	t.Steps, t.LR, t.WarmupSteps, t.EvalEvery, t.EvalBatches, t.CheckpointEvery = 20, 1e-2, 2, 10, 1, 10
	return Config{Seed: 3, Data: d, Model: m, Train: t, EvalBatches: 2}
}

// tinyPrism is tinyConfig with a PRISM head of K = 16, k = 4, seeded after 8 cross-entropy-only updates.
func tinyPrism() Config {
	c := tinyConfig()
	h := prism.DefaultConfig()
	h.NumPrototypes, h.TopK = 16, 4
	c.Head = HeadPrism
	c.Prism = Prism{Config: h, ProtoWarmup: 8, SeedBatches: 1, RescaleSeed: true}
	return c
}

func valTensors(t *testing.T, m *Model) eval.PerplexityResult {
	t.Helper()
	d, err := m.Data()
	require.NoError(t, err)
	vals, err := d.ValTensors(m.Config.EvalBatches)
	require.NoError(t, err)
	p, err := m.Perplexity(vals)
	require.NoError(t, err)
	return p
}

func TestLoadOrTrain_TrainsOnceThenLoads(t *testing.T) {
	out := t.TempDir()
	for _, cfg := range []Config{tinyConfig(), tinyPrism()} {
		m, err := LoadOrTrain(cfg, run.Out(out), run.Progress(nil))
		require.NoError(t, err)
		require.False(t, m.Cached)
		require.Equal(t, RunDir(out, cfg), m.Dir)
		for _, f := range []string{ConfigFile, TokenizerFile, WeightsFile, ResultFile} {
			require.FileExists(t, filepath.Join(m.Dir, f))
		}
		res := m.Result
		V := float64(cfg.Data.Tokenizer.VocabSize)
		require.Less(t, res.Val.Perplexity, V/2, "20 updates beat the uniform guess by 2×")
		require.Len(t, res.History.Steps, cfg.Train.Steps)
		require.Equal(t, cfg.NumParams(), res.NumParams)
		require.Equal(t, cfg.Train.Steps*cfg.Data.BatchSize*cfg.Data.SeqLen, res.Tokens.SeenInTrain)
		require.Equal(t, wbtest.GoModVersion(t, "github.com/gomlx/gomlx"), res.Provenance.GomlxVer)
		require.Equal(t, res.Val.Loss, valTensors(t, m).Loss, "the recorded perplexity is the model's")

		again, err := LoadOrTrain(cfg, run.Out(out), run.Progress(nil))
		require.NoError(t, err)
		require.True(t, again.Cached)
		require.Equal(t, m.Dir, again.Dir)
		require.Equal(t, res.Val, again.Result.Val)
		require.Equal(t, res.Val.Loss, valTensors(t, again).Loss, "the opened weights are the trained ones")
	}
	dense, pm := tinyConfig().Resolved(), tinyPrism().Resolved()
	require.Equal(t, pm.NumParams()-dense.NumParams(), 16*dense.Model.Width)
	require.NotEqual(t, dense.Hash(), pm.Hash())
	require.Equal(t, "attention-synthetic-d16-s20-seed3", dense.Name())
	require.Equal(t, "attention-prismK16k4-synthetic-d16-s20-seed3", pm.Name())
}

func TestConfig_ResolvedAndHash(t *testing.T) {
	c := tinyConfig()
	r := c.Resolved()
	require.Equal(t, c.Seed, r.Data.Seed)
	require.Equal(t, c.Seed, r.Train.Seed)
	require.Equal(t, c.Data.Tokenizer.VocabSize, r.Model.VocabSize)
	require.Equal(t, c.Hash(), r.Hash(), "the hash is of the resolved config")
	c2 := c
	c2.Seed++
	require.NotEqual(t, c.Hash(), c2.Hash())
	c3 := c
	c3.Data.Source = "/data/my corpus.txt"
	require.Equal(t, "attention-my_corpus-d16-s20-seed3", c3.Name())

	p := tinyPrism()
	require.Equal(t, HeadDense, c.Resolved().Head, `"" means dense`)
	require.Equal(t, p.Dense().Hash(), c.Hash(), "a PRISM model's dense baseline is the dense model")
	require.Equal(t, Prism{}, p.Dense().Prism, "a dense model keeps no PRISM settings")
	require.NoError(t, run.Override(&p, "prism.top_k=2; prism.proto_warmup=4; head=prism"))
	require.Equal(t, 2, p.Prism.TopK)
	require.Equal(t, 4, p.Prism.ProtoWarmup)
	require.Contains(t, run.Keys(&p), "prism.rec_weight", "the head's settings are promoted under prism")
}

func TestConfig_ValidateNamesTheKey(t *testing.T) {
	for _, tc := range []struct {
		edit    func(c *Config)
		mention string
	}{
		{func(c *Config) { c.Model.VocabSize = 7 }, "model.vocab_size=7"},
		{func(c *Config) { c.Model.Width = 0 }, "width"},
		{func(c *Config) { c.Train.Steps = 0 }, "steps"},
		{func(c *Config) { c.EvalBatches = -1 }, "eval_batches"},
		{func(c *Config) { c.Data.SeqLen = 0 }, "seq_len"},
		{func(c *Config) { c.Prism.ProtoWarmup = 20 }, "prism.proto_warmup=20"},
		{func(c *Config) { c.Prism.ProtoWarmup, c.Train.LogEvery = 8, 3 }, "log_every"},
		{func(c *Config) { c.Prism.SeedBatches = 0 }, "prism.seed_batches"},
		{func(c *Config) { c.Prism.NumPrototypes = 1000 }, "fewer than the 1000 prototypes"},
		{func(c *Config) { c.Prism.TopK = 0 }, "prism: "},
		{func(c *Config) { c.Head = "sparse" }, `head="sparse"`},
	} {
		cfg := tinyPrism()
		tc.edit(&cfg)
		err := cfg.Validate()
		require.Error(t, err, tc.mention)
		require.Contains(t, err.Error(), tc.mention)
	}
	require.NoError(t, tinyPrism().Validate())
}

// TestTrain_RefusesAFolderOfAnotherConfig checks that a run folder is never rewritten for another model: the error
// names the differing key, and config.json keeps its bytes.
func TestTrain_RefusesAFolderOfAnotherConfig(t *testing.T) {
	cfg := tinyConfig()
	cfg.Train.Steps, cfg.Train.WarmupSteps = 2, 1
	dir := filepath.Join(t.TempDir(), "run")
	_, err := Train(cfg, dir, run.Progress(nil))
	require.NoError(t, err)
	before, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	require.NoError(t, err)

	other := cfg
	other.Model.NumLayers = 2
	_, err = Train(other, dir, run.Progress(nil))
	require.ErrorContains(t, err, "model.num_layers: 1 → 2")
	require.ErrorContains(t, err, "train into another folder (--out), or replace the run there with `protolab train "+
		"--fresh`")
	after, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	require.NoError(t, err)
	require.Equal(t, before, after)

	require.NoError(t, os.WriteFile(filepath.Join(dir, ConfigFile), []byte("{"), 0o644))
	_, err = Train(cfg, dir, run.Progress(nil))
	require.ErrorContains(t, err, ConfigFile+" is corrupt")
	require.ErrorContains(t, err, "unexpected end of JSON input")
	require.ErrorContains(t, err, "--fresh")
}

// TestOpen_ChecksTheFilesAgree opens run folders whose files disagree with each other.
func TestOpen_ChecksTheFilesAgree(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "missing"))
	require.ErrorContains(t, err, "not a run folder (no config.json)")

	cfg := tinyConfig()
	cfg.Model.NumLayers = 2
	cfg.Train.Steps, cfg.Train.WarmupSteps = 2, 1
	root := t.TempDir()
	dir := filepath.Join(root, "two")
	_, err = Train(cfg, dir, run.Progress(nil))
	require.NoError(t, err)
	_, err = Open(dir)
	require.NoError(t, err)

	// The config of a one-layer model over two-layer weights: block_01 would be silently ignored.
	writeConfig := func(c Config) {
		t.Helper()
		require.NoError(t, store.SaveJSON(filepath.Join(dir, ConfigFile), c.Resolved()))
	}
	one := cfg
	one.Model.NumLayers = 1
	writeConfig(one)
	_, err = Open(dir)
	require.ErrorContains(t, err, "tensors the config's model does not use")
	require.ErrorContains(t, err, "block_01")

	// The config of a three-layer model: block_02 is missing.
	three := cfg
	three.Model.NumLayers = 3
	writeConfig(three)
	_, err = Open(dir)
	require.ErrorContains(t, err, "do not fit the config")

	// A tokenizer of another vocabulary.
	writeConfig(cfg)
	small := cfg
	small.Data.Tokenizer.VocabSize = 280
	otherDir := filepath.Join(root, "small")
	_, err = Train(small, otherDir, run.Progress(nil))
	require.NoError(t, err)
	tok, err := os.ReadFile(filepath.Join(otherDir, TokenizerFile))
	require.NoError(t, err)
	good, err := os.ReadFile(filepath.Join(dir, TokenizerFile))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, TokenizerFile), tok, 0o644))
	_, err = Open(dir)
	require.ErrorContains(t, err, "has 280 tokens but")
	require.NoError(t, os.WriteFile(filepath.Join(dir, TokenizerFile), good, 0o644))

	// Corrupt files are named.
	require.NoError(t, os.WriteFile(filepath.Join(dir, WeightsFile), []byte("not safetensors"), 0o644))
	_, err = Open(dir)
	require.ErrorContains(t, err, WeightsFile)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ConfigFile), []byte("{"), 0o644))
	_, err = Open(dir)
	require.ErrorContains(t, err, "is corrupt")
}

// TestTrain_InterruptedRunResumes stops a run through run.Context after 12 of 20 updates (a checkpoint exists at
// 10), trains again in the same folder, and compares with an uninterrupted run: the same validation loss.
func TestTrain_InterruptedRunResumes(t *testing.T) {
	cfg := tinyConfig()
	root := t.TempDir()
	whole, err := Train(cfg, filepath.Join(root, "whole"), run.Progress(nil))
	require.NoError(t, err)

	dir := filepath.Join(root, "cut")
	ctx, cancel := context.WithCancel(context.Background())
	var seen []run.Metric
	_, err = Train(cfg, dir, run.Progress(nil), run.Context(ctx), run.OnMetric(func(m run.Metric) {
		seen = append(seen, m)
		if m.Name == run.MetricTrainLoss && m.Step == 12 {
			cancel()
		}
	}))
	require.ErrorIs(t, err, context.Canceled)
	require.NoFileExists(t, filepath.Join(dir, ResultFile))
	require.Equal(t, 1, seen[0].Step)
	require.Equal(t, run.MetricTrainLoss, seen[0].Name)
	require.Contains(t, seen, run.Metric{Step: 10, Name: run.MetricValLoss, Value: whole.Result.History.Evals[0].Loss})

	resumed, err := Train(cfg, dir, run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, whole.Result.Val.Loss, resumed.Result.Val.Loss)
}

func TestGenerate_ContinuesPrompts(t *testing.T) {
	pm, err := Train(tinyPrism(), "", run.Progress(nil))
	require.NoError(t, err)
	sc := eval.DefaultSampleConfig()
	sc.MaxNewTokens, sc.Temperature = 4, 0
	texts, _, _, err := pm.Generate([]string{"the queen"}, sc)
	require.NoError(t, err, "a PRISM model generates through its own head")
	require.Len(t, texts, 1)

	m, err := Train(tinyConfig(), "", run.Progress(nil))
	require.NoError(t, err)
	sc = eval.DefaultSampleConfig()
	sc.MaxNewTokens = 5
	texts, ids, stats, err := m.Generate([]string{"the queen", "a"}, sc)
	require.NoError(t, err)
	require.Len(t, texts, 2)
	require.Len(t, ids[0], 5, "stop_token -1 never stops")
	require.Equal(t, 2*5, stats.GeneratedTokens)
	sc.MaxNewTokens = 100
	_, _, _, err = m.Generate([]string{"the"}, sc)
	require.ErrorContains(t, err, "model.max_len=64")
}

// TestTrainOn_TheTrainingOrderReproducesTrain feeds TrainOn the very batches Train draws from the training split:
// the recipe is the same (warm-up, bank seeding from the first batches), so is the model.
func TestTrainOn_TheTrainingOrderReproducesTrain(t *testing.T) {
	for _, cfg := range []Config{tinyConfig(), tinyPrism()} {
		m, err := Train(cfg, "", run.Progress(nil))
		require.NoError(t, err)
		first, err := m.TrainTensors(cfg.Train.Steps)
		require.NoError(t, err)
		batches := make([][]*tensors.Tensor, len(first))
		for i, b := range first {
			batches[i] = []*tensors.Tensor{b}
		}
		again, err := TrainOn(cfg, batches, run.Progress(nil))
		require.NoError(t, err)
		require.Equal(t, m.Result.Val.Loss, again.Result.Val.Loss, cfg.Name())
		_, err = TrainOn(cfg, batches[:3], run.Progress(nil))
		require.ErrorContains(t, err, "3 batches for train.steps=20")
	}
}

func TestPrismPresets_Validate(t *testing.T) {
	for _, c := range []Config{PrismTiny(), PrismSmall(), PrismSmallV2(), PrismPaper()} {
		require.NoError(t, c.Validate(), c.Name())
		require.Equal(t, HeadPrism, c.Head)
		require.NoError(t, c.Dense().Validate())
	}
	require.Equal(t, prism.DefaultConfig().RecWeight, PrismSmall().Prism.RecWeight)
	v1, v2 := PrismSmall(), PrismSmallV2()
	require.Equal(t, 8*v2.Model.Width, v2.Prism.NumPrototypes, "K = 8D")
	require.Equal(t, v2.Data.Tokenizer.VocabSize, v2.Model.VocabSize)
	v2.Prism.NumPrototypes = v1.Prism.NumPrototypes
	require.Equal(t, v1.Prism, v2.Prism, "PrismSmall's recipe at another size")
}
