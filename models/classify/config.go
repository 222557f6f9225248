package classify

import (
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the classification fine-tuning. Start from DefaultConfig.
type Config struct {
	// Tasks are concept names of the synthetic corpus ("topic", "gender", "number", "country", "agreement").
	Tasks []string `json:"tasks"`
	// Synthetic generates the documents the tasks are drawn from; use a seed other than the pretraining corpus's.
	Synthetic data.SyntheticConfig `json:"synthetic"`
	// TestFraction is the fraction of documents whose sentences form the test set; in (0, 1).
	TestFraction float64 `json:"test_fraction"`
	// MaxTokens is the length examples are padded or cut to, counting the leading EOS; ≥ 2.
	MaxTokens int `json:"max_tokens"`
	// BatchSize is the number of examples per fine-tuning step; > 0.
	BatchSize int `json:"batch_size"`
	// Pool is PoolMean or PoolLast: how the hidden states [T, D] of an example become one vector.
	Pool string `json:"pool"`
	// HeadOnly trains the linear head alone and keeps the language model frozen.
	HeadOnly bool `json:"head_only"`
	// Train is the fine-tuning optimizer and schedule.
	Train fit.Config `json:"train"`
}

// DefaultConfig is three sentence-label tasks (topic, gender, number) of 300 synthetic documents generated with seed
// 1001 (the pretraining corpus's default seed is 1, so the documents are unseen), 30% of the documents for testing,
// examples of 24 tokens in batches of 16, mean pooling, every weight fine-tuned for 30 steps at 1e-2 (3 of warmup).
// Mean pooling, not the last token of docs/spec/protot.md §7.6: a few dozen steps on a small model learn it more
// easily.
func DefaultConfig() Config {
	cs := data.DefaultSyntheticConfig()
	cs.Seed = 1001
	cs.NumDocs = 300
	ct := fit.DefaultConfig()
	ct.Steps = 30
	ct.LR = 1e-2
	ct.WarmupSteps = 3
	ct.EvalEvery = 0
	ct.EvalBatches = 1
	ct.CheckpointEvery = 0
	return Config{Tasks: []string{"topic", "gender", "number"}, Synthetic: cs, TestFraction: 0.3, MaxTokens: 24,
		BatchSize: 16, Pool: PoolMean, Train: ct}
}

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	switch {
	case !(c.TestFraction > 0 && c.TestFraction < 1):
		return errors.Errorf("test_fraction=%g, want in (0, 1)", c.TestFraction)
	case c.MaxTokens < 2:
		return errors.Errorf("max_tokens=%d, want ≥ 2", c.MaxTokens)
	case c.BatchSize <= 0:
		return errors.Errorf("batch_size=%d, want > 0", c.BatchSize)
	case c.Pool != PoolMean && c.Pool != PoolLast:
		return errors.Errorf("pool=%q, want %q or %q", c.Pool, PoolMean, PoolLast)
	}
	if err := c.Synthetic.Validate(); err != nil {
		return errors.WithMessage(err, "synthetic")
	}
	concepts := c.Synthetic.Concepts()
	for i, t := range c.Tasks {
		if !slices.ContainsFunc(concepts, func(k data.Concept) bool { return k.Name == t }) {
			return errors.Errorf("tasks[%d]=%q is not a concept of the synthetic corpus", i, t)
		}
	}
	return errors.WithMessage(c.Train.Validate(), "train")
}

// Cost is the estimated compute of fine-tuning one language model m on every task (run.Cost's conventions):
// train.steps steps of batch_size examples of max_tokens tokens per task, through the backbone without the LM head
// (the classifier pools the hidden states). Runs is 0: a fine-tuning is not a model trained from scratch.
func (c Config) Cost(m decoder.Config) run.Cost {
	fwd := decoder.FLOPsPerToken(m, c.MaxTokens) - 2*float64(m.Width*m.VocabSize)
	tokens := int64(len(c.Tasks)) * int64(c.Train.Steps) * int64(c.BatchSize*c.MaxTokens)
	ft := run.Training(tokens, 0, fwd)
	ft.Runs = 0
	return ft
}
