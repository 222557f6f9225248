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
	// The claims need at least 3.
	Seeds []uint64 `json:"seeds"`
	// TuneSeed is the seed of the learning-rate search (lr_grid); it must not be one of seeds, so that no replicate
	// the claims pool was used for a choice. 0 means the first of seeds (protocol v1, whose search seed is also a
	// replicate).
	TuneSeed uint64 `json:"tune_seed,omitempty"`
	// Mixers are the compared mixers (values of decoder.Config.Mixer); the first is the parameter reference.
	Mixers []string `json:"mixers"`
	// Inits are the decoder initialisation policies compared (decoder.KnownInits), one comparison each; the first
	// (the spec's "pytorch" in the presets) is the primary one: the sweep, the generation and classification
	// models, and the main claims use it.
	Inits []string `json:"inits"`
	// LRGrid is the learning-rate grid searched for every (corpus, init, mixer) of corpora: one run per grid value
	// with the tuning seed (tune_seed), judged by its final loss on the corpus's validation split; the best value
	// trains every seed of that (corpus, init, mixer). Empty: every mixer trains at train.lr (no search).
	LRGrid []float64 `json:"lr_grid"`
	// SharedLR adds, beside the searched comparison of each corpus, the recipe of docs/spec/protot.md §3 ("use the
	// defaults for all models"): every mixer at train.lr, primary init, on every corpus of corpora. Needs lr_grid
	// (without it that is the comparison).
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
	// Test is the evaluation data of the reported perplexities, documents no choice of the study reads: fresh
	// synthetic documents, or the Brown corpus's test and held-out splits (lm.Model.FreshCorpus).
	Test TestConfig `json:"test"`
	// Corpora are the data sources of the equal-parameter comparison ("synthetic", "brown", "wordnet", files), each
	// with its own learning-rate search (lr_grid).
	Corpora []string `json:"corpora"`
	// Sweep is the width × training-steps grid, trained on data.source at train.lr with the primary init; both
	// lists empty: no sweep.
	Sweep SweepConfig `json:"sweep"`
	// Generate configures the samples and their quality measures (models/generation).
	Generate generation.Config `json:"generate"`
	// Classify configures the downstream classification fine-tuning (models/classify).
	Classify classify.Config `json:"classify"`
}

// TestConfig is the test data of a corpus that has some (lm.Model.FreshCorpus): fresh documents of the synthetic
// corpus (data.synthetic with another seed), or the Brown corpus's test split (an odd seed) and held-out split (an
// even seed), tokenized by each model's tokenizer and cut into non-overlapping windows of T tokens (§7.1). A model
// trained on another source has no test data: its comparison reports the validation split only.
type TestConfig struct {
	// Seed generates the test corpus of the reported perplexities; not data.synthetic.seed nor
	// classify.synthetic.seed; odd, so that on Brown it reads the test split. No choice (learning rate, settings)
	// reads it.
	Seed uint64 `json:"seed"`
	// HoldoutSeed generates a second test corpus, held back: only the protocol presets (Small, Paper) evaluate it,
	// once their settings are frozen; 0 skips it.
	HoldoutSeed uint64 `json:"holdout_seed"`
	// NumDocs is the number of documents of each synthetic test corpus; > 0.
	NumDocs int `json:"num_docs"`
	// BrownDocs is the number of documents read from each Brown evaluation split (its first, in corpus order), when
	// corpora lists "brown": 1 to the smaller split's size (lm.Model.FreshCorpus names it). A Brown sample is about
	// 2,000 words, so a few dozen give more test tokens than num_docs synthetic documents.
	BrownDocs int `json:"brown_docs,omitempty"`
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
	case slices.Contains(c.Corpora, lmdata.SourceBrown) && c.Test.BrownDocs <= 0:
		return errors.Errorf("test.brown_docs=%d with \"brown\" in corpora; want the number of documents of each Brown "+
			"evaluation split to test on (> 0)", c.Test.BrownDocs)
	case c.TuneSeed != 0 && slices.Contains(c.Seeds, c.TuneSeed):
		return errors.Errorf("tune_seed=%d is one of seeds %v: the search seed must not be a replicate the claims "+
			"pool (or 0: the first seed, as protocol v1)", c.TuneSeed, c.Seeds)
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

// tuneSeed is the seed of the learning-rate search: tune_seed, or the first of seeds when it is 0.
func (c Config) tuneSeed() uint64 {
	if c.TuneSeed != 0 {
		return c.TuneSeed
	}
	return c.Seeds[0]
}
