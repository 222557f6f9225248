package architecture

import (
	"fmt"
	"math"
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
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
	// Generate configures the samples and their quality measures.
	Generate GenerateConfig `json:"generate"`
	// Classify configures the downstream classification fine-tuning.
	Classify ClassifyConfig `json:"classify"`
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

// GenerateConfig configures the generation samples and their quality measures (generate.go).
type GenerateConfig struct {
	Sample      eval.SampleConfig `json:"sample"`       // temperature, top-k, new tokens (stop_token -1 means EOS)
	NumSamples  int               `json:"num_samples"`  // prompts, from validation documents; > 0
	PromptWords int               `json:"prompt_words"` // leading words of a validation document per prompt; > 0
	RepetitionN int               `json:"repetition_n"` // n of the repetition rate; > 0
}

// ClassifyConfig configures the classification fine-tuning (classify.go).
type ClassifyConfig struct {
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

// Tiny is seconds on one CPU core: the unit tests and the notebook smoke run use it. Quick's protocol (one seed,
// one policy, no search) on a smaller model and corpus.
func Tiny() Config {
	c := Quick()
	c.Data.Synthetic.NumDocs = 120
	c.Data.Tokenizer.VocabSize = 320
	c.Data.SeqLen = 32
	c.Data.BatchSize = 8
	c.Model.Width = 24
	c.Model.NumLayers = 2
	c.Model.Attention.NumHeads = 2
	c.Model.DeltaNet.NumHeads = 2
	c.Model.ProtoT.NumPrototypes = 8
	c.Model.MaxLen = 96
	c.Train.Steps = 30
	c.Train.WarmupSteps = 3
	c.Train.EvalEvery = 15
	c.Train.EvalBatches = 2
	c.Train.CheckpointEvery = 0
	c.EvalBatches = 4
	c.Test.NumDocs, c.Test.Batches = 40, 4
	c.Corpora = []string{lmdata.SourceSynthetic}
	c.Sweep = SweepConfig{Widths: []int{16, 24}, Steps: []int{15, 30}}
	c.Generate.NumSamples = 2
	c.Generate.Sample.MaxNewTokens = 12
	c.Classify.Tasks = []string{"gender"}
	c.Classify.Synthetic.NumDocs = 150
	c.Classify.Train.Steps = 60
	c.Classify.Train.WarmupSteps = 6
	return c
}

// Quick is what `make run` and notebook 10 compute at the Small preset when no protocol run (Small) is stored: a few
// minutes on 2 cores. Two-layer models of width 32 on the synthetic concept corpus, 160 steps of 8×32 tokens at one
// learning rate for every mixer, one seed, the spec's initialisation only, the comparison also on WordNet, a 2×3
// sweep (widths 16, 32; 40, 80, 160 steps), three classification tasks of 30 fine-tuning steps. One seed and no
// search: its comparison answers no claim (Claims marks them untestable).
func Quick() Config {
	d := lmdata.DefaultConfig()
	d.Synthetic.NumDocs = 2000
	d.Tokenizer.VocabSize = 1024
	d.SeqLen = 32
	d.BatchSize = 8
	m := decoder.DefaultConfig()
	m.Width = 32
	m.NumLayers = 2
	m.Attention.NumHeads = 2
	m.Attention.RoPEBase = 10_000
	m.DeltaNet.NumHeads = 2
	m.ProtoT.NumPrototypes = 16
	m.ProtoT.ChunkSize = 32 // faster than the spec's 64 on this CPU
	m.MaxLen = 128
	t := fit.DefaultConfig()
	t.Steps = 160
	t.LR = 3e-3
	t.WarmupSteps = 16
	t.EvalEvery = 40 // the validation loss against training tokens (CurvesChart)
	t.EvalBatches = 4
	t.CheckpointEvery = 0
	s := eval.DefaultSampleConfig()
	s.MaxNewTokens = 32
	cs := data.DefaultSyntheticConfig()
	cs.Seed = 1001 // unseen documents: the pretraining corpus uses seed 1
	cs.NumDocs = 300
	ct := fit.DefaultConfig()
	ct.Steps = 30
	ct.LR = 1e-2
	ct.WarmupSteps = 3
	ct.EvalEvery = 0
	ct.EvalBatches = 1
	ct.CheckpointEvery = 0
	return Config{
		Seeds:       []uint64{1},
		Mixers:      slices.Clone(decoder.KnownMixers),
		Inits:       []string{decoder.InitPyTorch},
		Data:        d,
		Model:       m,
		MatchParams: true,
		Train:       t,
		EvalBatches: 16,
		Test:        TestConfig{Seed: 9001, NumDocs: 200, Batches: 16},
		Corpora:     []string{lmdata.SourceSynthetic, lmdata.SourceWordNet},
		Sweep:       SweepConfig{Widths: []int{16, 32}, Steps: []int{40, 80, 160}},
		Generate:    GenerateConfig{Sample: s, NumSamples: 8, PromptWords: 4, RepetitionN: 4},
		Classify: ClassifyConfig{Tasks: []string{"topic", "gender", "number"}, Synthetic: cs, TestFraction: 0.3,
			MaxTokens: 24, BatchSize: 16, Pool: PoolMean, Train: ct},
	}
}

// Small is the study's protocol (issue #15 §4), `protolab run architecture --preset small`: Quick's models and data
// (D = 32, L = 2, R = 16, T = 32, B = 8, 2,000 synthetic documents, equal non-embedding parameters), trained 640
// steps (164k tokens, four times Quick's budget) under both initialisation policies, the spec's (pytorch) and
// GPT-2's. For each policy and mixer the learning rate is searched over {1e-3, 3e-3, 1e-2, 3e-2} (the same grid for
// every mixer, steps of about √10 around Quick's 3e-3, wide enough that a choice at an edge is rare and reported:
// Tuning.AtEdge) with the first seed, judged on the validation split; the chosen rate trains seeds 1, 2 and 3. The spec's §3 recipe, every mixer at one rate (3e-3), is a third comparison (spec policy, 3 seeds). Every
// run records the validation loss every 80 steps, so the ranking can be followed against training tokens and
// Comparison.Settled says whether it stopped moving. The reported perplexities are on 200 fresh documents (test seed 9001, 32 batches of 8 windows)
// that no choice reads; a second test corpus (seed 9002) is held back for this preset. Generation and
// classification use each mixer's first-seed model of the primary comparison; no WordNet comparison and no sweep.
//
// Budget: the protocol trains at most 56 models of 640 steps (2 policies × 4 mixers × (4 grid values + 2 more
// seeds), plus 2 more seeds × 4 mixers of the shared-rate comparison, fewer where a chosen rate is 3e-3), with their
// evaluations, generation and classification. It was sized, from per-piece timings on gomlx v0.26's pure-Go
// backend, to under an hour on 2 cores. `protolab cost` estimates its compute from the configuration; a stored run's
// provenance records the seconds each phase took.
func Small() Config {
	c := Quick()
	c.Seeds = []uint64{1, 2, 3}
	c.Inits = slices.Clone(decoder.KnownInits)
	c.LRGrid = []float64{1e-3, 3e-3, 1e-2, 3e-2}
	c.SharedLR = true
	c.Train.Steps = 640
	c.Train.WarmupSteps = 64
	c.Train.EvalEvery = 80
	c.Test = TestConfig{Seed: 9001, HoldoutSeed: 9002, NumDocs: 200, Batches: 32}
	c.Corpora = []string{lmdata.SourceSynthetic}
	c.Sweep = SweepConfig{}
	return c
}

// Paper is the ProtoT paper's default setting (docs/spec/protot.md §1, §3): D = 256, L = 6, R = 32, 4 heads,
// F = ⌊2.7·D/16⌋·16, T = 256, B = 32, AdamW (0.9, 0.999, ε 1e-8) at 6e-4 with weight decay 0.1, 2% warmup then
// cosine to 10%, no clipping, seeds 4257 (the spec's) and two more, a 16k vocabulary; the learning rate searched
// over {3e-4, 6e-4, 1.2e-3} beside the spec's one rate for all; GLUE-style fine-tuning pools the last token and
// trains every weight (§7.6); sampling A of §7.6 without beams (temperature 0.8, top-k 50). The paper has no
// dropout here (the decoder has none). Meant for a GPU with XLA; point data.source at FineWeb-Edu shards for the
// paper's data (a file source has no test corpus: its comparison reports the validation split).
func Paper() Config {
	c := Small()
	c.Seeds = []uint64{4257, 4258, 4259}
	c.LRGrid = []float64{3e-4, 6e-4, 1.2e-3}
	c.Data.Synthetic.NumDocs = 200_000
	c.Data.Tokenizer.VocabSize = 16_384
	c.Data.SeqLen = 256
	c.Data.BatchSize = 32
	c.Model = decoder.DefaultConfig()
	c.Model.MaxLen = 1024
	c.FFNRatio = 2.7
	c.Train = fit.DefaultConfig()
	c.Train.Steps = 20_000
	c.Train.LR = 6e-4
	c.Train.Beta2 = 0.999
	c.Train.ClipNorm = 0
	c.Train.WarmupSteps = 400
	c.Train.EvalEvery = 1000
	c.Train.CheckpointEvery = 1000
	c.EvalBatches = 0
	c.Test = TestConfig{Seed: 9001, HoldoutSeed: 9002, NumDocs: 2000, Batches: 0}
	c.Sweep = SweepConfig{Widths: []int{128, 256, 512}, Steps: []int{5000, 10_000, 20_000}}
	c.Generate.Sample.TopK = 50
	c.Generate.Sample.MaxNewTokens = 128
	c.Generate.NumSamples = 64
	c.Generate.PromptWords = 32
	c.Classify.Synthetic.NumDocs = 4000
	c.Classify.MaxTokens = 64
	c.Classify.BatchSize = 32
	c.Classify.Pool = PoolLast
	c.Classify.Train.Steps = 2000
	c.Classify.Train.LR = 1e-4
	c.Classify.Train.WarmupSteps = 100
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

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
	if err := c.Generate.validate(); err != nil {
		return errors.WithMessage(err, "generate")
	}
	return errors.WithMessage(c.Classify.validate(), "classify")
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

func (g GenerateConfig) validate() error {
	if err := g.Sample.Validate(); err != nil {
		return errors.WithMessage(err, "sample")
	}
	switch {
	case g.NumSamples <= 0:
		return errors.Errorf("num_samples=%d, want > 0", g.NumSamples)
	case g.PromptWords <= 0:
		return errors.Errorf("prompt_words=%d, want > 0", g.PromptWords)
	case g.RepetitionN <= 0:
		return errors.Errorf("repetition_n=%d, want > 0", g.RepetitionN)
	}
	return nil
}

func (c ClassifyConfig) validate() error {
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

// referenceFFN returns the reference model's FFN width at width w: ⌊FFNRatio·w/16⌋·16 when FFNRatio > 0, else
// model.ffn_hidden (0: the decoder's LLaMA rule).
func (c Config) referenceFFN(w int) int {
	if c.FFNRatio > 0 {
		return max(16, int(c.FFNRatio*float64(w)/16)*16)
	}
	return c.Model.FFNHidden
}

// modelFor returns the model of mixer at width w, its FFN resized by the equal-parameter rule when MatchParams is
// set, and the match report.
func (c Config) modelFor(mixer string, w int) (decoder.Config, lm.ParamMatch, error) {
	ref := c.Model
	ref.Mixer = c.Mixers[0]
	ref.Width = w
	ref.VocabSize = c.Data.Tokenizer.VocabSize
	ref.FFNHidden = c.referenceFFN(w)
	if err := ref.Validate(); err != nil {
		return ref, lm.ParamMatch{}, errors.WithMessagef(err, "model (mixer %s, width %d)", ref.Mixer, w)
	}
	m := ref
	m.Mixer = mixer
	if !c.MatchParams {
		if err := m.Validate(); err != nil {
			return m, lm.ParamMatch{}, errors.WithMessagef(err, "model (mixer %s, width %d)", mixer, w)
		}
		return m, lm.ParamMatch{Reference: ref.Mixer, Target: lm.NonEmbeddingParams(ref),
			Achieved: lm.NonEmbeddingParams(m), FFNWidth: m.FFNWidth(), ReferenceFFNWidth: ref.FFNWidth()}, nil
	}
	return lm.MatchParams(ref, mixer)
}

// Point is one trained configuration of the study, trained once per seed: a mixer under an initialisation policy
// at a learning rate, on a source, at a width, for a number of steps.
type Point struct {
	Mixer  string  `json:"mixer"`
	Source string  `json:"source"`
	Init   string  `json:"init"`
	LR     float64 `json:"lr"`
	Width  int     `json:"width"`
	Steps  int     `json:"steps"`
}

// ModelFor returns the model of mixer trained on source at width w for `steps` steps with seed, under the primary
// init at train.lr: ModelAt of that point.
func (c Config) ModelFor(mixer, source string, w, steps int, seed uint64) (lm.Config, lm.ParamMatch, error) {
	return c.ModelAt(Point{Mixer: mixer, Source: source, Init: c.primaryInit(), LR: c.Train.LR, Width: w,
		Steps: steps}, seed)
}

// primaryInit returns the first of Inits, the policy of the sweep, the top models and the main claims (the
// decoder's default when Inits is empty).
func (c Config) primaryInit() string {
	if len(c.Inits) == 0 {
		return decoder.InitPyTorch
	}
	return c.Inits[0]
}

// ModelAt returns the model of point p with seed: the study's data, model (matched by the equal-parameter rule when
// MatchParams is set, under p's init policy) and training settings at p's learning rate, with the warmup scaled by
// steps/train.steps, and its final perplexity over eval_batches validation batches.
func (c Config) ModelAt(p Point, seed uint64) (lm.Config, lm.ParamMatch, error) {
	m, match, err := c.modelFor(p.Mixer, p.Width)
	if err != nil {
		return lm.Config{}, match, err
	}
	m.Init = p.Init
	d := c.Data
	d.Source = p.Source
	t := c.Train
	t.Steps = p.Steps
	t.LR = p.LR
	t.WarmupSteps = min(p.Steps, (c.Train.WarmupSteps*p.Steps+c.Train.Steps/2)/c.Train.Steps)
	return lm.Config{Seed: seed, Data: d, Model: m, Head: lm.HeadDense, Train: t, EvalBatches: c.EvalBatches}.Resolved(),
		match, nil
}
