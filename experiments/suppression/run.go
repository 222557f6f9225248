package suppression

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "suppression"

// Suppression modes of a Result's rows (spec §10). The suppressing ones are layers/prism's graph modes
// (prism.SuppressedLogits).
const (
	// ModeNone is the unsuppressed model (the reference row of a Result).
	ModeNone = "none"
	// ModeZero is prism.SuppressZero: the suppressed activations are zeroed.
	ModeZero = prism.SuppressZero
	// ModeMask is prism.SuppressMask: Ω is removed before the top-k.
	ModeMask = prism.SuppressMask
)

// Modes lists the modes a Result reports, reference first.
var Modes = []string{ModeNone, ModeZero, ModeMask}

// SelectedPrototype is one prototype of Ω chosen by keyword selection.
type SelectedPrototype struct {
	Prototype int `json:"prototype"`
	// HitRate is the share of its top contexts, activation mass or promoted tokens hitting a keyword.
	HitRate  float64 `json:"hit_rate"`
	Contexts int     `json:"contexts"` // contexts read (≤ TopContexts under rule "contexts")
	Example  string  `json:"example"`  // its most activating context
	// Promoted are the SignatureTokens tokens its signature W p_i promotes most, decoded (its card).
	Promoted []string `json:"promoted"`
}

// ModeResult holds the measurements under one mode. Rates are means over samples; SEs are sample standard
// deviations over √n.
type ModeResult struct {
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

// Result is the suppression study on one PRISM model.
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	Run        string          `json:"run"` // the model's name (lm.Config.Name)
	Config     Settings        `json:"config"`
	Keywords   []string        `json:"keywords"`
	// Omega is the suppressed set Ω (bank indices, sorted); Selected details the keyword selection (empty when
	// Settings.Prototypes gave Ω).
	Omega    []int               `json:"omega"`
	Selected []SelectedPrototype `json:"selected"`
	// BaseHitRate is the keyword hit rate over all scanned contexts (every token): the rate a prototype unrelated
	// to the concept would show.
	BaseHitRate float64 `json:"base_hit_rate"`
	// OtherTokens and ConceptTokens count the predicted tokens of the two perplexities; OtherActive and
	// ConceptActive are the fractions of them where some i ∈ Ω was active (selected, a > 0) unsuppressed.
	OtherTokens   int          `json:"other_tokens"`
	ConceptTokens int          `json:"concept_tokens"`
	OtherActive   float64      `json:"other_active"`
	ConceptActive float64      `json:"concept_active"`
	Modes         []ModeResult `json:"modes"` // Modes order
	Seconds       float64      `json:"seconds"`
}

// Mode returns the measurements of the named mode, or nil.
func (r *Result) Mode(name string) *ModeResult {
	for i := range r.Modes {
		if r.Modes[i].Mode == name {
			return &r.Modes[i]
		}
	}
	return nil
}

// String is the study's report: Ω and one line per mode.
func (r *Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "suppression %s: %s=%s by rule %q ≥ %.2f, |Ω| = %d %v (base hit rate %.3f); Ω active on %.3f "+
		"of other-text and %.3f of concept-text tokens\n", r.Run, r.Config.Concept, r.Config.Value, r.Config.Rule,
		r.Config.MinHitRate, len(r.Omega), r.Omega, r.BaseHitRate, r.OtherActive, r.ConceptActive)
	fmt.Fprintf(&b, "%-5s %14s %14s %9s %9s %9s %9s %9s\n", "mode", "concept rate", "any rate", "cut", "PPL other",
		"Δ other", "PPL conc.", "PPL judge")
	for _, m := range r.Modes {
		fmt.Fprintf(&b, "%-5s %7.4f±%.4f %7.3f±%.3f %8.1f%% %9.3f %+8.2f%% %9.3f %9.3f\n", m.Mode, m.ConceptRate,
			m.ConceptRateSE, m.AnyRate, m.AnyRateSE, 100*m.Reduction, m.OtherPerplexity, 100*m.OtherChange,
			m.ConceptPerplexity, m.JudgePerplexity)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// LoadOrRun returns the result stored for cfg under run.Out, or runs the study: it trains (or loads, from
// run.Out/models) the PRISM model of cfg and runs Suppress with cfg.Suppress on it. A comparison of rules or
// thresholds is one LoadOrRun per variant (each stored; the model is trained once).
func LoadOrRun(cfg Config, opts ...run.Option) (*Result, error) {
	return run.LoadOrRun(Study, cfg, opts, compute)
}

// Run runs the study even when a result is stored (the model itself is loaded when trained before).
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	return run.Recompute(Study, cfg, opts, compute)
}

func compute(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seed
	m, err := lm.LoadOrTrain(cfg.Config, run.With(o))
	if err != nil {
		return nil, err
	}
	res, err := Suppress(m, cfg.Suppress, run.With(o))
	if err != nil {
		return nil, err
	}
	res.Provenance = prov
	return res, nil
}

// Suppress selects Ω for the configured concept (or takes Settings.Prototypes), then generates Samples
// continuations of topic-free prompts and measures the perplexity of held-out text without and with the concept,
// unsuppressed and under both modes. The model stays unchanged; the result's Provenance is nil (LoadOrRun sets it).
func Suppress(m *lm.Model, s Settings, opts ...run.Option) (*Result, error) {
	if err := s.Validate(); err != nil {
		return nil, errors.WithMessage(err, "suppress")
	}
	o := run.NewOptions(opts...)
	res, err := suppress(m, s, o)
	if err != nil {
		return nil, err
	}
	if z := res.Mode(ModeZero); z != nil {
		o.Logf(Study, "suppressing %d prototypes of %s: concept rate %.4f → %.4f, other perplexity %+.2f%%",
			len(res.Omega), res.Run, res.Modes[0].ConceptRate, z.ConceptRate, 100*z.OtherChange)
	}
	return res, nil
}

func suppress(m *lm.Model, s Settings, o run.Options) (*Result, error) {
	if m.Dense() {
		return nil, errors.New("suppression: the dense model has no prototypes to suppress")
	}
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	kw, err := s.keywords()
	if err != nil {
		return nil, err
	}
	res := &Result{Run: m.Config.Name(), Config: s, Keywords: kw}
	K := m.Config.Prism.NumPrototypes
	if len(s.Prototypes) > 0 {
		for _, p := range s.Prototypes {
			if p >= K {
				return nil, errors.Errorf("suppress.prototypes: %d is not a prototype (K=%d)", p, K)
			}
		}
		res.Omega = slices.Compact(slices.Sorted(slices.Values(s.Prototypes)))
	} else if err := selectByKeywords(m, s, kw, res); err != nil {
		return nil, err
	}
	omega := make([]float64, K)
	for _, i := range res.Omega {
		omega[i] = 1
	}
	prompts, err := suppressionPrompts(m, s)
	if err != nil {
		return nil, err
	}
	other, concept, err := splitByKeywords(m, kw, s.EvalSequences)
	if err != nil {
		return nil, err
	}
	for _, mode := range Modes {
		if err := o.Err(); err != nil {
			return nil, err
		}
		sm := ModeResult{Mode: mode}
		graphMode, w := mode, omega
		if mode == ModeNone {
			graphMode, w = prism.SuppressZero, make([]float64, len(omega)) // Ω = ∅ leaves the logits unchanged exactly
		}
		gens, err := generateSuppressed(m, prompts, w, graphMode, s)
		if err != nil {
			return nil, err
		}
		texts := make([]string, len(gens))
		for i, g := range gens {
			if e := slices.Index(g, d.EOS); e >= 0 {
				g = g[:e] // the document ends here
			}
			texts[i] = d.Tokenizer.DecodeString(g)
		}
		sm.ConceptRate, sm.ConceptRateSE, sm.AnyRate, sm.AnyRateSE, sm.Words = KeywordRates(texts, kw)
		sm.Examples = texts[:min(s.Examples, len(texts))]
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
		if mode == ModeNone {
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
