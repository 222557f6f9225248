package robustness

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/meter"
	"github.com/protolab/protolab/workbench/run"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "robustness"

// Random streams of the study (run.RNG names). They keep the names they had in experiments/interp, where the
// study began, so that the presets reproduce its numbers.
const (
	streamPrompts = "interp/prompts"
	streamPerturb = "interp/perturb"
)

// Result is everything the study measured, as plain data (JSON; figures.go draws it).
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	// Corpora holds one entry per tested corpus, in Config.Corpora order (skipped corpora are absent).
	Corpora []*CorpusResult `json:"corpora"`
	// Notes explains skipped parts (an optional corpus whose data is not installed).
	Notes []string `json:"notes,omitempty"`
	// WallSeconds and CPUSeconds are the study's wall time and the process's user+system CPU time during Run.
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"`
}

// CorpusResult is the study on one corpus.
type CorpusResult struct {
	Source string `json:"source"`
	// Models are the ProtoT model and the LLaMA baseline, in that order.
	Models []pair.Summary `json:"models"`
	// PromptText says where the prompts come from (validation documents' prefixes, or sentences of a Brown split).
	PromptText string `json:"prompt_text,omitempty"`
	// Robustness is the measurement (pair.MeasureRobustness; JSON keys kinds, comparisons, examples): the kinds
	// applied (Config.Perturbations, then data.PerturbSynonym on a corpus with synonyms), the statistics of each
	// model (ProtoT, then LLaMA) under each kind, and the first pair of each kind.
	pair.Robustness
}

// Corpus returns the result of the corpus with the given source, or nil.
func (r *Result) Corpus(source string) *CorpusResult {
	for _, c := range r.Corpora {
		if c.Source == source {
			return c
		}
	}
	return nil
}

// Stats returns the statistics of a mixer and a kind, or nil.
func (c *CorpusResult) Stats(mixer, kind string) *pair.Stats {
	for _, m := range c.Comparisons {
		if m.Mixer != mixer {
			continue
		}
		for i := range m.ByKind {
			if m.ByKind[i].Kind == kind {
				return &m.ByKind[i]
			}
		}
	}
	return nil
}

// Runs is the study's entry points (run.Entry): Runs.LoadOrRun(cfg) returns the result stored for cfg under
// run.Out or runs the study; Runs.Run(cfg) runs it even when a result is stored (the models it trains are loaded
// from run.Out/models when trained before); Runs.Notebook() and Runs.NotebookConfig() are what a notebook shows
// and starts its settings from at $PROTOLAB_PRESET (Quick where no Small run is stored).
var Runs = run.Entry[Config, *Result]{Study: Study, Preset: Preset, Small: Small, Quick: Quick, Compute: runStudy}

// runStudy runs the study of cfg on every corpus (training or loading the two models, perturbing the prompts,
// comparing the predictions).
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seed
	start, cpu0 := time.Now(), meter.CPUSeconds()
	res := &Result{Provenance: prov}
	for _, cc := range cfg.Corpora {
		if err := o.Err(); err != nil {
			return nil, err
		}
		cr, note, err := runCorpus(cfg, cc, prov, o)
		if err != nil {
			return nil, errors.WithMessagef(err, "robustness: corpus %s", cc.Source)
		}
		if note != "" {
			o.Logf(Study, "%s", note)
			res.Notes = append(res.Notes, note)
			continue
		}
		res.Corpora = append(res.Corpora, cr)
	}
	res.WallSeconds, res.CPUSeconds = time.Since(start).Seconds(), meter.CPUSeconds()-cpu0
	return res, nil
}

// runCorpus runs the study on one corpus. A non-empty note means the corpus was skipped (optional, not installed).
func runCorpus(cfg Config, cc CorpusConfig, prov *run.Provenance, o run.Options) (*CorpusResult, string, error) {
	pc, note, err := cfg.Prepare(cc.Source, cc.Optional, cc.Synonyms, prov, o)
	if err != nil || note != "" {
		return nil, note, err
	}
	var synonyms func(string) []string
	if pc.WordNet != nil {
		synonyms = pc.WordNet.Synonyms
	}
	kinds := slices.Clone(cfg.Perturbations)
	if synonyms != nil {
		kinds = append(kinds, data.PerturbSynonym)
	}
	texts, from, err := prompts(cfg, cc, pc)
	if err != nil {
		return nil, "", err
	}
	if len(texts) == 0 {
		return nil, "", errors.Errorf("robustness: no held-out prompt of %s fits max_tokens=%d", cc.Source,
			cfg.MaxTokens)
	}
	cr := &CorpusResult{Source: cc.Source, Models: pc.Models, PromptText: from}
	if err := prov.Time("robust_"+cc.Source, func() error {
		rb, err := pair.MeasureRobustness([]*lm.Model{pc.Proto, pc.Llama}, pc.Data, texts, kinds,
			pair.RobustnessConfig{MaxTokens: cfg.MaxTokens, OverlapK: cfg.OverlapK, BatchSize: cfg.BatchSize},
			run.RNG(cfg.Seed, streamPerturb), synonyms)
		if err == nil {
			cr.Robustness = *rb
		}
		return err
	}); err != nil {
		return nil, "", err
	}
	o.Logf(Study, "%s: %d perturbation kinds on %d models", cc.Source, len(cr.Kinds), len(cr.Comparisons))
	return cr, "", nil
}

// prompts returns the prompt texts of corpus cc and where they come from (CorpusResult.PromptText): on the Brown
// corpus sentences of its evaluation split (eval_seed, brown_docs; its validation split with eval_seed 0), several
// per document (pair.SentencePrompts); on any other corpus validation documents' prefixes (pair.Prompts).
func prompts(cfg Config, cc CorpusConfig, pc *pair.Corpus) ([]string, string, error) {
	rng, limit := run.RNG(cfg.Seed, streamPrompts), cfg.MaxTokens-4
	if cc.Source != lmdata.SourceBrown {
		return pair.Prompts(pc.Data, cfg.Prompts, limit, rng), "prefixes of validation documents", nil
	}
	docs, from := pc.Data.Val, "sentences of the Brown validation split"
	if cfg.EvalSeed != 0 {
		var err error
		if docs, err = pc.Proto.FreshCorpus(cfg.BrownDocs, cfg.EvalSeed); err != nil {
			return nil, "", errors.WithMessage(err, "robustness: the Brown prompts' documents (eval_seed, brown_docs)")
		}
		from = fmt.Sprintf("sentences of the first %d documents of the Brown %s split (seed %d)", cfg.BrownDocs,
			lm.EvalSplitOf(cfg.EvalSeed), cfg.EvalSeed)
	}
	return pair.SentencePrompts(docs, pc.Data.Tokenizer, cfg.Prompts, limit, rng), from, nil
}

// String is the study's report: the trained models and, per corpus, the statistics with an example of each kind.
func (r *Result) String() string {
	var b strings.Builder
	b.WriteString(ModelsTable(r).String())
	for _, c := range r.Corpora {
		b.WriteString("\n" + StatsTable(r, c.Source).String())
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n" + strings.Join(r.Notes, "\n") + "\n")
	}
	return b.String()
}
