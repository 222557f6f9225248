package suppression

import (
	"slices"
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

// runStudy runs the study on every corpus of cfg.Sources(), each alone: it trains (or loads, from run.Out/models)
// every model of cfg.ModelsOn(corpus) and runs Suppress with cfg.Settings on each. A comparison of rules or
// thresholds is one Runs.LoadOrRun per variant (each stored; the models are trained once).
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	start := time.Now()
	prov.Seed = cfg.Models()[0].Config.Seed
	s := cfg.Settings()
	res := &Result{Provenance: prov, Config: s, HeldBack: cfg.UseHeldBack}
	for i, src := range cfg.Sources() {
		c := CorpusResult{Source: src, Concept: s.ConceptOn(src)}
		for _, mc := range cfg.ModelsOn(src) {
			m, err := lm.LoadOrTrain(mc.Config, run.With(o))
			if err != nil {
				return nil, errors.WithMessagef(err, "corpus %q", src)
			}
			r, err := Suppress(m, s, run.With(o))
			if err != nil {
				return nil, errors.WithMessagef(err, "corpus %q, model %s", src, mc.Config.Name())
			}
			r.Label = mc.Label
			c.Runs = append(c.Runs, *r)
		}
		c.Summaries = summarise(c.Runs)
		if i == 0 {
			res.CorpusResult = c
		} else {
			res.Others = append(res.Others, c)
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// Suppress selects Ω for the configured concept on the model's corpus (Settings; or takes Settings.Prototypes), then
// generates Samples continuations of prompts that do not name the concept and measures the perplexity of validation
// text without and with the concept, unsuppressed and under both modes. On the synthetic corpus the prompts and the
// text split come from its labels (mprism.SuppressPrompts, SplitByKeywords); on the Brown corpus, which has none,
// from the keyword set alone (mprism.KeywordFreePrompts, SplitSequencesByKeywords). The model stays unchanged; the
// run's Label is empty (compute sets it).
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
	mc := m.Config
	labelFree := isBrown(mc.Data.Source)
	kw, err := s.keywordsFor(mc.Data.Source)
	if err != nil {
		return nil, err
	}
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
	prompts, other, concept, err := suppressData(m, s, kw, labelFree)
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

// suppressData returns the prompts and the validation sequences without (other) and with the concept (doc.go,
// "Data"): from the synthetic corpus's labels, or on a corpus without them (labelFree, the Brown corpus) from
// brown_docs documents of the evaluation splits and the keywords alone.
func suppressData(m *lm.Model, s Settings, kw []string, labelFree bool) (prompts, other, concept [][]int32,
	err error) {
	d, err := m.Data()
	if err != nil {
		return nil, nil, nil, err
	}
	textDocs := s.TextDocs
	if labelFree {
		c, err := m.FreshCorpus(s.BrownDocs, s.PromptSeed)
		if err != nil {
			return nil, nil, nil, errors.WithMessage(err, "suppress.brown_docs")
		}
		if prompts, err = mprism.KeywordFreePrompts(m, c.Texts, s.Samples, s.PromptWords, kw); err != nil {
			return nil, nil, nil, errors.WithMessage(err, "suppress.samples, brown_docs")
		}
		textDocs = s.BrownDocs
	} else if prompts, err = mprism.SuppressPrompts(m, s.Samples, s.PromptSeed); err != nil {
		return nil, nil, nil, err
	}
	texts := d.Val.Texts
	if s.TextSeed != 0 {
		c, err := m.FreshCorpus(textDocs, s.TextSeed)
		if err != nil {
			return nil, nil, nil, err
		}
		texts = c.Texts
	}
	if labelFree {
		other, concept, err = mprism.SplitSequencesByKeywords(m, texts, kw, s.EvalSequences)
	} else {
		other, concept, err = mprism.SplitByKeywords(m, texts, kw, s.EvalSequences)
	}
	return prompts, other, concept, err
}

// relChange is x/ref − 1, or 0 when ref is 0.
func relChange(x, ref float64) float64 {
	if ref == 0 {
		return 0
	}
	return x/ref - 1
}
