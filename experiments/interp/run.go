package interp

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
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
	Labels string `json:"labels"` // LabelsMarked or LabelsInForce
	// Models are the ProtoT model and the LLaMA baseline, in that order.
	Models []TrainSummary `json:"models"`
	// EvalTokens is the number of held-out tokens every unit is scored on; LabelNames and LabelCounts the labels
	// kept on them.
	EvalTokens  int      `json:"eval_tokens"`
	LabelNames  []string `json:"label_names"`
	LabelCounts []int    `json:"label_counts"`
	// Kinds summarises each unit kind (KindProtoPi, KindProtoRho, KindHeads, KindSAEVariance, KindSAEFrequency,
	// KindNull, those that ran) and Units lists every unit.
	Kinds []KindSummary `json:"kinds"`
	Units []Unit        `json:"units"`
	// Coverage tells, per label, which unit of each kind is named with it.
	Coverage []LabelCoverage `json:"coverage"`
	// Prototypes are the ProtoT dashboards, layer-major; Layers the per-layer routing statistics.
	Prototypes []Prototype   `json:"prototypes"`
	Layers     []LayerStats  `json:"layers"`
	SAE        []SAEStats    `json:"sae,omitempty"`
	Intervene  *Intervention `json:"intervene,omitempty"`
	Robust     *Robustness   `json:"robust,omitempty"`
}

// Kind returns the summary of a unit kind, or nil.
func (c *CorpusResult) Kind(kind string) *KindSummary {
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

// Option changes how Run runs.
type Option func(*options)

type options struct {
	overrides string
	progress  io.Writer
	log       io.Writer
}

func newOptions(opts []Option) options {
	o := options{progress: os.Stderr, log: os.Stderr}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithOverrides records the override string applied to the preset, for provenance.
func WithOverrides(s string) Option { return func(o *options) { o.overrides = s } }

// Log sends one line per phase and the training progress to w (default stderr); nil silences Run.
func Log(w io.Writer) Option { return func(o *options) { o.progress, o.log = w, w } }

func (o options) logf(format string, args ...any) {
	if o.log != nil {
		fmt.Fprintf(o.log, "interp: "+format+"\n", args...)
	}
}

// Run runs the study of cfg on every corpus (training or loading the two models, units, dashboards, SAEs,
// interventions, robustness), then the checks; with cfg.Out set it writes Out/result.json.
func Run(cfg Config, opts ...Option) (*Result, error) {
	o := newOptions(opts)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	start, cpu0 := time.Now(), processCPUSeconds()
	res := &Result{Provenance: run.NewProvenance(cfg, o.overrides, cfg.Seed)}
	for _, cc := range cfg.Corpora {
		cr, note, err := runCorpus(backend, cfg, cc, res.Provenance, o)
		if err != nil {
			return nil, errors.WithMessagef(err, "interp: corpus %s", cc.Source)
		}
		if note != "" {
			o.logf("%s", note)
			res.Notes = append(res.Notes, note)
			continue
		}
		res.Corpora = append(res.Corpora, cr)
	}
	res.Checks = checks(cfg, res)
	res.Provenance.Finish()
	res.WallSeconds, res.CPUSeconds = time.Since(start).Seconds(), processCPUSeconds()-cpu0
	if cfg.Out != "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return nil, errors.Wrapf(err, "interp: creating the output folder %s", cfg.Out)
		}
		if err := store.SaveJSON(filepath.Join(cfg.Out, ResultFile), res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// LoadOrRun returns the result stored in cfg.Out when its configuration equals cfg, and runs the study otherwise.
// Notebook cells use it so that only the first one computes.
func LoadOrRun(cfg Config, opts ...Option) (*Result, error) {
	if cfg.Out != "" {
		path := filepath.Join(cfg.Out, ResultFile)
		if _, err := os.Stat(path); err == nil {
			var stored struct {
				Provenance struct {
					Config Config `json:"config"`
				} `json:"provenance"`
			}
			if err := store.LoadJSON(path, &stored); err != nil {
				return nil, err
			}
			if bytes.Equal(mustJSON(stored.Provenance.Config), mustJSON(cfg)) {
				res := &Result{}
				if err := store.LoadJSON(path, res); err != nil {
					return nil, err
				}
				res.Provenance.Config = cfg
				return res, nil
			}
		}
	}
	return Run(cfg, opts...)
}

// runCorpus runs the study on one corpus. A non-empty note means the corpus was skipped (optional, not installed).
func runCorpus(backend backends.Backend, cfg Config, cc CorpusConfig, prov *run.Provenance, o options) (
	*CorpusResult, string, error) {
	var db *wordnet.DB
	if cc.Source == lmdata.SourceWordNet || cc.Synonyms || cc.Labels == LabelsLexical {
		dir, err := wordnet.Dir()
		if err != nil {
			if cc.Optional {
				return nil, fmt.Sprintf("skipped corpus %s: %v", cc.Source, err), nil
			}
			return nil, "", err
		}
		if cc.Synonyms || cc.Labels == LabelsLexical {
			if db, err = wordnet.Load(dir); err != nil {
				return nil, "", err
			}
		}
	}
	dc := cfg.Data
	dc.Source, dc.Seed = cc.Source, cfg.Seed
	tokPath := ""
	if cfg.Out != "" {
		tokPath = filepath.Join(cfg.Out, "tokenizers", fmt.Sprintf("%s-%s.json", RunConfig{Data: dc}.Name(), hashJSON(dc)))
	}
	var prep *lmdata.Prepared
	if err := prov.Time("data_"+cc.Source, func() (err error) {
		prep, err = lmdata.Prepare(dc, tokPath)
		return err
	}); err != nil {
		return nil, "", err
	}
	proto, llama, err := cfg.models(prep.Tokenizer.VocabSize())
	if err != nil {
		return nil, "", err
	}
	cr := &CorpusResult{Source: cc.Source, Labels: cc.Labels}
	var models []*Model
	if err := prov.Time("train_"+cc.Source, func() error {
		for _, mcfg := range []RunConfig{
			{Mixer: proto.Mixer, Seed: cfg.Seed, Data: dc, Model: proto, Train: cfg.Train},
			{Mixer: llama.Mixer, Seed: cfg.Seed, Data: dc, Model: llama, Train: cfg.Train},
		} {
			mcfg.Train.Seed = cfg.Seed
			m, err := loadOrTrain(backend, mcfg, prep, cfg.Out, o)
			if err != nil {
				return err
			}
			models = append(models, m)
			cr.Models = append(cr.Models, m.Summary)
		}
		return nil
	}); err != nil {
		return nil, "", err
	}
	var es *evalSet
	if err := prov.Time("labels_"+cc.Source, func() (err error) {
		var lexical func(string) []string
		if db != nil {
			lexical = db.Supersenses
		}
		es, err = buildEvalSet(prep, cc, cfg.Eval.Sequences, cfg.Eval.MinLabelCount, cfg.Eval.NoneLabel, lexical)
		return err
	}); err != nil {
		return nil, "", err
	}
	cr.EvalTokens, cr.LabelNames, cr.LabelCounts = es.N(), es.tokens.Names, es.tokens.Counts()
	o.logf("%s: %d evaluation tokens, %d labels", cc.Source, es.N(), len(es.tokens.Names))
	if err := prov.Time("units_"+cc.Source, func() error {
		return analyzeUnits(cr, cfg, models[0], models[1], es, o)
	}); err != nil {
		return nil, "", err
	}
	if cc.Interventions {
		if err := prov.Time("intervene_"+cc.Source, func() error {
			cal, held, err := interventionSplits(prep, cc, cfg)
			if err != nil {
				return err
			}
			cr.Intervene, err = intervene(models[0], cal, held, cfg.Intervene, cfg.Eval.BatchSize, namedPrototypes(cr))
			return err
		}); err != nil {
			return nil, "", err
		}
	}
	if err := prov.Time("robust_"+cc.Source, func() (err error) {
		cr.Robust, err = robustness(models, prep, cc, cfg, db)
		return err
	}); err != nil {
		return nil, "", err
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
