package interp

import (
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/meter"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/run"
)

// Result is everything the study measured, as plain data (JSON; figures.go draws it).
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	// Corpora holds one entry per analysed corpus, in Config.Corpora order (skipped corpora are absent).
	Corpora []*CorpusResult `json:"corpora"`
	// Notes explains skipped parts (an optional corpus whose data is not installed).
	Notes []string `json:"notes,omitempty"`
	// Checks are the study's headline claims with the measured values.
	Checks []Check `json:"checks"`
	// WallSeconds and CPUSeconds are the study's wall time and the process's user+system CPU time during Run.
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"`
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

// CorpusResult is the study on one corpus.
type CorpusResult struct {
	Source string `json:"source"`
	Labels string `json:"labels"` // LabelsMarked, LabelsInForce or LabelsLexical
	// Models are the ProtoT model and the LLaMA baseline, in that order.
	Models []pair.Summary `json:"models"`
	// EvalTokens is the number of held-out tokens every unit is scored on; LabelNames and LabelCounts the labels
	// kept on them.
	EvalTokens  int      `json:"eval_tokens"`
	LabelNames  []string `json:"label_names"`
	LabelCounts []int    `json:"label_counts"`
	// Kinds summarises each unit kind (KindProtoPi, KindProtoRho, KindHeads, KindSAEVariance, KindSAEFrequency,
	// KindNull, those that ran) and Units lists every unit.
	Kinds []naming.KindSummary `json:"kinds"`
	Units []Unit               `json:"units"`
	// Coverage tells, per label, which unit of each kind is named with it.
	Coverage []LabelCoverage `json:"coverage"`
	// Prototypes are the ProtoT dashboards, layer-major; Layers the per-layer routing statistics.
	Prototypes []Prototype   `json:"prototypes"`
	Layers     []LayerStats  `json:"layers"`
	SAE        []SAEStats    `json:"sae,omitempty"`
	Intervene  *Intervention `json:"intervene,omitempty"`
}

// Kind returns the summary of a unit kind, or nil.
func (c *CorpusResult) Kind(kind string) *naming.KindSummary {
	for i := range c.Kinds {
		if c.Kinds[i].Kind == kind {
			return &c.Kinds[i]
		}
	}
	return nil
}

// Check is one headline claim of the study with its measured value.
type Check struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Want  string  `json:"want"`
	Pass  bool    `json:"pass"`
}

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "interp"

// LoadOrRun returns the result stored for cfg under run.Out, or runs the study. Notebook cells use it so that only
// the first one computes.
func LoadOrRun(cfg Config, opts ...run.Option) (*Result, error) {
	return run.LoadOrRun(Study, cfg, opts, compute)
}

// Run runs the study of cfg on every corpus (training or loading the two models, units, dashboards, SAEs,
// interventions), then the checks, even when a result is stored; with run.Out set it stores it there.
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	return run.Recompute(Study, cfg, opts, compute)
}

func compute(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seed
	start, cpu0 := time.Now(), meter.CPUSeconds()
	res := &Result{Provenance: prov}
	for _, cc := range cfg.Corpora {
		if err := o.Err(); err != nil {
			return nil, err
		}
		cr, note, err := runCorpus(cfg, cc, prov, o)
		if err != nil {
			return nil, errors.WithMessagef(err, "interp: corpus %s", cc.Source)
		}
		if note != "" {
			o.Logf(Study, "%s", note)
			res.Notes = append(res.Notes, note)
			continue
		}
		res.Corpora = append(res.Corpora, cr)
	}
	res.Checks = checks(cfg, res)
	res.WallSeconds, res.CPUSeconds = time.Since(start).Seconds(), meter.CPUSeconds()-cpu0
	return res, nil
}

// runCorpus runs the study on one corpus. A non-empty note means the corpus was skipped (optional, not installed).
func runCorpus(cfg Config, cc CorpusConfig, prov *run.Provenance, o run.Options) (*CorpusResult, string, error) {
	pc, note, err := cfg.Prepare(cc.Source, cc.Optional, cc.Labels == LabelsLexical, prov, o)
	if err != nil || note != "" {
		return nil, note, err
	}
	var lexical func(string) []string
	if pc.WordNet != nil {
		lexical = pc.WordNet.Supersenses
	}
	cr := &CorpusResult{Source: cc.Source, Labels: cc.Labels, Models: pc.Models}
	proto, llama, prep := pc.Proto, pc.Llama, pc.Data
	var es *evalSet
	if err := prov.Time("labels_"+cc.Source, func() (err error) {
		es, err = buildEvalSet(prep, cc, cfg.Eval.Sequences, cfg.Eval.MinLabelCount, cfg.Eval.NoneLabel, lexical)
		return err
	}); err != nil {
		return nil, "", err
	}
	cr.EvalTokens, cr.LabelNames, cr.LabelCounts = es.N(), es.tokens.Names, es.tokens.Counts()
	o.Logf(Study, "%s: %d evaluation tokens, %d labels", cc.Source, es.N(), len(es.tokens.Names))
	if err := prov.Time("units_"+cc.Source, func() error {
		return analyzeUnits(cr, cfg, proto, llama, es, o)
	}); err != nil {
		return nil, "", err
	}
	if cc.Interventions {
		if err := prov.Time("intervene_"+cc.Source, func() error {
			cal, held, err := interventionSplits(prep, cc, cfg)
			if err != nil {
				return err
			}
			cr.Intervene, err = intervene(proto, cal, held, cfg.Intervene, cfg.Eval.BatchSize, namedPrototypes(cr))
			return err
		}); err != nil {
			return nil, "", err
		}
	}
	return cr, "", nil
}

// interventionSplits returns the calibration split (intervene.sequences sequences of the first half of the
// validation split) and the held-out split (intervene.held_out sequences of its second half) of the interventions,
// labelled like the evaluation set but without dropping rare labels (targets are matched by name).
func interventionSplits(prep *lmdata.Prepared, cc CorpusConfig, cfg Config) (cal, held *evalSet, err error) {
	n := prep.ValSeqs.NumSequences()
	if cal, err = buildEvalSetIn(prep, cc, 0, n/2, cfg.Intervene.Sequences, 1, cfg.Eval.NoneLabel, nil); err != nil {
		return nil, nil, errors.WithMessage(err, "interp: the calibration split")
	}
	held, err = buildEvalSetIn(prep, cc, n/2, n, cfg.Intervene.HeldOut, 1, cfg.Eval.NoneLabel, nil)
	return cal, held, errors.WithMessage(err, "interp: the held-out split")
}

// String is the study's report: the trained models and the checks.
func (r *Result) String() string { return ModelsTable(r).String() + "\n" + ChecksTable(r).String() }
