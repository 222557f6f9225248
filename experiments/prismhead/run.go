package prismhead

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "prismhead"

// SweepPoint is one PRISM model of the conditioning sweep, clustering weight λ_1 = λ_2 (docs/spec/prism.md §3
// "Weights", §5, §8): its quality against the dense model of its seed and its curvature study.
type SweepPoint struct {
	Weight        float64               `json:"weight"`         // λ_1 = λ_2
	Dir           string                `json:"dir"`            // run folder of the model ("" in memory)
	Perplexity    float64               `json:"perplexity"`     // evaluation perplexity of the PRISM model
	RelPerplexity float64               `json:"rel_perplexity"` // against the dense model
	RelLoss       float64               `json:"rel_loss"`       // against the dense model
	Coverage      prism.CoverageMetrics `json:"coverage"`
	Usage         prism.UsageSummary    `json:"usage"`
	Curvature     mprism.Curvature      `json:"curvature"`
}

// Replicate is the study at one training seed: the configured PRISM model against its dense baseline, and the
// sweep.
type Replicate struct {
	Seed      uint64           `json:"seed"`
	PrismDir  string           `json:"prism_dir"` // run folder of the configured PRISM model ("" in memory)
	DenseDir  string           `json:"dense_dir"` // run folder of the dense model
	Quality   mprism.Quality   `json:"quality"`   // the configured PRISM model against the dense model
	Curvature mprism.Curvature `json:"curvature"` // of the configured PRISM model
	Sweep     []SweepPoint     `json:"sweep"`
	// FixedDamping is the damping held fixed across this seed's sweep (doc.go, equation 7′): the spec §5 damping of
	// the sweep's smallest weight (the configured model's without a sweep).
	FixedDamping float64 `json:"fixed_damping"`
}

// Tuning records the learning-rate choice (TuneConfig): each kind's validation loss at every rate, and the rates
// kept (one fit.SearchLR per kind).
type Tuning struct {
	Seed      uint64    `json:"seed"`
	LRs       []float64 `json:"lrs"`
	DenseLoss []float64 `json:"dense_loss"` // final validation loss (eval_batches batches) at each rate; −1: diverged
	PrismLoss []float64 `json:"prism_loss"`
	DenseLR   float64   `json:"dense_lr"`
	PrismLR   float64   `json:"prism_lr"`
}

// Protocol states how one corpus's result was obtained, for the report and the scorecard's method column.
type Protocol struct {
	Source          string    `json:"source"`     // the corpus (data.source); "" in results stored before v2
	Seeds           []uint64  `json:"seeds"`      // training seeds of the replicates
	R1Weight        float64   `json:"r1_weight"`  // the configured model's λ_1
	R2Weight        float64   `json:"r2_weight"`  // and λ_2
	Sweep           []float64 `json:"sweep"`      // λ_1 = λ_2 of the sweep
	Steps           int       `json:"steps"`      // optimiser steps of every model
	BatchSize       int       `json:"batch_size"` // sequences per step
	SeqLen          int       `json:"seq_len"`
	TuneSeed        uint64    `json:"tune_seed"` // 0 with no tuning
	LRs             []float64 `json:"lrs"`       // the tuning grid (empty: untuned)
	DenseLR         float64   `json:"dense_lr"`
	PrismLR         float64   `json:"prism_lr"`
	EvalDocs        int       `json:"eval_docs"`   // evaluation documents (0: the validation split)
	EvalSeed        uint64    `json:"eval_seed"`   // their seed (on Brown its parity names the split)
	HeldBack        bool      `json:"held_back"`   // the evaluation used the held-back seed
	EvalTokens      int       `json:"eval_tokens"` // predicted tokens per evaluation (first replicate)
	Prototypes      int       `json:"prototypes"`  // M of the exact Hessians
	CurvatureTokens int       `json:"curvature_tokens"`
}

// CorpusResult is the protocol on one corpus: how it ran, the learning-rate choice, one Replicate per training seed
// and the summary over seeds.
type CorpusResult struct {
	Protocol   Protocol    `json:"protocol"`
	Tuning     *Tuning     `json:"tuning,omitempty"`
	Replicates []Replicate `json:"replicates"`
	Summary    Summary     `json:"summary"`
}

// Result is the study's output: the protocol on the first corpus (data.source; its fields at the top level, what the
// figures of notebooks/20_prism.ipynb show), then on each further corpus of corpora, run alone.
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	CorpusResult
	// Others are the protocol on corpora[1:], in order (the Brown corpus in Small).
	Others []CorpusResult `json:"other_corpora,omitempty"`
}

// Corpora returns the result of every corpus, the first corpus's first.
func (r *Result) Corpora() []CorpusResult {
	return append([]CorpusResult{r.CorpusResult}, r.Others...)
}

// Corpus returns the result on corpus source, or nil when the study did not run on it. A result stored before
// protocol v2 names no corpus; it ran on the synthetic corpus and is found as such.
func (r *Result) Corpus(source string) *CorpusResult {
	return lmdata.FindCorpus(&r.CorpusResult, r.Others, func(c *CorpusResult) string { return c.Protocol.Source },
		source)
}

// String is the study's report: per corpus the protocol, the summary over seeds, then the first replicate in detail.
func (r *Result) String() string {
	var b strings.Builder
	for i, c := range r.Corpora() {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// String is one corpus's report: the protocol, the summary over seeds, then the first replicate in detail.
func (r *CorpusResult) String() string {
	var b strings.Builder
	p := r.Protocol
	fmt.Fprintf(&b, "corpus %s: seeds %v; dense and PRISM (λ1=%g, λ2=%g) at %d steps × %d×%d tokens; ", p.Source,
		p.Seeds, p.R1Weight, p.R2Weight, p.Steps, p.BatchSize, p.SeqLen)
	if len(p.LRs) > 0 {
		fmt.Fprintf(&b, "lr from %v on seed %d's validation split: dense %g, PRISM %g; ", p.LRs, p.TuneSeed, p.DenseLR,
			p.PrismLR)
	} else {
		fmt.Fprintf(&b, "lr %g untuned; ", p.PrismLR)
	}
	fmt.Fprintf(&b, "evaluated on %s, %d tokens\n", evalText(p), p.EvalTokens)
	if r.Tuning != nil {
		fmt.Fprintf(&b, "tuning: dense loss %.4g, PRISM loss %.4g at lr %v\n", r.Tuning.DenseLoss,
			r.Tuning.PrismLoss, r.Tuning.LRs)
	}
	b.WriteString(r.Summary.String())
	if len(r.Replicates) > 0 {
		rep := r.Replicates[0]
		fmt.Fprintf(&b, "\nseed %d, configured model:\n%s\n\ncurvature:\n%s", rep.Seed, rep.Quality, rep.Curvature)
	}
	return b.String()
}

// Runs is the study's entry points (run.Entry): Runs.LoadOrRun(cfg) returns the result stored for cfg under
// run.Out or runs the study; Runs.Run(cfg) runs it even when a result is stored (the models it trains are loaded
// from run.Out/models when trained before); Runs.Notebook() and Runs.NotebookConfig() are what a notebook shows
// and starts its settings from at $PROTOLAB_PRESET.
var Runs = run.Entry[Config, *Result]{Study: Study, Preset: Preset, Small: Small, Quick: Quick, Compute: runStudy}

// runStudy runs the protocol (doc.go, "Protocol") on every corpus of cfg.Sources(), each alone (runCorpus).
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.ReplicateSeeds()[0]
	res := &Result{Provenance: prov}
	for i, src := range cfg.Sources() {
		c, err := runCorpus(cfg, src, prov, o)
		if err != nil {
			return nil, errors.WithMessagef(err, "corpus %q", src)
		}
		if i == 0 {
			res.CorpusResult = *c
		} else {
			res.Others = append(res.Others, *c)
		}
	}
	return res, nil
}

// runCorpus runs the protocol on corpus source: it chooses the learning rates (cfg.Tune) on the corpus's
// validation split, then for every seed trains (or loads, from run.Out/models) the dense baseline and one PRISM
// model per sweep weight and the configured weights, and measures quality (mprism.ComputeQuality) and curvature
// (mprism.ComputeCurvature) on the corpus's evaluation batches (mprism.EvalBatches, eval.DocsFor documents).
func runCorpus(cfg Config, source string, prov *run.Provenance, o run.Options) (*CorpusResult, error) {
	cfg.Config = cfg.OnCorpus(source)
	seeds := cfg.ReplicateSeeds()
	res := &CorpusResult{Protocol: Protocol{Source: source, Seeds: seeds, R1Weight: cfg.Prism.R1Weight,
		R2Weight: cfg.Prism.R2Weight, Sweep: slices.Clone(cfg.Curvature.Sweep), Steps: cfg.Train.Steps,
		BatchSize: cfg.Data.BatchSize, SeqLen: cfg.Data.SeqLen, LRs: slices.Clone(cfg.Tune.LRs),
		DenseLR: cfg.Train.LR, PrismLR: cfg.Train.LR, EvalDocs: cfg.Eval.DocsFor(source),
		EvalSeed: cfg.Eval.DocSeed(), HeldBack: cfg.Eval.UseHeld, Prototypes: cfg.Curvature.Prototypes}}
	if len(cfg.Tune.LRs) > 0 {
		if err := prov.Time("tune "+source, func() (err error) {
			res.Tuning, err = tune(cfg, o)
			return err
		}); err != nil {
			return nil, err
		}
		res.Protocol.TuneSeed = cfg.Tune.Seed
		res.Protocol.DenseLR, res.Protocol.PrismLR = res.Tuning.DenseLR, res.Tuning.PrismLR
	}
	for _, seed := range seeds {
		if err := o.Err(); err != nil {
			return nil, err
		}
		var rep Replicate
		if err := prov.Time(fmt.Sprintf("%s seed %d", source, seed), func() (err error) {
			rep, err = replicate(cfg, seed, res.Protocol.DenseLR, res.Protocol.PrismLR, o)
			return err
		}); err != nil {
			return nil, errors.WithMessagef(err, "seed %d", seed)
		}
		res.Replicates = append(res.Replicates, rep)
	}
	first := res.Replicates[0]
	res.Protocol.EvalTokens = first.Quality.Prism.Tokens
	res.Protocol.CurvatureTokens = first.Curvature.Tokens
	res.Summary = Summarize(res.Replicates)
	return res, nil
}

// measured is one PRISM model's quality and curvature.
type measured struct {
	dir       string
	quality   mprism.Quality
	curvature mprism.Curvature
}

// replicate trains (or loads) the dense model and the PRISM models of one seed on cfg's data.source and measures
// them.
func replicate(cfg Config, seed uint64, denseLR, prismLR float64, o run.Options) (Replicate, error) {
	rep := Replicate{Seed: seed}
	base := cfg.Config
	base.Seed = seed
	base.Train.LR = prismLR
	dc := base.Dense()
	dc.Train.LR = denseLR
	dm, err := lm.LoadOrTrain(dc, run.With(o))
	if err != nil {
		return rep, err
	}
	rep.DenseDir = dm.Dir
	docs := cfg.Eval.DocsFor(cfg.Data.Source)
	batches, err := mprism.EvalBatches(dm, docs, cfg.Eval.DocSeed())
	if err != nil {
		return rep, errors.WithMessagef(err, "eval.docs=%d, eval.brown_docs=%d", cfg.Eval.Docs, cfg.Eval.BrownDocs)
	}
	done := map[string]measured{}
	measure := func(pc lm.Config) (measured, error) {
		if m, ok := done[pc.Hash()]; ok {
			return m, nil
		}
		start := time.Now()
		pm, err := lm.LoadOrTrain(pc, run.With(o))
		if err != nil {
			return measured{}, err
		}
		m, err := measureModel(pm, dm, cfg, batches)
		if err != nil {
			return m, err
		}
		done[pc.Hash()] = m
		o.Logf(Study, "seed %d, λ1=%g λ2=%g measured in %.1f s", seed, pc.Prism.R1Weight, pc.Prism.R2Weight,
			time.Since(start).Seconds())
		return m, nil
	}
	for _, w := range cfg.Curvature.Sweep {
		if err := o.Err(); err != nil {
			return rep, err
		}
		pc := base
		pc.Prism.R1Weight, pc.Prism.R2Weight = w, w
		m, err := measure(pc)
		if err != nil {
			return rep, errors.WithMessagef(err, "sweep weight %g", w)
		}
		q := m.quality
		rep.Sweep = append(rep.Sweep, SweepPoint{Weight: w, Dir: m.dir, Perplexity: q.Prism.Perplexity,
			RelPerplexity: q.RelPerplexity, RelLoss: q.RelLoss, Coverage: q.Coverage, Usage: q.Usage,
			Curvature: m.curvature})
	}
	m, err := measure(base)
	if err != nil {
		return rep, err
	}
	rep.PrismDir, rep.Quality, rep.Curvature = m.dir, m.quality, m.curvature
	rep.FixedDamping = rep.Curvature.Damping
	if len(rep.Sweep) > 0 {
		lo := slices.MinFunc(rep.Sweep, func(a, b SweepPoint) int { return cmp.Compare(a.Weight, b.Weight) })
		rep.FixedDamping = lo.Curvature.Damping
	}
	return rep, nil
}

// measureModel returns pm's quality against dm (mprism.ComputeQuality) and its curvature (mprism.ComputeCurvature
// on the first curvature.batches batches), each cached in pm's run folder (none in memory): the quality keyed by both
// models' configs and the evaluation data, the curvature by the model, the curvature settings (without the sweep
// list, which does not change one model's study) and the evaluation data.
func measureModel(pm, dm *lm.Model, cfg Config, batches []*tensors.Tensor) (measured, error) {
	m := measured{dir: pm.Dir}
	qKey := struct {
		Prism, Dense lm.Config
		Eval         EvalConfig
	}{pm.Config, dm.Config, cfg.Eval}
	var err error
	if m.quality, _, err = store.LoadOrCompute(pm.Dir, "quality", qKey, func() (mprism.Quality, error) {
		return mprism.ComputeQuality(pm, dm, batches)
	}); err != nil {
		return m, err
	}
	cc := cfg.Curvature
	if len(batches) < cc.Batches {
		return m, errors.Errorf("%d evaluation batches, curvature.batches=%d (raise eval.docs or lower "+
			"curvature.batches)", len(batches), cc.Batches)
	}
	cc.Sweep = nil
	cKey := struct {
		Model     lm.Config
		Curvature CurvatureConfig
		Eval      EvalConfig
	}{pm.Config, cc, cfg.Eval}
	m.curvature, _, err = store.LoadOrCompute(pm.Dir, "curvature", cKey, func() (mprism.Curvature, error) {
		return mprism.ComputeCurvature(pm, batches[:cc.Batches], cc.Prototypes)
	})
	return m, err
}
