package interp

import (
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/meter"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/run"
)

// Result is everything the study measured, as plain data (JSON; figures.go draws it).
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	// Seeds are the training seeds of the model pair, in order (Config.Seeds of them, from Config.Seed).
	Seeds []uint64 `json:"seeds"`
	// Corpora holds the first seed's analysis, one entry per analysed corpus in Config.Corpora order (skipped
	// corpora are absent); the figures draw it.
	Corpora []*CorpusResult `json:"corpora"`
	// Replicates holds the analyses of the other seeds, in order; the claims pool them with Corpora.
	Replicates []Replicate `json:"replicates,omitempty"`
	// Notes explains skipped parts (an optional corpus whose data is not installed).
	Notes []string `json:"notes,omitempty"`
	// Departures lists the settings of the configuration that depart from the spec's defaults and bear on the
	// claims (pair.Config.Departures); the claims' methods name them.
	Departures []string `json:"departures,omitempty"`
	// Checks are the study's headline claims with the measured values.
	Checks []Check `json:"checks"`
	// WallSeconds and CPUSeconds are the study's wall time and the process's user+system CPU time during Run.
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"`
}

// Replicate is the study of one more training seed.
type Replicate struct {
	Seed    uint64          `json:"seed"`
	Corpora []*CorpusResult `json:"corpora"`
}

// Corpus returns the first seed's result of the corpus with the given source, or nil.
func (r *Result) Corpus(source string) *CorpusResult { return corpusIn(r.Corpora, source) }

// Runs returns the result of the corpus with the given source for every seed that analysed it, the first seed's
// first.
func (r *Result) Runs(source string) []*CorpusResult {
	if r == nil {
		return nil
	}
	var out []*CorpusResult
	if c := r.Corpus(source); c != nil {
		out = append(out, c)
	}
	for _, rep := range r.Replicates {
		if c := corpusIn(rep.Corpora, source); c != nil {
			out = append(out, c)
		}
	}
	return out
}

func corpusIn(corpora []*CorpusResult, source string) *CorpusResult {
	for _, c := range corpora {
		if c.Source == source {
			return c
		}
	}
	return nil
}

// CorpusResult is the study on one corpus with one training seed.
type CorpusResult struct {
	Source string `json:"source"`
	Labels string `json:"labels"` // CorpusConfig.Labels
	Seed   uint64 `json:"seed"`   // the training seed of the pair
	// Models are the ProtoT model and the LLaMA baseline, in that order.
	Models []pair.Summary `json:"models"`
	// EvalText says where the evaluation tokens come from: fresh documents of a generator seed, or the second half
	// of the validation split (doc.go, "Protocol").
	EvalText string `json:"eval_text"`
	// EvalTokens is the number of evaluation tokens every unit is scored on; LabelNames and LabelCounts the labels
	// kept on them.
	EvalTokens  int      `json:"eval_tokens"`
	LabelNames  []string `json:"label_names"`
	LabelCounts []int    `json:"label_counts"`
	// UnitAnalysis is every unit kind scored on the evaluation text, the prototype dashboards, the layer
	// statistics and the SAEs (pair.ScoreUnits; JSON keys kinds, units, coverage, prototypes, layers, sae).
	pair.UnitAnalysis
	// Intervene is the intervention sweep (pair.Intervene) on a corpus with interventions.
	Intervene *pair.Intervention `json:"intervene,omitempty"`
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

// Runs is the study's entry points (run.Entry): Runs.LoadOrRun(cfg) returns the result stored for cfg under
// run.Out or runs the study; Runs.Run(cfg) runs it even when a result is stored (the models it trains are loaded
// from run.Out/models when trained before); Runs.Notebook() and Runs.NotebookConfig() are what a notebook shows
// and starts its settings from at $PROTOLAB_PRESET.
var Runs = run.Entry[Config, *Result]{Study: Study, Preset: Preset, Small: Small, Quick: Quick, Compute: runStudy}

// runStudy runs the study of cfg on every corpus (training or loading the two models, units, dashboards, SAEs,
// interventions), then the checks.
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seed
	start, cpu0 := time.Now(), meter.CPUSeconds()
	res := &Result{Provenance: prov, Departures: cfg.Departures()}
	// A required corpus whose data is missing fails here, before any model trains.
	for _, cc := range cfg.Corpora {
		if cc.Optional {
			continue
		}
		var err error
		if cc.Source == lmdata.SourceWordNet || cc.Labels == naming.LabelsLexical {
			_, err = wordnet.Dir()
		}
		if cc.Source == lmdata.SourceBrown && err == nil {
			_, err = brown.Dir()
		}
		if err != nil {
			return nil, errors.WithMessagef(err, "corpus %s is required by this configuration "+
				"(corpora[].optional=false)", cc.Source)
		}
	}
	noted := map[string]bool{}
	for i := range cfg.Seeds {
		sc := cfg
		sc.Seed = cfg.Seed + uint64(i)
		res.Seeds = append(res.Seeds, sc.Seed)
		var corpora []*CorpusResult
		for _, cc := range cfg.Corpora {
			if err := o.Err(); err != nil {
				return nil, err
			}
			if i >= cc.seeds(cfg.Seeds) {
				continue
			}
			cr, note, err := runCorpus(sc, cc, prov, o)
			if err != nil {
				return nil, errors.WithMessagef(err, "corpus %s, seed %d", cc.Source, sc.Seed)
			}
			if note != "" {
				if !noted[note] {
					o.Logf(Study, "%s", note)
					res.Notes = append(res.Notes, note)
					noted[note] = true
				}
				continue
			}
			corpora = append(corpora, cr)
		}
		if i == 0 {
			res.Corpora = corpora
		} else {
			res.Replicates = append(res.Replicates, Replicate{Seed: sc.Seed, Corpora: corpora})
		}
	}
	res.Checks = checks(cfg, res)
	res.WallSeconds, res.CPUSeconds = time.Since(start).Seconds(), meter.CPUSeconds()-cpu0
	return res, nil
}

// runCorpus runs the study on one corpus with the pair of cfg.Seed. A non-empty note means the corpus was skipped
// (optional, not installed).
func runCorpus(cfg Config, cc CorpusConfig, prov *run.Provenance, o run.Options) (*CorpusResult, string, error) {
	pc, note, err := cfg.Prepare(cc.Source, cc.Optional, cc.Labels == naming.LabelsLexical, prov, o)
	if err != nil || note != "" {
		return nil, note, err
	}
	var lexicon func(string) []string
	if pc.WordNet != nil {
		lexicon = pc.WordNet.Supersenses
	}
	cr := &CorpusResult{Source: cc.Source, Labels: cc.Labels, Seed: cfg.Seed, Models: pc.Models}
	var sp *splits
	if err := prov.Time("labels_"+cc.Source, func() (err error) {
		sp, err = buildSplits(pc.Data, pc.Proto.FreshCorpus, cc, cfg, lexicon)
		return err
	}); err != nil {
		return nil, "", err
	}
	es := sp.eval
	cr.EvalText, cr.EvalTokens, cr.LabelNames, cr.LabelCounts = sp.evalText, es.N(), es.Tokens.Names,
		es.Tokens.Counts()
	o.Logf(Study, "%s (seed %d): %d evaluation tokens (%s), %d labels", cc.Source, cfg.Seed, es.N(), sp.evalText,
		len(es.Tokens.Names))
	var named map[string][][2]int
	if err := prov.Time("units_"+cc.Source, func() error {
		ua, n, err := pair.ScoreUnits(pc.Proto, pc.Llama, pair.UnitTexts{Eval: es, Select: sp.sel, Train: sp.train},
			cfg.units())
		if err == nil {
			cr.UnitAnalysis, named = *ua, n
		}
		return err
	}); err != nil {
		return nil, "", err
	}
	o.Logf(Study, "%s (seed %d): scored %d units", cc.Source, cfg.Seed, len(cr.Units))
	if cc.Interventions {
		if err := prov.Time("intervene_"+cc.Source, func() (err error) {
			cr.Intervene, err = pair.Intervene(pc.Proto, sp.cal, sp.held, cfg.Intervene.InterveneConfig,
				cfg.Eval.BatchSize, named)
			return err
		}); err != nil {
			return nil, "", err
		}
	}
	return cr, "", nil
}

// String is the study's report: the trained models (first seed), the disentanglement statistics pooled over the
// seeds of each claimed corpus analysed, the checks and the claims.
func (r *Result) String() string {
	out := ModelsTable(r).String()
	for _, source := range ClaimSources {
		if source == ClaimSource || r.Corpus(source) != nil {
			out += "\n" + DisentanglementTable(r, source).String()
		}
	}
	return out + "\n" + ChecksTable(r).String() + "\n" + ClaimsTable(r).String()
}
