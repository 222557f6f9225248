package fvec

import (
	"fmt"
	"io"
	"sync"

	"github.com/gomlx/compute"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/models/icl"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/workbench/parallel"
	"github.com/protolab/protolab/workbench/run"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "fvec"

// Runs is the study's entry points (run.Entry): Runs.LoadOrRun(cfg) returns the result stored for cfg under
// run.Out or runs the study; Runs.Run(cfg) runs it even when a result is stored (the models it trains are loaded
// from run.Out/models when trained before); Runs.Notebook() and Runs.NotebookConfig() are what a notebook shows
// and starts its settings from at $PROTOLAB_PRESET. Once a result is stored, the progress folders of finished runs
// are removed (doc.go, "Progress").
var Runs = run.Entry[Config, *Result]{Study: Study, Preset: Preset, Small: Small, Quick: Quick, Compute: runStudy,
	Stored: func(o run.Options) error { return removeFinishedProgress(o.Out) }}

// runStudy runs the whole study of cfg: theory curves, the tree and Gaussian sweeps, key patching and the
// function-vector probes, then the checks. Finished chains are stored as they finish and a rerun resumes from them
// (doc.go, "Progress").
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	prov.Seed = cfg.Seed
	log := o.Progress
	if log == nil {
		log = io.Discard
	}
	progress, err := progressDir(o.Out, cfg)
	if err != nil {
		return nil, err
	}
	s := &study{cfg: cfg, backend: backend, log: log, o: o, res: &Result{Provenance: prov, Protocol: protocolOf(cfg)},
		kept: map[string][]*icl.Model{}, keptVal: map[string][]float64{}, progress: progress}
	steps := []struct {
		name string
		fn   func() error
	}{
		{"theory", s.theory},
		{"train", s.sweeps},
		{"patch", s.patch},
		{"vectors", s.vectors},
	}
	for _, st := range steps {
		if err := o.Err(); err != nil {
			return nil, err
		}
		if err := prov.Time(st.name, st.fn); err != nil {
			return nil, errors.WithMessagef(err, "fvec: %s", st.name)
		}
	}
	s.res.Checks = checks(s.res, cfg)
	return s.res, nil
}

// study is the state of one Run.
type study struct {
	cfg     Config
	backend compute.Backend
	log     io.Writer
	o       run.Options
	res     *Result
	// kept holds, per patched row, the trained models at the largest TreeM (one per seed) and their final
	// validation MSEs.
	kept     map[string][]*icl.Model
	keptVal  map[string][]float64
	treeTest *icl.Batch // the tree prior's test set (the probes' contexts)
	logMu    sync.Mutex // models train concurrently (parallel.Do)
	// progress is the folder finished chains are stored in and loaded from (progress.go); "" stores nothing.
	progress string
}

func (s *study) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.log, "fvec: "+format+"\n", args...)
}

// theory computes the theory curves of both priors and the best non-adaptive designs.
func (s *study) theory() error {
	c, d := s.cfg, s.cfg.Data
	maxM := 1
	if len(c.Sweep.TreeM) > 0 {
		maxM = c.Sweep.TreeM[len(c.Sweep.TreeM)-1]
	}
	tc := meanfield.TreeCurveConfig{Prior: d.Tree, Tokens: d.Tokens, LabelNoise: d.LabelNoise, MaxMeasurements: maxM,
		Contexts: d.TheoryContexts, BoundContexts: d.BoundContexts, Seed: c.Seed}
	curves, err := meanfield.ComputeTreeCurves(tc)
	if err != nil {
		return err
	}
	tokens, err := meanfield.ComputeTreeTokenCurves(curves.Config)
	if err != nil {
		return err
	}
	tr := &TreeResult{Theory: curves, AdaptiveTokens: tokens.Adaptive, NonAdaptiveTokens: tokens.NonAdaptive,
		OptimalNoiseless: tokens.OptimalNoiseless}
	if d.DesignContexts > 0 {
		tr.BestDesign = make([]DesignPoint, len(c.Sweep.TreeM))
		// The searches are independent; the largest M costs the most, so it starts first.
		if err := parallel.Do(len(c.Sweep.TreeM), c.Sweep.Workers, func(i int) error {
			i = len(c.Sweep.TreeM) - 1 - i
			m := c.Sweep.TreeM[i]
			design, est, err := meanfield.ReestimatedLevelDesign(d.Tree, m, d.Tokens, d.LabelNoise, d.DesignContexts,
				d.TheoryContexts, c.Seed)
			if err != nil {
				return err
			}
			tr.BestDesign[i] = DesignPoint{M: m, MSE: est, W: design.W}
			s.logf("best non-adaptive level design, M=%d: MSE %.4f ± %.4f", m, est.Mean, est.StdErr)
			return nil
		}); err != nil {
			return err
		}
	}
	s.res.Tree = tr
	if len(c.Sweep.GaussianKinds) > 0 {
		gm := c.Sweep.GaussianM[len(c.Sweep.GaussianM)-1]
		g, err := meanfield.ComputeGaussianCurves(meanfield.GaussianCurveConfig{Dim: d.GaussianDim, Tokens: d.Tokens,
			LabelNoise: d.LabelNoise, MaxMeasurements: gm, Seed: c.Seed})
		if err != nil {
			return err
		}
		s.res.Gaussian = &GaussianResult{Theory: g}
	}
	return nil
}

// sweeps trains every row of both priors in one parallel.Do (each row's seeds are independent chains over M),
// model A's rows first, the most expensive, so that the workers finish together.
func (s *study) sweeps() error {
	c := s.cfg
	rows := c.rows()
	sets := map[string]icl.EvalSets{}
	var order []int // model A's rows, then the others
	for _, first := range []bool{true, false} {
		for i, r := range rows {
			if (r.kind == linattn.KindA) == first {
				order = append(order, i)
			}
		}
	}
	for _, r := range rows {
		if _, ok := sets[r.prior]; !ok {
			sets[r.prior] = s.evalSets(r.prior)
		}
	}
	s.treeTest = sets["tree"].Test
	S := c.Sweep.Seeds
	chains := make([]icl.ChainResult, len(rows)*S)
	if err := parallel.Do(len(chains), c.Sweep.Workers, func(j int) error {
		i, seed := order[j/S], j%S
		var err error
		chains[i*S+seed], err = s.chain(rows[i], sets[rows[i].prior], seed).Run(s.backend)
		return err
	}); err != nil {
		return err
	}
	for i, r := range rows {
		curve := icl.NewCurve(r.name, r.kind, r.keyGain, r.ms, chains[i*S:(i+1)*S])
		if r.prior == "tree" {
			s.res.Tree.Models = append(s.res.Tree.Models, curve)
		} else {
			s.res.Gaussian.Models = append(s.res.Gaussian.Models, curve)
		}
		if r.keep {
			for _, ch := range chains[i*S : (i+1)*S] {
				s.kept[r.name] = append(s.kept[r.name], ch.Last)
			}
			s.keptVal[r.name] = curve.ValMSE[len(curve.ValMSE)-1]
		}
	}
	return nil
}

// evalSets returns the validation, test and held-out test sets of the named prior.
func (s *study) evalSets(name string) icl.EvalSets {
	c, d := s.cfg, s.cfg.Data
	p := c.priorOf(name)
	return icl.EvalSets{
		Val:     icl.Generate(p, d.ValContexts, d.Tokens, d.LabelNoise, c.ValSeed, "val-"+name),
		Test:    icl.Generate(p, d.TestContexts, d.Tokens, d.LabelNoise, c.TestSeed, "test-"+name),
		HeldOut: icl.Generate(p, d.TestContexts, d.Tokens, d.LabelNoise, c.HeldOutSeed, "test-"+name),
	}
}

// chain returns one seed of row r: its models at every M, stored in (and loaded from) the run's progress folder.
func (s *study) chain(r row, sets icl.EvalSets, seed int) *icl.Chain {
	c := s.cfg
	return &icl.Chain{Prior: r.prior, Row: r.name, Index: seed, Seed: c.Seed + uint64(seed),
		Sampler: c.priorOf(r.prior), Data: c.Data.Data, Segments: c.segments(r), Grow: c.Sweep.Grow,
		PlateauTail: c.Sweep.PlateauTail, Sets: sets, Dir: s.chainDir(r, seed), Context: s.o.Context, Logf: s.logf}
}
