package suppression

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/run"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "suppression"

// Suppression modes of a run's rows (spec §10). The suppressing ones are layers/prism's graph modes
// (prism.SuppressedLogits).
const (
	// ModeNone is the unsuppressed model (the reference row of a run).
	ModeNone = "none"
	// ModeZero is prism.SuppressZero: the suppressed activations are zeroed.
	ModeZero = prism.SuppressZero
	// ModeMask is prism.SuppressMask: Ω is removed before the top-k.
	ModeMask = prism.SuppressMask
)

// Modes lists the modes a run reports, reference first.
var Modes = []string{ModeNone, ModeZero, ModeMask}

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
	// OtherPerplexity is the perplexity on validation documents without a keyword, ConceptPerplexity on those
	// with one, and ValPerplexity on both together (spec §10's validation perplexity).
	OtherPerplexity   float64 `json:"other_perplexity"`
	ConceptPerplexity float64 `json:"concept_perplexity"`
	ValPerplexity     float64 `json:"val_perplexity"`
	// Reduction is 1 − ConceptRate/ConceptRate(none); OtherChange is OtherPerplexity/OtherPerplexity(none) − 1
	// and ValChange likewise (0 when the reference is 0). Perplexities are 0 when there is no text of that kind.
	Reduction   float64  `json:"reduction"`
	OtherChange float64  `json:"other_change"`
	ValChange   float64  `json:"val_change"`
	Examples    []string `json:"examples"` // the first completions
}

// ModelRun is the suppression study on one PRISM model.
type ModelRun struct {
	// Label is ModelRecipe or ModelSpecRange; Seed the model's training seed; Run its name (lm.Config.Name).
	Label string `json:"label"`
	Seed  uint64 `json:"seed"`
	Run   string `json:"run"`
	// K, D, TopK and Steps describe the model: bank size, width, prototypes per token, training updates.
	K     int `json:"k"`
	D     int `json:"d"`
	TopK  int `json:"top_k"`
	Steps int `json:"steps"`
	// Keywords are the concept's words.
	Keywords []string `json:"keywords"`
	// Omega is the suppressed set Ω (bank indices, sorted); Selected details the keyword selection (empty when
	// Settings.Prototypes gave Ω).
	Omega    []int                      `json:"omega"`
	Selected []mprism.SelectedPrototype `json:"selected"`
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
func (r *ModelRun) Mode(name string) *ModeResult {
	for i := range r.Modes {
		if r.Modes[i].Mode == name {
			return &r.Modes[i]
		}
	}
	return nil
}

// String is one model's report: Ω and one line per mode.
func (r *ModelRun) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, seed %d): |Ω| = %d %v (base hit rate %.3f); Ω active on %.3f of other-text and %.3f "+
		"of concept-text tokens\n", r.Run, r.Label, r.Seed, len(r.Omega), r.Omega, r.BaseHitRate, r.OtherActive,
		r.ConceptActive)
	fmt.Fprintf(&b, "%-5s %14s %14s %9s %9s %9s %9s %9s %9s\n", "mode", "concept rate", "any rate", "cut",
		"PPL other", "Δ other", "Δ val", "PPL conc.", "PPL judge")
	for _, m := range r.Modes {
		fmt.Fprintf(&b, "%-5s %7.4f±%.4f %7.3f±%.3f %8.1f%% %9.3f %+8.2f%% %+8.2f%% %9.3f %9.3f\n", m.Mode,
			m.ConceptRate, m.ConceptRateSE, m.AnyRate, m.AnyRateSE, 100*m.Reduction, m.OtherPerplexity,
			100*m.OtherChange, 100*m.ValChange, m.ConceptPerplexity, m.JudgePerplexity)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Result is the suppression study: one ModelRun per model (label × training seed) and, per label, the mean ± s.e.
// over training seeds.
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	// Config is the suppression settings as run (with the held-back seeds when HeldBack is set).
	Config   Settings   `json:"config"`
	HeldBack bool       `json:"held_back"` // the evaluation is the held-back one
	Runs     []ModelRun `json:"runs"`
	// Summaries has one entry per model label, in Models order.
	Summaries []Summary `json:"summaries"`
	Seconds   float64   `json:"seconds"`
}

// Summary returns the summary of the model label, or nil.
func (r *Result) Summary(label string) *Summary {
	for i := range r.Summaries {
		if r.Summaries[i].Label == label {
			return &r.Summaries[i]
		}
	}
	return nil
}

// String is the study's report: per model label the mean ± s.e. over seeds of each mode, then every run.
func (r *Result) String() string {
	var b strings.Builder
	ev := "protocol evaluation"
	if r.HeldBack {
		ev = "held-back evaluation"
	}
	fmt.Fprintf(&b, "suppression of %s=%s by rule %q ≥ %.2f (%s; mean ± s.e. over training seeds)\n",
		r.Config.Concept, r.Config.Value, r.Config.Rule, r.Config.MinHitRate, ev)
	for _, s := range r.Summaries {
		b.WriteString(s.String())
		b.WriteString("\n")
	}
	for i := range r.Runs {
		b.WriteString(r.Runs[i].String())
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Runs is the study's entry points (run.Entry): Runs.LoadOrRun(cfg) returns the result stored for cfg under
// run.Out or runs the study; Runs.Run(cfg) runs it even when a result is stored (the models it trains are loaded
// from run.Out/models when trained before); Runs.Notebook() and Runs.NotebookConfig() are what a notebook shows
// and starts its settings from at $PROTOLAB_PRESET.
var Runs = run.Entry[Config, *Result]{Study: Study, Preset: Preset, Small: Small, Quick: Quick, Compute: runStudy}

// CompareRules runs (or loads) the notebook's configuration (Quick at the Small preset, else the preset) once per
// rule, for TradeoffChart: an exploration on the development data, not the protocol.
func CompareRules(rules []string, opts ...run.Option) ([]*Result, error) {
	cfg := Quick()
	name, err := run.PresetName()
	if err != nil {
		return nil, err
	}
	if name != "small" {
		if cfg, err = Preset(name); err != nil {
			return nil, err
		}
	}
	var out []*Result
	for _, rule := range rules {
		c := cfg
		c.Suppress.Rule = rule
		r, err := Runs.LoadOrRun(c, opts...)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// runStudy trains (or loads, from run.Out/models) every model of cfg.Models and runs Suppress with cfg.Settings on
// each. A comparison of rules or thresholds is one Runs.LoadOrRun per variant (each stored; the models are trained
// once).
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	start := time.Now()
	models := cfg.Models()
	prov.Seed = models[0].Config.Seed
	s := cfg.Settings()
	res := &Result{Provenance: prov, Config: s, HeldBack: cfg.UseHeldBack}
	for _, mc := range models {
		m, err := lm.LoadOrTrain(mc.Config, run.With(o))
		if err != nil {
			return nil, err
		}
		r, err := Suppress(m, s, run.With(o))
		if err != nil {
			return nil, errors.WithMessagef(err, "model %s", mc.Config.Name())
		}
		r.Label = mc.Label
		res.Runs = append(res.Runs, *r)
	}
	res.Summaries = summarise(res.Runs)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// Suppress selects Ω for the configured concept (or takes Settings.Prototypes), then generates Samples
// continuations of topic-free prompts and measures the perplexity of validation text without and with the concept,
// unsuppressed and under both modes. The model stays unchanged; the run's Label is empty (compute sets it).
func Suppress(m *lm.Model, s Settings, opts ...run.Option) (*ModelRun, error) {
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

func suppress(m *lm.Model, s Settings, o run.Options) (*ModelRun, error) {
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
	mc := m.Config
	res := &ModelRun{Run: mc.Name(), Seed: mc.Seed, K: mc.Prism.NumPrototypes, D: mc.Model.Width,
		TopK: mc.Prism.TopK, Steps: mc.Train.Steps, Keywords: kw}
	K := mc.Prism.NumPrototypes
	if len(s.Prototypes) > 0 {
		for _, p := range s.Prototypes {
			if p >= K {
				return nil, errors.Errorf("suppress.prototypes: %d is not a prototype (K=%d)", p, K)
			}
		}
		res.Omega = slices.Compact(slices.Sorted(slices.Values(s.Prototypes)))
	} else {
		sel, err := mprism.SelectByKeywords(m, s.KeywordRule, kw)
		if err != nil {
			return nil, err
		}
		res.Omega, res.Selected, res.BaseHitRate = sel.Omega, sel.Selected, sel.BaseHitRate
	}
	omega := make([]float64, K)
	for _, i := range res.Omega {
		omega[i] = 1
	}
	prompts, err := mprism.SuppressPrompts(m, s.Samples, s.PromptSeed)
	if err != nil {
		return nil, err
	}
	texts := d.Val.Texts
	if s.TextSeed != 0 {
		c, err := m.FreshCorpus(s.TextDocs, s.TextSeed)
		if err != nil {
			return nil, err
		}
		texts = c.Texts
	}
	other, concept, err := mprism.SplitByKeywords(m, texts, kw, s.EvalSequences)
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
		gens, err := mprism.GenerateSuppressed(m, prompts, w, graphMode, s.SampleBatch, s.Sample)
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
		judge, err := mprism.CompletionPerplexity(m, prompts, gens)
		if err != nil {
			return nil, err
		}
		sm.JudgePerplexity = judge
		ot, err := mprism.SuppressedNLL(m, other, w, omega, graphMode)
		if err != nil {
			return nil, err
		}
		ct, err := mprism.SuppressedNLL(m, concept, w, omega, graphMode)
		if err != nil {
			return nil, err
		}
		sm.OtherPerplexity, sm.ConceptPerplexity = ot.Perplexity(), ct.Perplexity()
		sm.ValPerplexity = ot.Plus(ct).Perplexity()
		if mode == ModeNone {
			res.OtherTokens, res.ConceptTokens = ot.Tokens, ct.Tokens
			res.OtherActive, res.ConceptActive = ot.ActiveFraction(), ct.ActiveFraction()
		}
		res.Modes = append(res.Modes, sm)
	}
	ref := res.Modes[0]
	for i := range res.Modes {
		md := &res.Modes[i]
		if ref.ConceptRate > 0 {
			md.Reduction = 1 - md.ConceptRate/ref.ConceptRate
		}
		md.OtherChange = relChange(md.OtherPerplexity, ref.OtherPerplexity)
		md.ValChange = relChange(md.ValPerplexity, ref.ValPerplexity)
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// relChange is x/ref − 1, or 0 when ref is 0.
func relChange(x, ref float64) float64 {
	if ref == 0 {
		return 0
	}
	return x/ref - 1
}
