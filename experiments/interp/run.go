package interp

import (
	"fmt"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/data"
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
	// claims (Departures(cfg)); the claims' methods name them.
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
	Labels string `json:"labels"` // LabelsMarked, LabelsInForce or LabelsLexical
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
	// Kinds summarises each unit kind (Kinds(), those that ran) and Units lists every unit.
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
	return run.LoadOrRun(Study, cfg, opts, runStudy)
}

// Notebook returns what a notebook shows at the preset run.PresetName() names: at "small", the stored protocol run
// of Small when there is one, else the Quick run (computed or loaded; run.Showcase); at any other preset its
// LoadOrRun.
func Notebook(opts ...run.Option) (*Result, error) {
	return run.Notebook(Study, Preset, Small, Quick, opts, runStudy)
}

// Run runs the study of cfg on every corpus (training or loading the two models, units, dashboards, SAEs,
// interventions), then the checks, even when a result is stored; with run.Out set it stores it there.
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	return run.Recompute(Study, cfg, opts, runStudy)
}

func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seed
	start, cpu0 := time.Now(), meter.CPUSeconds()
	res := &Result{Provenance: prov, Departures: Departures(cfg)}
	// A required corpus whose data is missing fails here, before any model trains.
	for _, cc := range cfg.Corpora {
		if !cc.Optional && (cc.Source == lmdata.SourceWordNet || cc.Labels == LabelsLexical) {
			if _, err := wordnet.Dir(); err != nil {
				return nil, errors.WithMessagef(err, "corpus %s is required by this configuration "+
					"(corpora[].optional=false)", cc.Source)
			}
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

// Departures returns the settings of cfg that depart from the spec's defaults and bear on the claims: ProtoT
// initial routing temperatures other than the official ones (layers/protot.DefaultConfig), which the LLaMA baseline
// has no counterpart of.
func Departures(cfg Config) []string {
	p, d := cfg.Model.ProtoT, protot.DefaultConfig()
	if p.WriteTempInit == d.WriteTempInit && p.SharedWriteTempInit == d.SharedWriteTempInit &&
		p.ReadTempInit == d.ReadTempInit {
		return nil
	}
	return []string{fmt.Sprintf("ProtoT initial routing temperatures τ_w %g (layer 0: %g), τ_r %g instead of the "+
		"official %g (%g), %g, chosen on the validation split with no tuning of the LLaMA baseline (models/pair)",
		p.WriteTempInit, p.SharedWriteTempInit, p.ReadTempInit, d.WriteTempInit, d.SharedWriteTempInit,
		d.ReadTempInit)}
}

// runCorpus runs the study on one corpus with the pair of cfg.Seed. A non-empty note means the corpus was skipped
// (optional, not installed).
func runCorpus(cfg Config, cc CorpusConfig, prov *run.Provenance, o run.Options) (*CorpusResult, string, error) {
	pc, note, err := cfg.Prepare(cc.Source, cc.Optional, cc.Labels == LabelsLexical, prov, o)
	if err != nil || note != "" {
		return nil, note, err
	}
	var lexical func(string) []string
	if pc.WordNet != nil {
		lexical = pc.WordNet.Supersenses
	}
	cr := &CorpusResult{Source: cc.Source, Labels: cc.Labels, Seed: cfg.Seed, Models: pc.Models}
	var sp *splits
	if err := prov.Time("labels_"+cc.Source, func() (err error) {
		sp, err = buildSplits(pc.Data, cc, cfg, lexical)
		return err
	}); err != nil {
		return nil, "", err
	}
	es := sp.eval
	cr.EvalText, cr.EvalTokens, cr.LabelNames, cr.LabelCounts = sp.evalText, es.N(), es.tokens.Names,
		es.tokens.Counts()
	o.Logf(Study, "%s (seed %d): %d evaluation tokens (%s), %d labels", cc.Source, cfg.Seed, es.N(), sp.evalText,
		len(es.tokens.Names))
	var named map[string][][2]int
	if err := prov.Time("units_"+cc.Source, func() (err error) {
		named, err = analyzeUnits(cr, cfg, pc.Proto, pc.Llama, sp, o)
		return err
	}); err != nil {
		return nil, "", err
	}
	if cc.Interventions {
		if err := prov.Time("intervene_"+cc.Source, func() (err error) {
			cr.Intervene, err = intervene(pc.Proto, sp.cal, sp.held, cfg.Intervene, cfg.Eval.BatchSize, named)
			return err
		}); err != nil {
			return nil, "", err
		}
	}
	return cr, "", nil
}

// splits are the token sets of one corpus and training seed (doc.go, "Protocol"): the SAE's training sequences;
// the selection split (the first half of the validation split) on which SAE features are selected, the named
// prototype sets named and the intervention prototypes calibrated; and the evaluation text (fresh documents, else
// the second half of the validation split) on which every unit is scored and every intervention effect reported.
type splits struct {
	train    [][]int32 // SAE training sequences [T+1], from the training split
	sel      *evalSet  // eval.select_sequences selection sequences
	eval     *evalSet  // eval.sequences evaluation sequences
	cal      *evalSet  // intervene.sequences calibration sequences (selection split, every label kept)
	held     *evalSet  // intervene.held_out held-out sequences (evaluation text, every label kept)
	evalText string    // CorpusResult.EvalText
}

// buildSplits builds the splits of one corpus (interventions' only when cc.Interventions).
func buildSplits(prep *lmdata.Prepared, cc CorpusConfig, cfg Config, lexical func(string) []string) (*splits,
	error) {
	ec := cfg.Eval
	val := valSource(prep)
	n := val.packed.NumSequences()
	evalSrc, from, to := val, n/2, n
	sp := &splits{evalText: "the second half of the validation split"}
	if ec.DataSeed != 0 && cc.Source == lmdata.SourceSynthetic {
		fresh, err := freshSource(prep, cfg.Data.Synthetic, ec.DataSeed, ec.Docs)
		if err != nil {
			return nil, err
		}
		evalSrc, from, to = fresh, 0, fresh.packed.NumSequences()
		sp.evalText = fmt.Sprintf("%d fresh documents of generator seed %d", ec.Docs, ec.DataSeed)
		if to < ec.Sequences || to < cfg.Intervene.HeldOut {
			return nil, errors.Errorf("interp: eval.docs=%d fresh documents make %d sequences; eval.sequences=%d and "+
				"intervene.held_out=%d need more: raise eval.docs", ec.Docs, to, ec.Sequences, cfg.Intervene.HeldOut)
		}
	}
	var err error
	if sp.sel, err = buildEvalSetIn(val, cc, 0, n/2, ec.SelectSequences, ec.MinLabelCount, ec.NoneLabel,
		lexical); err != nil {
		return nil, errors.WithMessage(err, "interp: the selection split")
	}
	if sp.eval, err = buildEvalSetIn(evalSrc, cc, from, to, ec.Sequences, ec.MinLabelCount, ec.NoneLabel,
		lexical); err != nil {
		return nil, errors.WithMessage(err, "interp: the evaluation split")
	}
	if cfg.SAE.Enabled {
		sp.train = spaced(prep.TrainSeqs, cfg.SAE.TrainSequences)
	}
	if cc.Interventions {
		if sp.cal, err = buildEvalSetIn(val, cc, 0, n/2, cfg.Intervene.Sequences, 1, ec.NoneLabel, nil); err != nil {
			return nil, errors.WithMessage(err, "interp: the calibration split")
		}
		if sp.held, err = buildEvalSetIn(evalSrc, cc, from, to, cfg.Intervene.HeldOut, 1, ec.NoneLabel, nil); err != nil {
			return nil, errors.WithMessage(err, "interp: the held-out split")
		}
	}
	return sp, nil
}

// spaced returns n sequences of p ([T+1] tokens each), evenly spaced over its stream (all of them when it holds no
// more than n).
func spaced(p *data.Packed, n int) [][]int32 {
	S := min(n, p.NumSequences())
	stride := p.NumSequences() / max(1, S)
	out := make([][]int32, S)
	for s := range out {
		out[s] = p.Sequence(s * stride)
	}
	return out
}

// String is the study's report: the trained models (first seed), the disentanglement statistics pooled over the
// seeds, the checks and the claims.
func (r *Result) String() string {
	return ModelsTable(r).String() + "\n" + DisentanglementTable(r, ClaimSource).String() + "\n" +
		ChecksTable(r).String() + "\n" + ClaimsTable(r).String()
}
