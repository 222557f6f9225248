package suppression

import (
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the study. Start from a preset (Tiny, Small, Paper); change fields or apply run.Override.
type Config struct {
	// Config is the PRISM model whose prototypes are suppressed (seed, data, model, head "prism", prism, train,
	// eval_batches; JSON keys at the top level). Its corpus must be the synthetic concept corpus.
	lm.Config
	// Suppress configures the concept, the selection of Ω and the measurements.
	Suppress Settings `json:"suppress"`
}

// Keyword selection rules of Settings.Rule.
const (
	// RuleContexts is spec §10's rule: a prototype is selected when at least MinHitRate of its TopContexts most
	// activating contexts contain a keyword.
	RuleContexts = "contexts"
	// RuleMass (our variant) weighs every activation of a prototype over the scanned tokens: it is selected when
	// the share of its activation mass Σa on contexts with a keyword is at least MinHitRate. It favours
	// prototypes that are specific to the concept over ones that are broadly active but peak on it.
	RuleMass = "mass"
	// RuleSignature (our variant) reads the prototype's card instead of its contexts: it is selected when at
	// least MinHitRate of the SignatureTokens tokens its logit signature W p_i promotes most are keyword tokens
	// (tokens that begin a keyword and no other word of the training text). It uses the model only.
	RuleSignature = "signature"
)

// Rules lists the values of Settings.Rule.
var Rules = []string{RuleContexts, RuleMass, RuleSignature}

// Settings configures concept suppression (docs/spec/prism.md §10): keyword selection of the prototypes Ω, then
// generation and perplexity with Ω suppressed.
type Settings struct {
	// Concept and Value name the suppressed concept of the synthetic corpus (data.SyntheticWords gives its
	// keywords when Keywords is empty), e.g. "topic" and "food".
	Concept string `json:"concept"`
	Value   string `json:"value"`
	// Keywords, when set, replaces the concept's word list (words match whole, case-sensitive).
	Keywords []string `json:"keywords"`
	// Prototypes, when set, is Ω itself (bank indices) and the keyword selection is skipped.
	Prototypes []int `json:"prototypes"`
	// Rule is RuleContexts ("contexts", spec §10), RuleMass ("mass") or RuleSignature ("signature").
	Rule string `json:"rule"`
	// TopContexts is the number of top-activating training contexts read per prototype (spec §10: 50; rule
	// "contexts"); > 0.
	TopContexts int `json:"top_contexts"`
	// SignatureTokens is the number of most promoted tokens read per prototype (rule "signature"); > 0, capped at V.
	SignatureTokens int `json:"signature_tokens"`
	// MinHitRate is the fraction of a prototype's top contexts (rule "contexts"), of its activation mass (rule
	// "mass") or of its most promoted tokens (rule "signature") that must hit a keyword (spec §10: 0.5); in [0, 1].
	MinHitRate float64 `json:"min_hit_rate"`
	// MinContexts is the least number of contexts (activations) a selected prototype has (fewer: too little
	// evidence); in [1, TopContexts].
	MinContexts int `json:"min_contexts"`
	// WindowBefore and WindowAfter are the tokens before and after an activating position that form its context
	// (WindowAfter = 1 includes the token the position predicts); ≥ 0.
	WindowBefore int `json:"window_before"`
	WindowAfter  int `json:"window_after"`
	// SelectBatches is the number of training batches scanned for top-activating contexts; > 0.
	SelectBatches int `json:"select_batches"`
	// Samples is the number of generations per mode, from prompts made of the first sentence of fresh synthetic
	// documents (seed PromptSeed), which names the referent and a city but no topic; > 1.
	Samples    int    `json:"samples"`
	PromptSeed uint64 `json:"prompt_seed"`
	// SampleBatch is the number of rows generated together; > 0.
	SampleBatch int `json:"sample_batch"`
	// Sample sets the sampler (max_new_tokens, temperature, top_k, seed); generation stops at the
	// end-of-document token whatever stop_token says. Batch b uses seed + b in every mode.
	Sample eval.SampleConfig `json:"sample"`
	// EvalSequences caps the validation sequences of each perplexity (text without keywords, text with); > 0.
	EvalSequences int `json:"eval_sequences"`
	// Examples is the number of completions kept per mode in the result.
	Examples int `json:"examples"`
}

// Small is a few minutes on a 2-core CPU: suppress topic "food" by spec §10's rule "contexts" (the top 50 contexts,
// 8 tokens back and 1 ahead, of 64 training batches, at a 50% hit rate with at least 10 contexts; rule "signature"
// instead asks half of the 10 most promoted tokens of the card to begin a keyword); 512 samples of 40 tokens at
// temperature 1 (no top-k), 64 per batch; perplexity on up to 256 validation sequences.
//
// The model is lm.PrismSmall trained longer with a larger bank: no prototype of the 400-update, K = 256 model is
// specific to a topic (none passes a keyword rule), so this one trains 4800 updates at lr 1e-2 with K = 2048 = 64D
// (above spec §12's 8D–16D; seeded from 16 batches, enough tokens for K distinct prototypes) and spec §12's k = 16.
// Longer training and more prototypes make them more topic-specific. Zero-mode cut with rule "contexts" at
// other-text perplexity cost, 512 samples of the default prompts: K = 1024 −71.5% at +0.95%, K = 1024 with k = 8
// −75.0% at +0.47%, K = 2048 −76.3% at +0.96%; on 2048 samples of each of two fresh prompt sets (prompt_seed 4004
// and 5005) −70.5% / −70.6% / −77.2% and −74.8% (K = 2048). Rule "signature" at K = 1024: 1200 updates −47% at
// +0.62%, 4800 −58% at +0.58% (2400: −57%, but perplexity 7.4% above dense, off the quality target; k = 32: −52%).
// On the 4800-update, K = 1024 model, zero mode, "contexts" cut the concept by 71.5% at +0.95% other-text
// perplexity and "signature" by 58.4% at +0.58% (mask mode: 66.4% at +0.35% and 55.3% at +0.15%); on the earlier
// 1200-update model "signature" was ahead (47% at +0.62% against 42% at +0.53%).
func Small() Config {
	m := lm.PrismSmall()
	m.Train.Steps, m.Train.LR = 4800, 1e-2
	m.Prism.NumPrototypes, m.Prism.TopK, m.Prism.SeedBatches = 2048, 16, 16
	return Config{Config: m, Suppress: Settings{Concept: "topic", Value: "food", Rule: RuleContexts, TopContexts: 50,
		SignatureTokens: 10, MinHitRate: 0.5, MinContexts: 10, WindowBefore: 8, WindowAfter: 1, SelectBatches: 64,
		Samples: 512, PromptSeed: 2002, SampleBatch: 64,
		Sample:        eval.SampleConfig{MaxNewTokens: 40, Temperature: 1, StopToken: -1, Seed: 11},
		EvalSequences: 256, Examples: 4}}
}

// Tiny is seconds on one CPU core: the Small settings cut down, on lm.PrismTiny (the model the other PRISM studies
// analyse at this preset).
func Tiny() Config {
	c := Small()
	c.Config = lm.PrismTiny()
	s := &c.Suppress
	s.TopContexts, s.MinContexts, s.SelectBatches, s.Samples, s.SampleBatch = 10, 3, 4, 8, 4
	s.Sample.MaxNewTokens, s.EvalSequences, s.Examples = 8, 8, 2
	return c
}

// Paper is the Small settings on spec §12's model (lm.PrismPaper, large enough to keep a topic across sentences).
// Meant for a GPU with XLA.
func Paper() Config {
	c := Small()
	c.Config = lm.PrismPaper()
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// FromEnv returns the preset named by $PROTOLAB_PRESET (default "small"), as notebooks and `make run` select it.
func FromEnv() (Config, error) { return Preset(run.PresetName()) }

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if c.Head != lm.HeadPrism {
		return errors.Errorf("head=%q, want %q (suppression removes prototypes)", c.Head, lm.HeadPrism)
	}
	return errors.WithMessage(c.Suppress.Validate(), "suppress")
}

// Validate reports the first problem of the settings, naming its key.
func (s Settings) Validate() error {
	switch {
	case len(s.Keywords) == 0 && (s.Concept == "" || s.Value == ""):
		return errors.New("concept and value are empty and no keywords are given")
	case !slices.Contains(Rules, s.Rule):
		return errors.Errorf("rule=%q, want one of %q", s.Rule, Rules)
	case s.SignatureTokens <= 0:
		return errors.Errorf("signature_tokens=%d, want > 0", s.SignatureTokens)
	case s.TopContexts <= 0:
		return errors.Errorf("top_contexts=%d, want > 0", s.TopContexts)
	case !(s.MinHitRate >= 0 && s.MinHitRate <= 1):
		return errors.Errorf("min_hit_rate=%g, want in [0, 1]", s.MinHitRate)
	case s.MinContexts < 1 || s.MinContexts > s.TopContexts:
		return errors.Errorf("min_contexts=%d, want in [1, top_contexts=%d]", s.MinContexts, s.TopContexts)
	case s.WindowBefore < 0 || s.WindowAfter < 0:
		return errors.Errorf("window_before=%d, window_after=%d, want ≥ 0", s.WindowBefore, s.WindowAfter)
	case s.SelectBatches <= 0:
		return errors.Errorf("select_batches=%d, want > 0", s.SelectBatches)
	case s.Samples < 2:
		return errors.Errorf("samples=%d, want ≥ 2 (a standard error needs two)", s.Samples)
	case s.SampleBatch <= 0:
		return errors.Errorf("sample_batch=%d, want > 0", s.SampleBatch)
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

// keywords returns the configured keywords or the concept's synthetic-corpus words.
func (s Settings) keywords() ([]string, error) {
	if len(s.Keywords) > 0 {
		return slices.Clone(s.Keywords), nil
	}
	return data.SyntheticWords(s.Concept, s.Value)
}
