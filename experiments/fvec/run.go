package fvec

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Result is everything the study measured, as plain data (JSON-able; figures.go draws it).
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	Tree       *TreeResult     `json:"tree"`
	Gaussian   *GaussianResult `json:"gaussian,omitempty"`
	// Patches and Vectors hold one entry per Sweep.PatchKinds, in that order.
	Patches []PatchResult  `json:"patches,omitempty"`
	Vectors []VectorResult `json:"vectors,omitempty"`
	// Checks are the study's claims, each with the measured value and whether it holds.
	Checks []Check `json:"checks"`
}

// Curve is the evaluation MSE of one model kind against its measurement budget M, over seeds. Slices are indexed
// like M; PerSeed[i][s] is seed s at M[i].
type Curve struct {
	Kind string `json:"kind"`
	M    []int  `json:"m"`
	// MSE is the mean over seeds of E‖θ̂ − θ‖² on the fixed evaluation set.
	MSE []float64 `json:"mse"`
	// StdErr combines the spread between seeds and the finite evaluation set: √(Var_s/S + se_eval²), where Var_s is
	// the sample variance of the per-seed MSEs (0 for one seed) and se_eval the standard error over contexts of the
	// seed-averaged per-context error.
	StdErr []float64 `json:"std_err"`
	// Best and Median are over seeds (spec §5 asks both: narrow deep models can stall).
	Best    []float64   `json:"best"`
	Median  []float64   `json:"median"`
	PerSeed [][]float64 `json:"per_seed"`
	// TrainSeconds is the training wall time per point, summed over seeds.
	TrainSeconds []float64 `json:"train_seconds"`
}

// TreeResult is the tree-prior study: theory curves and trained models against M (spec §6 item 2).
type TreeResult struct {
	// Theory holds the measurement-model curves at τ² = TokenTau2 (spec §4.7 convention) and the per-node LMMSE of
	// real tokens (LMMSETokens, model C's exact baseline).
	Theory *meanfield.TreeCurves `json:"theory"`
	// AdaptiveTokens and NonAdaptiveTokens are the ideal models A (greedy binary search) and B (BFS nodes, Bayes
	// readout) run as real linear attention on N tokens (spec §8 item 7), indexed by M − 1.
	AdaptiveTokens    []meanfield.Estimate `json:"adaptive_tokens"`
	NonAdaptiveTokens []meanfield.Estimate `json:"non_adaptive_tokens"`
	// OptimalNoiseless is the dynamic programme's optimal adaptive MSE over node keys, noise-free (K ≤ 6, L ≤ 4);
	// greedy binary search is not optimal, so trained models can fall below Theory.Adaptive.
	OptimalNoiseless []float64 `json:"optimal_noiseless,omitempty"`
	Models           []Curve   `json:"models"`
}

// GaussianResult is the Gaussian-prior study (spec §6 item 1).
type GaussianResult struct {
	Theory *meanfield.GaussianCurves `json:"theory"`
	Models []Curve                   `json:"models"`
}

// Check is one claim of the study with its measured value.
type Check struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Want  string  `json:"want"`
	Pass  bool    `json:"pass"`
}

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "fvec"

// LoadOrRun returns the result stored for cfg under run.Out, or runs the study.
func LoadOrRun(cfg Config, opts ...run.Option) (*Result, error) {
	return run.LoadOrRun(Study, cfg, opts, compute)
}

// Run runs the whole study of cfg (theory curves, the tree and Gaussian sweeps, key patching and the
// function-vector probes, then the checks) even when a result is stored, and stores it under run.Out.
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	return run.Recompute(Study, cfg, opts, compute)
}

func compute(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	prov.Seed = cfg.Seed
	log := o.Progress
	if log == nil {
		log = io.Discard
	}
	s := &study{cfg: cfg, backend: backend, log: log, res: &Result{Provenance: prov}, kept: map[string][]*trained{},
		keptMSE: map[string][]float64{}}
	steps := []struct {
		name string
		fn   func() error
	}{
		{"theory", s.theory},
		{"train_tree", s.treeSweep},
		{"train_gaussian", s.gaussianSweep},
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
	s.res.Checks = checks(s.res)
	return s.res, nil
}

// study is the state of one Run.
type study struct {
	cfg     Config
	backend backends.Backend
	log     io.Writer
	res     *Result
	// kept holds, per kind of Sweep.PatchKinds, the trained models at the largest TreeM (one per seed) and their
	// evaluation MSEs.
	kept    map[string][]*trained
	keptMSE map[string][]float64
	logMu   sync.Mutex // models train concurrently (runSweeps)
}

func (s *study) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.log, "fvec: "+format+"\n", args...)
}

// theory computes the theory curves of both priors.
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
	tr := &TreeResult{Theory: curves}
	mc := meanfield.TreeMC{Prior: d.Tree, Tau: curves.Config.Tau, Tokens: d.Tokens, LabelNoise: d.LabelNoise,
		Measurements: min(maxM, d.Tree.Depth), Contexts: d.TheoryContexts, Seed: c.Seed}
	if tr.AdaptiveTokens, err = meanfield.AdaptiveMC(mc); err != nil {
		return err
	}
	if tr.NonAdaptiveTokens, err = meanfield.NonAdaptiveMC(mc); err != nil {
		return err
	}
	if d.Tree.Depth <= meanfield.MaxNoiselessDepth {
		for l := 1; l <= min(maxM, 4); l++ {
			v, err := meanfield.OptimalNoiseless(d.Tree, l)
			if err != nil {
				return err
			}
			tr.OptimalNoiseless = append(tr.OptimalNoiseless, v)
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

// treeKinds returns the kinds trained on the tree prior: Sweep.TreeKinds plus the patching kind.
func (s *study) treeKinds() []string {
	kinds := slices.Clone(s.cfg.Sweep.TreeKinds)
	for _, k := range s.cfg.Sweep.PatchKinds {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

func (s *study) treeSweep() error {
	c := s.cfg
	eval := Generate(c.Data.Tree, c.Data.EvalContexts, c.Data.Tokens, c.Data.LabelNoise, c.Seed, "eval-tree")
	var specs []sweepSpec
	for _, kind := range s.treeKinds() {
		specs = append(specs, sweepSpec{prior: "tree", kind: kind, p: c.Data.Tree, ms: c.Sweep.TreeM, eval: eval,
			keep: slices.Contains(c.Sweep.PatchKinds, kind)})
	}
	curves, kept, err := s.runSweeps(specs)
	if err != nil {
		return err
	}
	s.res.Tree.Models = curves
	for i, sp := range specs {
		if sp.keep {
			s.kept[sp.kind] = kept[i]
			s.keptMSE[sp.kind] = curves[i].PerSeed[len(curves[i].PerSeed)-1]
		}
	}
	return nil
}

func (s *study) gaussianSweep() error {
	if s.res.Gaussian == nil {
		return nil
	}
	c := s.cfg
	p := prior.NewGaussian(c.Data.GaussianDim)
	eval := Generate(p, c.Data.EvalContexts, c.Data.Tokens, c.Data.LabelNoise, c.Seed, "eval-gaussian")
	var specs []sweepSpec
	for _, kind := range c.Sweep.GaussianKinds {
		specs = append(specs, sweepSpec{prior: "gaussian", kind: kind, p: p, ms: c.Sweep.GaussianM, eval: eval})
	}
	curves, _, err := s.runSweeps(specs)
	if err != nil {
		return err
	}
	s.res.Gaussian.Models = curves
	return nil
}

// sweepSpec is one model kind swept over M on one prior.
type sweepSpec struct {
	prior string // "tree" or "gaussian"
	kind  string
	p     prior.Prior
	ms    []int
	eval  *Batch
	keep  bool // return the models at the largest M
}

// chainResult is one seed of a sweepSpec: the models at every M, grown from one another when Sweep.Grow.
type chainResult struct {
	mse        []float64   // per M
	perContext [][]float64 // per M: ‖θ̂ − θ‖² of each evaluation context
	seconds    []float64   // per M: training wall time
	last       *trained
}

// runSweeps trains every (spec, seed) chain, Sweep.Workers chains at a time (each chain is sequential: model M is
// grown from model M−1), and aggregates each spec's curve over seeds. Results do not depend on the number of
// workers: every model's initialisation and training stream come from its own seed. With spec.keep the models at
// the largest M are returned too (one per seed).
func (s *study) runSweeps(specs []sweepSpec) ([]Curve, [][]*trained, error) {
	S := s.cfg.Sweep.Seeds
	chains := make([]chainResult, len(specs)*S)
	errs := make([]error, len(chains))
	workers := s.cfg.Sweep.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, len(chains)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				chains[j], errs[j] = s.chain(specs[j/S], j%S)
			}
		}()
	}
	for j := range chains {
		next <- j
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	curves := make([]Curve, len(specs))
	kept := make([][]*trained, len(specs))
	for i, sp := range specs {
		curves[i] = aggregate(sp.kind, sp.ms, chains[i*S:(i+1)*S])
		if sp.keep {
			for _, ch := range chains[i*S : (i+1)*S] {
				kept[i] = append(kept[i], ch.last)
			}
		}
	}
	return curves, kept, nil
}

// chain trains and evaluates one seed of sp at every M.
func (s *study) chain(sp sweepSpec, seed int) (chainResult, error) {
	c := s.cfg
	gaussian := sp.prior == "gaussian"
	data := c.Data
	data.Batch = c.batch(sp.kind)
	var out chainResult
	var prev *trained
	for _, m := range sp.ms {
		steps := c.steps(sp.kind, gaussian, m)
		mc := c.Model
		mc.Kind, mc.Measurements = sp.kind, m
		if gaussian && c.Sweep.GaussianHidden > 0 {
			mc.Hidden = c.Sweep.GaussianHidden
		}
		if gaussian && c.Sweep.GaussianKeyGain > 0 {
			mc.KeyGain = c.Sweep.GaussianKeyGain
		}
		tc := c.Train
		tc.Steps = steps
		from := prev
		if !c.Sweep.Grow || sp.kind == linattn.KindC {
			from = nil
		}
		t, err := train(s.backend, mc, tc, sp.p, data, c.Seed+uint64(seed), from)
		if err != nil {
			return out, errors.WithMessagef(err, "%s prior", sp.prior)
		}
		o, err := t.run(sp.eval, nil, nil)
		if err != nil {
			return out, err
		}
		mse, se := stats.MeanSE(o.se)
		s.logf("%s prior, model %s, M=%d, seed %d: MSE %.4f ± %.4f (%d steps of %d contexts, %.1f s)", sp.prior,
			sp.kind, m, seed, mse, se, steps, data.Batch, t.seconds)
		out.mse = append(out.mse, mse)
		out.perContext = append(out.perContext, o.se)
		out.seconds = append(out.seconds, t.seconds)
		prev = t
	}
	out.last = prev
	return out, nil
}

// aggregate turns the seeds' chains of one kind into its curve.
func aggregate(kind string, ms []int, chains []chainResult) Curve {
	curve := Curve{Kind: kind, M: slices.Clone(ms)}
	S := float64(len(chains))
	for i := range ms {
		per := make([]float64, len(chains))
		mean := make([]float64, len(chains[0].perContext[i])) // seed-averaged per-context errors
		seconds := 0.0
		for k, ch := range chains {
			per[k] = ch.mse[i]
			seconds += ch.seconds[i]
			for j, v := range ch.perContext[i] {
				mean[j] += v / S
			}
		}
		_, seEval := stats.MeanSE(mean)
		mse, seSeed := stats.MeanSE(per)
		if len(per) < 2 {
			seSeed = 0
		}
		curve.MSE = append(curve.MSE, mse)
		curve.StdErr = append(curve.StdErr, math.Sqrt(seSeed*seSeed+seEval*seEval))
		curve.Best = append(curve.Best, slices.Min(per))
		curve.Median = append(curve.Median, stats.Median(per))
		curve.PerSeed = append(curve.PerSeed, per)
		curve.TrainSeconds = append(curve.TrainSeconds, seconds)
	}
	return curve
}

// String is the study's report: every check with its measured value.
func (r *Result) String() string {
	var b strings.Builder
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "%-5v %-70s %8.4g  want %s\n", c.Pass, c.Name, c.Value, c.Want)
	}
	return b.String()
}
