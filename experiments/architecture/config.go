package architecture

import (
	"fmt"
	"math"
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/classify"
	"github.com/protolab/protolab/models/generation"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
)

// Config configures the study. Start from a preset (Tiny, Quick, Small, Paper); change fields or apply
// run.Override.
type Config struct {
	// Seeds lists the seeds of every point: one training run per seed; with more than one, results are mean ± s.e.
	// The first seed also runs the learning-rate search (lr_grid). The claims need at least 3.
	Seeds []uint64 `json:"seeds"`
	// Mixers are the compared mixers (values of decoder.Config.Mixer); the first is the parameter reference.
	Mixers []string `json:"mixers"`
	// Inits are the decoder initialisation policies compared (decoder.KnownInits), one comparison each; the first
	// (the spec's "pytorch" in the presets) is the primary one: the sweep, the generation and classification
	// models, and the main claims use it.
	Inits []string `json:"inits"`
	// LRGrid is the learning-rate grid searched for every (init, mixer) on data.source: one run per grid value with
	// the first seed, judged by its final loss on the validation split (documents carved from the training corpus);
	// the best value trains every seed of that (init, mixer). Empty: every mixer trains at train.lr (no search).
	LRGrid []float64 `json:"lr_grid"`
	// SharedLR adds, beside the searched comparison, the recipe of docs/spec/protot.md §3 ("use the defaults for all
	// models"): every mixer at train.lr, primary init, data.source. Needs lr_grid (without it that is the comparison).
	SharedLR bool `json:"shared_lr"`
	// Data is the corpus, tokenizer, T and B of every run; data.source and data.seed are set per run.
	Data lmdata.Config `json:"data"`
	// Model is the reference model; mixer, width, vocab_size and ffn_hidden are set per run.
	Model decoder.Config `json:"model"`
	// FFNRatio > 0 sets the reference FFN width at every width D to ⌊FFNRatio·D/16⌋·16 (docs/spec/protot.md §1);
	// 0 keeps model.ffn_hidden (0 there means the LLaMA rule).
	FFNRatio float64 `json:"ffn_ratio"`
	// MatchParams resizes the FFN of every mixer so that its non-embedding parameter count equals the reference
	// mixer's at the same width (doc.go, "Equal parameter count"); false compares the mixers at equal width only.
	MatchParams bool `json:"match_params"`
	// Train is the optimizer and schedule; train.steps is the comparison's budget, and warmup_steps scales with
	// the steps of each sweep point.
	Train fit.Config `json:"train"`
	// EvalBatches is the number of validation batches of each run's final perplexity; 0 means all of them.
	EvalBatches int `json:"eval_batches"`
	// Test is the evaluation data of the reported perplexities: synthetic documents that no choice of the study
	// reads.
	Test TestConfig `json:"test"`
	// Corpora are the data sources of the equal-parameter comparison ("synthetic", "wordnet", files); the learning
	// rates searched on data.source serve every corpus.
	Corpora []string `json:"corpora"`
	// Sweep is the width × training-steps grid, trained on data.source at train.lr with the primary init; both
	// lists empty: no sweep.
	Sweep SweepConfig `json:"sweep"`
	// Generate configures the samples and their quality measures (models/generation).
	Generate generation.Config `json:"generate"`
	// Classify configures the downstream classification fine-tuning (models/classify).
	Classify classify.Config `json:"classify"`
}

// TestConfig is the test data of the synthetic corpus: fresh documents from the same grammar (data.synthetic with
// another seed), tokenized by each model's tokenizer and cut into non-overlapping windows of T tokens (§7.1). A
// model trained on another source has no test data: its comparison reports the validation split only.
type TestConfig struct {
	// Seed generates the test corpus of the reported perplexities; not data.synthetic.seed nor
	// classify.synthetic.seed. No choice (learning rate, settings) reads it.
	Seed uint64 `json:"seed"`
	// HoldoutSeed generates a second test corpus, held back: only the protocol presets (Small, Paper) evaluate it,
	// once their settings are frozen; 0 skips it.
	HoldoutSeed uint64 `json:"holdout_seed"`
	// NumDocs is the number of documents of each test corpus; > 0.
	NumDocs int `json:"num_docs"`
	// Batches is the number of evaluation batches (data.eval_batch_size windows each) per test corpus; 0 means all.
	Batches int `json:"batches"`
}

// SweepConfig is the scaling grid: one run per (mixer, width, steps, seed).
type SweepConfig struct {
	Widths []int `json:"widths"` // model widths D, ascending; each > 0
	Steps  []int `json:"steps"`  // training steps, ascending; tokens = steps·B·T
}

// Validate reports the first problem of the configuration, naming its key. Every (mixer, width) of the study is
// built and, with match_params, matched, so a width a mixer cannot take is reported here.
func (c Config) Validate() error {
	if len(c.Seeds) == 0 {
		return errors.New("seeds is empty; want at least one seed")
	}
	if len(c.Mixers) == 0 {
		return errors.New("mixers is empty; want at least one of " + fmt.Sprint(decoder.KnownMixers))
	}
	for i, m := range c.Mixers {
		if !slices.Contains(decoder.KnownMixers, m) {
			return errors.Errorf("mixers[%d]=%q is unknown; known mixers: %v", i, m, decoder.KnownMixers)
		}
		if slices.Index(c.Mixers, m) != i {
			return errors.Errorf("mixers lists %q twice", m)
		}
	}
	if err := c.Data.Validate(); err != nil {
		return err
	}
	if err := c.Train.Validate(); err != nil {
		return errors.WithMessage(err, "train")
	}
	switch {
	case c.FFNRatio < 0:
		return errors.Errorf("ffn_ratio=%g, want ≥ 0 (0 means model.ffn_hidden)", c.FFNRatio)
	case c.EvalBatches < 0:
		return errors.Errorf("eval_batches=%d, want ≥ 0 (0 means all)", c.EvalBatches)
	case len(c.Corpora) == 0:
		return errors.New("corpora is empty; want at least one data source")
	case (len(c.Sweep.Widths) == 0) != (len(c.Sweep.Steps) == 0):
		return errors.Errorf("sweep.widths=%v, sweep.steps=%v; want both non-empty, or both empty for no sweep",
			c.Sweep.Widths, c.Sweep.Steps)
	case len(c.Inits) == 0:
		return errors.Errorf("inits is empty; want at least one of %v", decoder.KnownInits)
	case c.SharedLR && len(c.LRGrid) == 0:
		return errors.New("shared_lr=true needs lr_grid: without a search every mixer already trains at train.lr")
	}
	for i, in := range c.Inits {
		if !slices.Contains(decoder.KnownInits, in) {
			return errors.Errorf("inits[%d]=%q is unknown; known policies: %v", i, in, decoder.KnownInits)
		}
		if slices.Index(c.Inits, in) != i {
			return errors.Errorf("inits lists %q twice", in)
		}
	}
	for i, lr := range c.LRGrid {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return errors.Errorf("lr_grid[%d]=%g, want a finite value > 0", i, lr)
		}
		if slices.Index(c.LRGrid, lr) != i {
			return errors.Errorf("lr_grid lists %g twice", lr)
		}
	}
	if err := c.Test.validate(c); err != nil {
		return errors.WithMessage(err, "test")
	}
	for name, xs := range map[string][]int{"sweep.widths": c.Sweep.Widths, "sweep.steps": c.Sweep.Steps} {
		for i, x := range xs {
			if x <= 0 || (i > 0 && x <= xs[i-1]) {
				return errors.Errorf("%s=%v, want positive and strictly ascending", name, xs)
			}
		}
	}
	for _, w := range append([]int{c.Model.Width}, c.Sweep.Widths...) {
		for _, m := range c.Mixers {
			if _, _, err := c.modelFor(m, w); err != nil {
				return err
			}
		}
	}
	if err := c.Generate.Validate(); err != nil {
		return errors.WithMessage(err, "generate")
	}
	return errors.WithMessage(c.Classify.Validate(), "classify")
}

func (t TestConfig) validate(c Config) error {
	used := map[uint64]string{c.Data.Synthetic.Seed: "data.synthetic.seed",
		c.Classify.Synthetic.Seed: "classify.synthetic.seed"}
	switch {
	case t.NumDocs <= 0:
		return errors.Errorf("num_docs=%d, want > 0", t.NumDocs)
	case t.Batches < 0:
		return errors.Errorf("batches=%d, want ≥ 0 (0 means all)", t.Batches)
	case used[t.Seed] != "":
		return errors.Errorf("seed=%d equals %s: the test documents would not be fresh", t.Seed, used[t.Seed])
	case t.HoldoutSeed != 0 && (used[t.HoldoutSeed] != "" || t.HoldoutSeed == t.Seed):
		return errors.Errorf("holdout_seed=%d repeats data.synthetic.seed, classify.synthetic.seed or test.seed; "+
			"want a fresh seed (or 0 for none)", t.HoldoutSeed)
	}
	return nil
}
