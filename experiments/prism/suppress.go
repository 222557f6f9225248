package prism

import (
	"math"
	"slices"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/store"
)

// Suppression modes of a SuppressionResult's rows (spec §10). The suppressing ones are layers/prism's graph modes
// (prism.SuppressedLogits).
const (
	// SuppressNone is the unsuppressed model (the reference row of a SuppressionResult).
	SuppressNone = "none"
	// SuppressZero is prism.SuppressZero: the suppressed activations are zeroed.
	SuppressZero = prism.SuppressZero
	// SuppressMask is prism.SuppressMask: Ω is removed before the top-k.
	SuppressMask = prism.SuppressMask
)

// SuppressModes lists the modes a SuppressionResult reports, reference first.
var SuppressModes = []string{SuppressNone, SuppressZero, SuppressMask}

// Keyword selection rules of SuppressConfig.Rule.
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

// suppressRules lists the values of SuppressConfig.Rule.
var suppressRules = []string{RuleContexts, RuleMass, RuleSignature}

// SuppressModel changes the study's PRISM run for the suppression study (Config.SuppressionConfig); a zero field
// keeps the study's value. Concept-specific prototypes need a model that keeps a topic across sentences, which the
// study's Small run (400 updates, K = 256) does not do.
type SuppressModel struct {
	Steps         int     `json:"steps"`          // train.steps; ≥ 0
	LR            float64 `json:"lr"`             // train.lr; ≥ 0
	NumPrototypes int     `json:"num_prototypes"` // prism.num_prototypes (K); ≥ 0
	TopK          int     `json:"top_k"`          // prism.top_k (k); ≥ 0
	SeedBatches   int     `json:"seed_batches"`   // seed_batches (batches the bank is seeded from); ≥ 0
}

// SuppressConfig configures concept suppression (spec §10): keyword selection of the prototypes Ω, then generation
// and perplexity with Ω suppressed. Start from DefaultSuppress.
type SuppressConfig struct {
	// Model is the PRISM run suppression uses (RunSuppression, Config.SuppressionConfig); Suppress itself takes
	// the model it is given.
	Model SuppressModel `json:"model"`
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

// DefaultSuppress returns the Small preset's settings: suppress topic "food" by keyword selection over the top
// training contexts of each prototype, spec §10's rule "contexts" (the top 50 contexts, 8 tokens back and 1 ahead,
// of 64 training batches, at a 50% hit rate with at least 10 contexts; rule "signature" instead asks half of the 10
// most promoted tokens of the card to begin a keyword); 512 samples of 40 tokens at temperature 1 (no top-k), 64 per
// batch; perplexity on up to 256 validation sequences. On the 4800-update, K = 1024 suppression model, zero mode,
// "contexts" cut the concept by 71.5% at +0.95% other-text perplexity and "signature" by 58.4% at +0.58% (mask
// mode: 66.4% at +0.35% and 55.3% at +0.15%); on the earlier 1200-update model "signature" was ahead (47% at
// +0.62% against 42% at +0.53%). Config.Small's comment has the figures of the K = 2048 model it now uses.
func DefaultSuppress() SuppressConfig {
	return SuppressConfig{
		Concept:         "topic",
		Value:           "food",
		Rule:            RuleContexts,
		TopContexts:     50,
		SignatureTokens: 10,
		MinHitRate:      0.5,
		MinContexts:     10,
		WindowBefore:    8,
		WindowAfter:     1,
		SelectBatches:   64,
		Samples:         512,
		PromptSeed:      2002,
		SampleBatch:     64,
		Sample:          eval.SampleConfig{MaxNewTokens: 40, Temperature: 1, StopToken: -1, Seed: 11},
		EvalSequences:   256,
		Examples:        4,
	}
}

// TinySuppress returns DefaultSuppress cut to seconds for the Tiny preset.
func TinySuppress() SuppressConfig {
	s := DefaultSuppress()
	s.TopContexts = 10
	s.MinContexts = 3
	s.SelectBatches = 4
	s.Samples = 8
	s.SampleBatch = 4
	s.Sample.MaxNewTokens = 8
	s.EvalSequences = 8
	s.Examples = 2
	return s
}

// Validate reports the first problem of the suppression settings, naming its key.
func (s SuppressConfig) Validate() error {
	switch {
	case len(s.Keywords) == 0 && (s.Concept == "" || s.Value == ""):
		return errors.New("concept and value are empty and no keywords are given")
	case !slices.Contains(suppressRules, s.Rule):
		return errors.Errorf("rule=%q, want one of %q", s.Rule, suppressRules)
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
	if s.Model.Steps < 0 || !(s.Model.LR >= 0) || math.IsInf(s.Model.LR, 0) || s.Model.NumPrototypes < 0 || s.Model.TopK < 0 ||
		s.Model.SeedBatches < 0 {
		return errors.Errorf("model=%+v, want every field ≥ 0 (0 keeps the study's value)", s.Model)
	}
	for i, p := range s.Prototypes {
		if p < 0 {
			return errors.Errorf("prototypes[%d]=%d, want ≥ 0", i, p)
		}
	}
	return errors.WithMessage(s.Sample.Validate(), "sample")
}

// keywords returns the configured keywords or the concept's synthetic-corpus words.
func (s SuppressConfig) keywords() ([]string, error) {
	if len(s.Keywords) > 0 {
		return slices.Clone(s.Keywords), nil
	}
	return data.SyntheticWords(s.Concept, s.Value)
}

// SelectedPrototype is one prototype of Ω chosen by keyword selection.
type SelectedPrototype struct {
	Prototype int     `json:"prototype"`
	HitRate   float64 `json:"hit_rate"` // share of its top contexts, activation mass or promoted tokens hitting a keyword
	Contexts  int     `json:"contexts"` // contexts read (≤ TopContexts under rule "contexts")
	Example   string  `json:"example"`  // its most activating context
	// Promoted are the SignatureTokens tokens its signature W p_i promotes most, decoded (its card).
	Promoted []string `json:"promoted"`
}

// SuppressionMode holds the measurements under one mode. Rates are means over samples; SEs are sample standard
// deviations over √n.
type SuppressionMode struct {
	Mode string `json:"mode"`
	// ConceptRate is the mean over samples of the fraction of generated words that are keywords (samples with no
	// word are left out); AnyRate the fraction of samples with at least one keyword.
	ConceptRate   float64 `json:"concept_rate"`
	ConceptRateSE float64 `json:"concept_rate_se"`
	AnyRate       float64 `json:"any_rate"`
	AnyRateSE     float64 `json:"any_rate_se"`
	Words         int     `json:"words"` // generated words over all samples
	// JudgePerplexity is the perplexity of the completions (up to and including the end-of-document token)
	// given their prompts under the unsuppressed model: a generation-quality proxy.
	JudgePerplexity float64 `json:"judge_perplexity"`
	// OtherPerplexity is the perplexity on validation documents without a keyword; ConceptPerplexity on those
	// with one.
	OtherPerplexity   float64 `json:"other_perplexity"`
	ConceptPerplexity float64 `json:"concept_perplexity"`
	// Reduction is 1 − ConceptRate/ConceptRate(none); OtherChange is OtherPerplexity/OtherPerplexity(none) − 1
	// (0 when the reference is 0). Perplexities are 0 when there is no text of that kind.
	Reduction   float64  `json:"reduction"`
	OtherChange float64  `json:"other_change"`
	Examples    []string `json:"examples"` // the first completions
}

// SuppressionResult is the suppression study on one PRISM model.
type SuppressionResult struct {
	Run      string         `json:"run"`
	Config   SuppressConfig `json:"config"`
	Keywords []string       `json:"keywords"`
	// Omega is the suppressed set Ω (bank indices, sorted); Selected details the keyword selection (empty when
	// Config.Prototypes gave Ω).
	Omega    []int               `json:"omega"`
	Selected []SelectedPrototype `json:"selected"`
	// BaseHitRate is the keyword hit rate over all scanned contexts (every token): the rate a prototype unrelated
	// to the concept would show.
	BaseHitRate float64 `json:"base_hit_rate"`
	// OtherTokens and ConceptTokens count the predicted tokens of the two perplexities; OtherActive and
	// ConceptActive are the fractions of them where some i ∈ Ω was active (selected, a > 0) unsuppressed.
	OtherTokens   int               `json:"other_tokens"`
	ConceptTokens int               `json:"concept_tokens"`
	OtherActive   float64           `json:"other_active"`
	ConceptActive float64           `json:"concept_active"`
	Modes         []SuppressionMode `json:"modes"` // SuppressModes order
	Seconds       float64           `json:"seconds"`
}

// Mode returns the measurements of the named mode, or nil.
func (r *SuppressionResult) Mode(name string) *SuppressionMode {
	for i := range r.Modes {
		if r.Modes[i].Mode == name {
			return &r.Modes[i]
		}
	}
	return nil
}

// SuppressionConfig returns the study's configuration with cfg.Steering.Suppress.Model applied: the one whose
// PRISM run the suppression study uses.
func (c Config) SuppressionConfig() Config {
	sm := c.Steering.Suppress.Model
	if sm.Steps > 0 {
		c.Train.Steps = sm.Steps
	}
	if sm.LR > 0 {
		c.Train.LR = sm.LR
	}
	if sm.NumPrototypes > 0 {
		c.Prism.NumPrototypes = sm.NumPrototypes
	}
	if sm.TopK > 0 {
		c.Prism.TopK = sm.TopK
	}
	if sm.SeedBatches > 0 {
		c.SeedBatches = sm.SeedBatches
	}
	return c
}

// RunSuppression loads (or trains) the PRISM model of cfg.SuppressionConfig() and runs Suppress with
// cfg.Steering.Suppress. With cfg.Out set, the result is cached in the model's run folder as suppression-<hash>.json.
func RunSuppression(cfg Config, opts ...Option) (*SuppressionResult, error) {
	cfg = cfg.SuppressionConfig()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := LoadOrTrain(cfg, false, opts...)
	if err != nil {
		return nil, err
	}
	return Suppress(m, cfg.Steering.Suppress, opts...)
}

// Suppress selects Ω for the configured concept (or takes Config.Prototypes), then generates Samples
// continuations of topic-free prompts and measures the perplexity of held-out text without and with the concept,
// unsuppressed and under both modes. With m.Dir set the result is cached there as suppression-<hash>.json.
func Suppress(m *Model, sc SuppressConfig, opts ...Option) (*SuppressionResult, error) {
	if err := sc.Validate(); err != nil {
		return nil, errors.WithMessage(err, "suppress")
	}
	o := newOptions(opts)
	key := struct {
		Run      any
		Suppress SuppressConfig
	}{m.Run.Config, sc}
	res, cached, err := store.LoadOrCompute(m.Dir, "suppression", key, func() (*SuppressionResult, error) {
		return suppress(m, sc)
	})
	if err == nil {
		if cached {
			o.logf("prism: loaded the suppression results of %s", res.Run)
		} else if z := res.Mode(SuppressZero); z != nil {
			o.logf("prism: suppressing %d prototypes of %s: concept rate %.4f → %.4f, other perplexity %+.2f%%",
				len(res.Omega), res.Run, res.Modes[0].ConceptRate, z.ConceptRate, 100*z.OtherChange)
		}
	}
	return res, err
}

func suppress(m *Model, sc SuppressConfig) (*SuppressionResult, error) {
	if m.Dense {
		return nil, errors.New("prism: the dense model has no prototypes to suppress")
	}
	start := time.Now()
	kw, err := sc.keywords()
	if err != nil {
		return nil, err
	}
	res := &SuppressionResult{Run: m.Run.Config.Name(), Config: sc, Keywords: kw}
	if len(sc.Prototypes) > 0 {
		for _, p := range sc.Prototypes {
			if p >= m.Prism.NumPrototypes {
				return nil, errors.Errorf("suppress.prototypes: %d is not a prototype (K=%d)", p, m.Prism.NumPrototypes)
			}
		}
		res.Omega = slices.Compact(slices.Sorted(slices.Values(sc.Prototypes)))
	} else if err := selectByKeywords(m, sc, kw, res); err != nil {
		return nil, err
	}
	omega := make([]float64, m.Prism.NumPrototypes)
	for _, i := range res.Omega {
		omega[i] = 1
	}
	prompts, err := suppressionPrompts(m, sc)
	if err != nil {
		return nil, err
	}
	other, concept, err := splitByKeywords(m, kw, sc.EvalSequences)
	if err != nil {
		return nil, err
	}
	for _, mode := range SuppressModes {
		sm := SuppressionMode{Mode: mode}
		graphMode, w := mode, omega
		if mode == SuppressNone {
			graphMode, w = prism.SuppressZero, make([]float64, len(omega)) // Ω = ∅ leaves the logits unchanged exactly
		}
		gens, err := generateSuppressed(m, prompts, w, graphMode, sc)
		if err != nil {
			return nil, err
		}
		texts := make([]string, len(gens))
		for i, g := range gens {
			if e := slices.Index(g, m.Data.EOS); e >= 0 {
				g = g[:e] // the document ends here
			}
			texts[i] = m.Data.Tokenizer.DecodeString(g)
		}
		sm.ConceptRate, sm.ConceptRateSE, sm.AnyRate, sm.AnyRateSE, sm.Words = KeywordRates(texts, kw)
		sm.Examples = texts[:min(sc.Examples, len(texts))]
		judge, err := completionPerplexity(m, prompts, gens)
		if err != nil {
			return nil, err
		}
		sm.JudgePerplexity = judge
		ot, err := suppressedNLL(m, other, w, omega, graphMode)
		if err != nil {
			return nil, err
		}
		ct, err := suppressedNLL(m, concept, w, omega, graphMode)
		if err != nil {
			return nil, err
		}
		sm.OtherPerplexity, sm.ConceptPerplexity = ot.perplexity(), ct.perplexity()
		if mode == SuppressNone {
			res.OtherTokens, res.ConceptTokens = ot.tokens, ct.tokens
			res.OtherActive, res.ConceptActive = ot.activeFraction(), ct.activeFraction()
		}
		res.Modes = append(res.Modes, sm)
	}
	ref := res.Modes[0]
	for i := range res.Modes {
		if ref.ConceptRate > 0 {
			res.Modes[i].Reduction = 1 - res.Modes[i].ConceptRate/ref.ConceptRate
		}
		if ref.OtherPerplexity > 0 {
			res.Modes[i].OtherChange = res.Modes[i].OtherPerplexity/ref.OtherPerplexity - 1
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}
