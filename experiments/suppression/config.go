package suppression

import (
	"fmt"
	"reflect"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the study. Start from a preset (Small, Quick, Tiny, Paper); change fields or apply run.Override.
type Config struct {
	// Config is the recipe of the PRISM model whose prototypes are suppressed (seed, data, model, head "prism",
	// prism, train, eval_batches; JSON keys at the top level). Its corpus (data.source) is the synthetic concept
	// corpus or the Brown corpus.
	lm.Config
	// Corpora are the corpora the study runs on, each alone with the same settings (protocol v2, docs/PROTOCOL.md:
	// "synthetic" and "brown"): every model is trained on each, and the concept is defined on each its own way
	// (Settings). Empty means data.source alone; when set, corpora[0] must equal data.source (the first corpus is
	// the configured model's) and the entries must differ.
	Corpora []string `json:"corpora,omitempty"`
	// Seeds are the training seeds: one model per seed (and per bank size, see SpecRangeK), each the recipe with
	// seed replaced (weights, data split, tokenizer, batch order and bank seeding all follow it; the Brown split is
	// fixed); empty means [seed]. A claim needs at least 3.
	Seeds []uint64 `json:"seeds"`
	// SpecRangeK, when > 0, adds a second model per seed: the same recipe with prism.num_prototypes = SpecRangeK
	// (or spec_range_model's, when that is set), meant to lie in docs/spec/prism.md §12's range 8D–16D when the
	// recipe's own K does not; 0 means none.
	SpecRangeK int `json:"spec_range_k"`
	// SpecRangeModel, when set (not the zero value), is the spec-range model's own recipe (shape, data and training;
	// seed, data.source and prism.num_prototypes are replaced by the model's seed, corpus and spec_range_k): a second
	// bank of another shape than the recipe's. Unset, the spec-range model is the recipe with K = spec_range_k
	// (protocol v1). It needs spec_range_k > 0.
	SpecRangeModel lm.Config `json:"spec_range_model,omitzero"`
	// Suppress configures the concept, the selection of Ω and the measurements.
	Suppress Settings `json:"suppress"`
	// HeldBack is a second evaluation (prompts, sampling, validation text) that no preset runs: it stays untouched
	// until the settings are final, then confirms the protocol's figures once. UseHeldBack evaluates on it instead of
	// suppress.prompt_seed, suppress.sample.seed and suppress.text_seed.
	HeldBack    Eval `json:"held_back"`
	UseHeldBack bool `json:"use_held_back"`
}

// Eval names the seeds of one evaluation.
type Eval struct {
	PromptSeed uint64 `json:"prompt_seed"` // fresh documents whose first sentences are the prompts
	SampleSeed uint64 `json:"sample_seed"` // the sampler's seed (batch b uses seed + b)
	TextSeed   uint64 `json:"text_seed"`   // fresh documents whose perplexities are measured
}

// Keyword selection rules of Settings.Rule (mprism.KeywordRule, equations 1–3 of models/prism/suppress_select.go).
const (
	RuleContexts  = mprism.RuleContexts  // spec §10: the share of the top contexts that hold a keyword
	RuleMass      = mprism.RuleMass      // our variant: the share of the activation mass on such contexts
	RuleSignature = mprism.RuleSignature // our variant: the share of the most promoted tokens that begin a keyword
)

// Settings configures concept suppression (docs/spec/prism.md §10) on one model: keyword selection of the
// prototypes Ω, then generation and perplexity with Ω suppressed.
type Settings struct {
	// Concept and Value name the suppressed concept of the synthetic corpus (data.SyntheticWords gives its
	// keywords when Keywords is empty), e.g. "topic" and "food".
	Concept string `json:"concept"`
	Value   string `json:"value"`
	// Supersense names the concept on the Brown corpus, which has no labels: the words of this WordNet noun
	// supersense, a word belonging when its most frequent noun sense has it (wordnet.DB.SupersenseWords; WordNet
	// from `make wordnet`), e.g. "noun.food". Needed for the corpus "brown" unless keywords are given.
	Supersense string `json:"supersense,omitempty"`
	// Keywords, when set, replaces the concept's word list on every corpus (words match whole, case-sensitive).
	Keywords []string `json:"keywords"`
	// Prototypes, when set, is Ω itself (bank indices) and the keyword selection is skipped.
	Prototypes []int `json:"prototypes"`
	// KeywordRule selects Ω (mprism.SelectByKeywords): rule, top_contexts, signature_tokens, min_hit_rate,
	// min_contexts, window_before, window_after, select_batches (JSON keys at this level).
	mprism.KeywordRule
	// Samples is the number of generations per mode, from prompts made, on the synthetic corpus, of the first
	// sentence of fresh documents (seed PromptSeed), which names the referent and a city but no topic, and on the
	// Brown corpus of sentences without a keyword (brown_docs, prompt_words); > 1.
	Samples    int    `json:"samples"`
	PromptSeed uint64 `json:"prompt_seed"`
	// SampleBatch is the number of rows generated together; > 0.
	SampleBatch int `json:"sample_batch"`
	// Sample sets the sampler (max_new_tokens, temperature, top_k, seed); generation stops at the
	// end-of-document token whatever stop_token says. Batch b uses seed + b in every mode.
	Sample eval.SampleConfig `json:"sample"`
	// TextSeed seeds TextDocs fresh synthetic documents whose perplexities are measured (validation text no model
	// trained on and no choice saw; on the Brown corpus the brown_docs documents of the split it names); 0 means the
	// model's own validation split instead.
	TextSeed uint64 `json:"text_seed"`
	TextDocs int    `json:"text_docs"`
	// EvalSequences caps the validation sequences of each perplexity (text without keywords, text with); > 0.
	EvalSequences int `json:"eval_sequences"`
	// Examples is the number of completions kept per mode in the result.
	Examples int `json:"examples"`
	// BrownDocs is the number of documents read, on the Brown corpus, from the evaluation split that prompt_seed and
	// text_seed each name (lm.Model.FreshCorpus: an odd seed reads the test split, an even one the held-out split;
	// its first documents in corpus order): the prompts' sentences and the perplexity text come from them (the
	// synthetic corpus reads samples and text_docs fresh documents instead). > 0 for the corpus "brown", at most
	// the split's size (FreshCorpus names it).
	BrownDocs int `json:"brown_docs,omitempty"`
	// PromptWords is, on the Brown corpus, the number of words kept of each prompt sentence (its first; sentences
	// with no keyword and at least mprism.PromptMinWords words, taken from the documents in turn:
	// mprism.KeywordFreePrompts). > 0 for the corpus "brown".
	PromptWords int `json:"prompt_words,omitempty"`
}

// Small is the study's protocol v2 (docs/PROTOCOL.md, "suppression"; `protolab run suppression --preset small`):
// the recipe below is frozen as it was chosen on the development evaluation (Quick's seeds), and is measured again
// on evaluation data from seeds no choice used, over three training seeds, on two bank sizes, on the synthetic corpus
// and on the Brown corpus, each alone:
//
//   - the suppression model: lm.PrismSmall trained 4800 updates at lr 1e-2 with K = 2048 = 64·D, k = 16, the bank
//     seeded from 16 batches: protocol v1's model, kept at its size because at the v2 shape 4800 updates of a
//     bank of 64·D = 4096 would not fit the hour on two corpora. Its K lies outside spec §12's 8D–16D, and it is not the model of the quality study;
//     the result says so. The recipe trains longer with a larger bank because, when it was chosen, no keyword rule
//     selected any prototype of the quality study's model.
//   - the spec-range model: the recipe moved to the v2 PRISM shape (lm.PrismSmallV2: D = 64 with 4 heads, L = 2,
//     T = 64, B = 16, 10,000 synthetic documents) with K = 1024 = 16·D, the upper end of spec §12's range, and the
//     recipe's k = 16, lr 1e-2 and 16 seeding batches, trained lm.PrismSmallV2's 500 updates.
//   - for each, training seeds 1, 2 and 3; selection by spec §10's rule "contexts" (the top 50 contexts of 64
//     training batches, 8 tokens back and 1 ahead, a 50% hit rate with at least 10 contexts); 512 samples of 40
//     tokens at temperature 1 (sampler seed 3202).
//   - synthetic corpus: topic "food" by its labels' words; prompts of fresh documents (prompt seed 3201);
//     perplexities on up to 256 sequences of each kind cut from 1,200 fresh documents (text seed 3203).
//   - Brown corpus: the words of WordNet's noun.food supersense (by each word's most frequent noun sense); prompts
//     of the first 12 words of keyword-free sentences of the test split's first 28 documents (prompt seed 3201,
//     odd: the test split); perplexities on up to 256 sequences of each kind of the same documents (text seed 3203).
//   - the held-back evaluation (prompt seed 3302, sampler seed 3303, text seed 3304; even seeds: on Brown the
//     held-out split's first 28 documents) is not run.
//
// Budget: per corpus six models (three of each bank), then Suppress with 512 samples per model in three modes;
// sized with protolab cost and a short timing run to docs/DESIGN.md's Small budget (about an hour per study on 2
// cores). The models are stored under run.Out/models, so a rerun only evaluates. `protolab cost` estimates its
// compute from the configuration; a stored run's provenance records the seconds each phase took. Protocol v1 (both
// banks at lm.PrismSmall's shape, the synthetic corpus only, held-back seeds 3301–3303) is Small at commit 8706f7f.
func Small() Config {
	c := Quick()
	c.Seeds = []uint64{1, 2, 3}
	c.Corpora = []string{lmdata.SourceSynthetic, lmdata.SourceBrown}
	sr := lm.PrismSmallV2()
	sr.Train.LR = c.Train.LR
	sr.Prism.TopK, sr.Prism.SeedBatches = c.Prism.TopK, c.Prism.SeedBatches
	c.SpecRangeModel, c.SpecRangeK = sr, 16*sr.Model.Width
	s := &c.Suppress
	s.PromptSeed, s.Sample.Seed, s.TextSeed, s.TextDocs = 3201, 3202, 3203, 1200
	s.Supersense, s.BrownDocs, s.PromptWords = "noun.food", 28, 12
	c.HeldBack = Eval{PromptSeed: 3302, SampleSeed: 3303, TextSeed: 3304}
	return c
}

// Quick is what notebooks and `make run` show when no protocol result is stored: the Small recipe on one model
// (seed 1, K = 2048) of the synthetic corpus, evaluated on the development data its settings were chosen with
// (prompt seed 2002, sampler seed 11, the model's validation split): the model's 4800 updates, then one Suppress,
// within docs/DESIGN.md's Quick budget (minutes per notebook on 2 cores).
func Quick() Config {
	m := lm.PrismSmall()
	m.Train.Steps, m.Train.LR = 4800, 1e-2
	m.Prism.NumPrototypes, m.Prism.TopK, m.Prism.SeedBatches = 2048, 16, 16
	return Config{Config: m, Seeds: []uint64{m.Seed}, Suppress: Settings{Concept: "topic", Value: "food",
		KeywordRule: mprism.KeywordRule{Rule: RuleContexts, TopContexts: 50, SignatureTokens: 10, MinHitRate: 0.5,
			MinContexts: 10, WindowBefore: 8, WindowAfter: 1, SelectBatches: 64},
		Samples: 512, PromptSeed: 2002, SampleBatch: 64,
		Sample:        eval.SampleConfig{MaxNewTokens: 40, Temperature: 1, StopToken: -1, Seed: 11},
		EvalSequences: 256, Examples: 4},
		HeldBack: Eval{PromptSeed: 3301, SampleSeed: 3302, TextSeed: 3303}}
}

// Tiny is seconds on one CPU core: the Small protocol cut down, on lm.PrismTiny (the model the other PRISM studies
// analyse at this preset) with two seeds and a second bank of K = 32 (2·D: Tiny only exercises the code), on the
// synthetic corpus alone with protocol v1's held-back seeds: Tiny is what it was before v2.
func Tiny() Config {
	c := Small()
	c.Config = lm.PrismTiny()
	c.Corpora, c.SpecRangeModel = nil, lm.Config{}
	c.Seeds = []uint64{1, 2}
	c.SpecRangeK = 32
	s := &c.Suppress
	s.Supersense, s.BrownDocs, s.PromptWords = "", 0, 0
	s.TopContexts, s.MinContexts, s.SelectBatches, s.Samples, s.SampleBatch = 10, 3, 4, 8, 4
	s.Sample.MaxNewTokens, s.TextDocs, s.EvalSequences, s.Examples = 8, 60, 8, 2
	c.HeldBack = Eval{PromptSeed: 3301, SampleSeed: 3302, TextSeed: 3303}
	return c
}

// Paper is the Small protocol on spec §12's model (lm.PrismPaper: K = 4096 = 16·D, already in the spec's range, so
// no second bank) on data.source alone. Meant for a GPU with XLA.
func Paper() Config {
	c := Small()
	c.Config = lm.PrismPaper()
	c.Corpora, c.SpecRangeModel, c.SpecRangeK = nil, lm.Config{}, 0
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// Model labels of a Result's runs.
const (
	// ModelRecipe is the model of the Config's own recipe (at Small the K = 64·D suppression model).
	ModelRecipe = "recipe"
	// ModelSpecRange is the recipe with K = spec_range_k.
	ModelSpecRange = "spec_range"
)

// ModelConfig is one model the study trains: its label and configuration (its corpus is Config.Data.Source).
type ModelConfig struct {
	Label  string
	Config lm.Config
}

// Models lists the models of the study, corpus by corpus (Sources): ModelsOn of each.
func (c Config) Models() []ModelConfig {
	var out []ModelConfig
	for _, src := range c.Sources() {
		out = append(out, c.ModelsOn(src)...)
	}
	return out
}

// ModelsOn lists the models of the study on corpus source: for each label (ModelRecipe, then ModelSpecRange when
// SpecRangeK > 0), one per training seed, with data.source = source.
func (c Config) ModelsOn(source string) []ModelConfig {
	seeds := c.Seeds
	if len(seeds) == 0 {
		seeds = []uint64{c.Seed}
	}
	var out []ModelConfig
	for _, label := range []string{ModelRecipe, ModelSpecRange} {
		if label == ModelSpecRange && c.SpecRangeK == 0 {
			continue
		}
		for _, s := range seeds {
			m := c.Config
			if label == ModelSpecRange {
				if c.hasSpecRangeModel() {
					m = c.SpecRangeModel
				}
				m.Prism.NumPrototypes = c.SpecRangeK
			}
			m.Seed, m.Data.Source = s, source
			out = append(out, ModelConfig{Label: label, Config: m})
		}
	}
	return out
}

// hasSpecRangeModel reports whether spec_range_model is set (not the zero value).
func (c Config) hasSpecRangeModel() bool { return !reflect.ValueOf(c.SpecRangeModel).IsZero() }

// Settings returns the suppression settings of the evaluation the Config runs: Suppress, with the held-back seeds
// when UseHeldBack is set.
func (c Config) Settings() Settings {
	s := c.Suppress
	if c.UseHeldBack {
		s.PromptSeed, s.Sample.Seed, s.TextSeed = c.HeldBack.PromptSeed, c.HeldBack.SampleSeed, c.HeldBack.TextSeed
	}
	return s
}

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	if c.Head != lm.HeadPrism {
		return errors.Errorf("head=%q, want %q (suppression removes prototypes)", c.Head, lm.HeadPrism)
	}
	seen := map[uint64]bool{}
	for i, s := range c.Seeds {
		if seen[s] {
			return errors.Errorf("seeds[%d]=%d repeats a seed; each model needs its own", i, s)
		}
		seen[s] = true
	}
	if c.SpecRangeK < 0 {
		return errors.Errorf("spec_range_k=%d, want ≥ 0 (0: no second model)", c.SpecRangeK)
	}
	if c.hasSpecRangeModel() && c.SpecRangeK == 0 {
		return errors.New("spec_range_model is set but spec_range_k=0: set spec_range_k to its bank size, or unset " +
			"spec_range_model")
	}
	if err := c.validateCorpora(); err != nil {
		return err
	}
	for _, m := range c.Models() {
		if err := m.Config.Validate(); err != nil {
			if m.Label == ModelSpecRange {
				if c.hasSpecRangeModel() {
					return errors.WithMessagef(err, "spec_range_model (with spec_range_k=%d)", c.SpecRangeK)
				}
				return errors.WithMessagef(err, "spec_range_k=%d", c.SpecRangeK)
			}
			return errors.WithMessagef(err, "corpus %q", m.Config.Data.Source)
		}
		if m.Label == ModelSpecRange && m.Config.Head != lm.HeadPrism {
			return errors.Errorf("spec_range_model.head=%q, want %q (suppression removes prototypes)", m.Config.Head,
				lm.HeadPrism)
		}
	}
	h := c.HeldBack
	if h.PromptSeed == 0 || h.TextSeed == 0 {
		return errors.Errorf("held_back.prompt_seed=%d, held_back.text_seed=%d, want both set (fresh documents)",
			h.PromptSeed, h.TextSeed)
	}
	if s := c.Suppress; !c.UseHeldBack && (h.PromptSeed == s.PromptSeed || h.TextSeed == s.TextSeed ||
		h.SampleSeed == s.Sample.Seed) {
		return errors.New("held_back repeats a seed of suppress (prompt_seed, sample.seed or text_seed): the " +
			"held-back evaluation must stay untouched")
	}
	s := c.Settings()
	if err := s.Validate(); err != nil {
		return errors.WithMessage(err, "suppress")
	}
	for _, seed := range []uint64{s.PromptSeed, s.TextSeed} {
		if seed != 0 && seed == c.Data.Synthetic.Seed {
			return errors.Errorf("suppress: seed %d equals data.synthetic.seed: prompts and validation text must "+
				"come from documents no model trained on", seed)
		}
	}
	return c.validateBrown()
}

// Validate reports the first problem of the settings, naming its key.
func (s Settings) Validate() error {
	if len(s.Keywords) == 0 && (s.Concept == "" || s.Value == "") {
		return errors.New("concept and value are empty and no keywords are given")
	}
	if err := s.KeywordRule.Validate(); err != nil {
		return err
	}
	switch {
	case s.Samples < 2:
		return errors.Errorf("samples=%d, want ≥ 2 (a standard error needs two)", s.Samples)
	case s.SampleBatch <= 0:
		return errors.Errorf("sample_batch=%d, want > 0", s.SampleBatch)
	case s.TextSeed != 0 && s.TextDocs < 2:
		return errors.Errorf("text_docs=%d, want ≥ 2 when text_seed is set (0: the validation split)", s.TextDocs)
	case s.EvalSequences <= 0:
		return errors.Errorf("eval_sequences=%d, want > 0", s.EvalSequences)
	case s.Examples < 0:
		return errors.Errorf("examples=%d, want ≥ 0", s.Examples)
	}
	for i, p := range s.Prototypes {
		if p < 0 {
			return errors.Errorf("prototypes[%d]=%d, want ≥ 0", i, p)
		}
	}
	return errors.WithMessage(s.Sample.Validate(), "sample")
}

// inSpecRange reports whether K lies in docs/spec/prism.md §12's range 8D–16D.
func inSpecRange(K, D int) bool { return K >= 8*D && K <= 16*D }

// modelNote says what a model is relative to the spec and to the PRISM model the other studies (prismhead's
// quality comparison among them) analyse at the same width (lm.PrismTiny, PrismSmall, PrismSmallV2, PrismPaper).
func modelNote(K, D, k, steps int) string {
	where := "inside"
	if !inSpecRange(K, D) {
		where = "outside"
	}
	s := fmt.Sprintf("K = %d = %g·D (D = %d), %s spec §12's 8D–16D; k = %d; %d updates", K, float64(K)/float64(D),
		D, where, k, steps)
	for _, q := range []lm.Config{lm.PrismTiny(), lm.PrismSmall(), lm.PrismSmallV2(), lm.PrismPaper()} {
		if q.Model.Width != D {
			continue
		}
		if p := q.Prism; p.NumPrototypes != K || p.TopK != k || q.Train.Steps != steps {
			s += fmt.Sprintf("; not the model of the quality study at this width (prismhead: K = %d, k = %d, %d "+
				"updates)", p.NumPrototypes, p.TopK, q.Train.Steps)
		}
	}
	return s
}
