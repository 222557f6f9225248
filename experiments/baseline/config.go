// Package baseline is the baseline language-model study: train the LLaMA-style decoder (models/lm) on a corpus,
// evaluate its perplexity and sample from it. It is what notebooks/00_quickstart.ipynb and `protolab run baseline`
// run; `protolab train|eval|generate` work on one run folder of it.
package baseline

import (
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the study. Start from a preset (Tiny, Small, Paper); change fields or apply run.Override.
type Config struct {
	// Config is the model: seed, data, model (vocab_size 0 follows the tokenizer), head, train, eval_batches.
	lm.Config
	Sample     eval.SampleConfig `json:"sample"`      // how samples are generated (stop_token −1: at document ends)
	NumSamples int               `json:"num_samples"` // number of samples (prompts from validation documents)
	// PromptWords is the number of leading words of a validation document used as a sample's prompt; > 0.
	PromptWords int `json:"prompt_words"`
}

// Tiny is seconds on one CPU core: the unit tests and the notebook smoke test use it.
func Tiny() Config {
	c := Small()
	c.Data.Synthetic.NumDocs = 120
	c.Data.Tokenizer.VocabSize = 320
	c.Data.SeqLen = 32
	c.Data.BatchSize = 8
	c.Model.Width = 32
	c.Model.NumLayers = 2
	c.Model.Attention.NumHeads = 2
	c.Model.MaxLen = 128
	c.Train.Steps = 40
	c.Train.WarmupSteps = 5
	c.Train.EvalEvery = 20
	c.Train.EvalBatches = 2
	c.Train.CheckpointEvery = 20
	c.EvalBatches = 4
	c.NumSamples = 2
	c.Sample.MaxNewTokens = 24
	return c
}

// Small is a few minutes on a 2-core CPU with the pure-Go backend; `make run` executes it. The model is the core
// issue's benchmark configuration (D = 128, 4 layers, 4 heads) trained on the synthetic concept corpus.
func Small() Config {
	d := lmdata.DefaultConfig()
	d.Synthetic.NumDocs = 2000
	d.Tokenizer.VocabSize = 1024
	d.SeqLen = 128
	d.BatchSize = 8
	m := decoder.DefaultConfig()
	m.VocabSize = 0 // from the tokenizer
	m.Width = 128
	m.NumLayers = 4
	m.Attention.NumHeads = 4
	m.Attention.RoPEBase = 10_000
	m.MaxLen = 256
	t := fit.DefaultConfig()
	t.Steps = 200
	t.LR = 3e-3
	t.WarmupSteps = 20
	t.EvalEvery = 50
	t.EvalBatches = 8
	t.CheckpointEvery = 100
	s := eval.DefaultSampleConfig()
	s.MaxNewTokens = 48
	return Config{Config: lm.Config{Seed: 1, Data: d, Model: m, Head: lm.HeadDense, Train: t, EvalBatches: 32},
		Sample: s, NumSamples: 4, PromptWords: 4}
}

// Paper is the ProtoT paper's LLaMA baseline backbone (docs/spec/protot.md §2.1 and §3: D = 256, L = 6, 4 heads,
// tied embeddings, 16k vocabulary, context 1,024, AdamW lr 3e-4 with weight decay 0.1); meant for a GPU with XLA.
// The corpus stays the synthetic one by default: point data.source at FineWeb-Edu shards for the paper's data.
func Paper() Config {
	c := Small()
	c.Data.Synthetic.NumDocs = 200_000
	c.Data.Tokenizer.VocabSize = 16_384
	c.Data.SeqLen = 1024
	c.Data.BatchSize = 32
	c.Model = decoder.DefaultConfig()
	c.Model.VocabSize = 0
	c.Model.MaxLen = 2048
	c.Train.Steps = 20_000
	c.Train.LR = 3e-4
	c.Train.WarmupSteps = 1000
	c.Train.EvalEvery = 1000
	c.Train.CheckpointEvery = 1000
	c.EvalBatches = 0
	return c
}

// Preset returns the named preset: "tiny", "small" or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if c.NumSamples < 0 {
		return errors.Errorf("num_samples=%d, want ≥ 0", c.NumSamples)
	}
	if c.NumSamples > 0 {
		if err := c.Sample.Validate(); err != nil {
			return errors.WithMessage(err, "sample")
		}
		if c.PromptWords <= 0 {
			return errors.Errorf("prompt_words=%d, want > 0", c.PromptWords)
		}
	}
	return nil
}
