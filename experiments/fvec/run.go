package fvec

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/gomlx/compute"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/parallel"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Result is everything the study measured, as plain data (JSON-able; figures.go draws it, Claims scores it).
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	// Protocol states the budgets, seeds and plateau criterion the claims and checks are judged under.
	Protocol Protocol        `json:"protocol"`
	Tree     *TreeResult     `json:"tree"`
	Gaussian *GaussianResult `json:"gaussian,omitempty"`
	// Patches holds one entry per patched row (Sweep.PatchKinds and the key-gain ablation) and seed; Vectors one
	// per patched row, for the seed with the lowest validation MSE.
	Patches []PatchResult  `json:"patches,omitempty"`
	Vectors []VectorResult `json:"vectors,omitempty"`
	// Checks say whether the protocol ran as stated (every model on its plateau, B at the best non-adaptive design,
	// C on its theory curve), each with the measured value.
	Checks []Check `json:"checks"`
}

// AblationKeyGain is the name of the key-gain ablation row: model A with model.key_gain = sweep.key_gain_ablation.
const AblationKeyGain = "a_key_gain"

// Scores are the MSEs of one row on one evaluation set against M, over seeds. Slices are indexed like M;
// PerSeed[i][s] is seed s at M[i].
type Scores struct {
	// MSE is the mean over seeds of E‖θ̂ − θ‖² on the evaluation set.
	MSE []float64 `json:"mse"`
	// StdErr combines the spread between seeds and the finite evaluation set: √(Var_s/S + se_eval²), where Var_s is
	// the sample variance of the per-seed MSEs (0 for one seed) and se_eval the standard error over contexts of the
	// seed-averaged per-context error.
	StdErr []float64 `json:"std_err"`
	// Best and Median are over seeds (spec §5 asks both: narrow deep models can stall).
	Best    []float64   `json:"best"`
	Median  []float64   `json:"median"`
	PerSeed [][]float64 `json:"per_seed"`
}

// Curve is one row of the study: a model kind (or the key-gain ablation) trained at every M of its sweep, over
// seeds, scored on the test set (the embedded Scores: the reported numbers) and on the held-out test set.
type Curve struct {
	// Name is the row: the kind, or AblationKeyGain.
	Name string `json:"name"`
	Kind string `json:"kind"`
	// KeyGain is model.key_gain of the row (0: none, the common recipe).
	KeyGain float64 `json:"key_gain,omitempty"`
	M       []int   `json:"m"`
	Scores
	// HeldOut are the scores on the held-out test set (held_out_seed), reported separately.
	HeldOut Scores `json:"held_out"`
	// ValMSE[i][s] is the final validation MSE of seed s at M[i], the only score choices are made on.
	ValMSE [][]float64 `json:"val_mse"`
	// Training[i][s] is the training record of seed s at M[i] (validation curve, plateau statistic).
	Training [][]Training `json:"training"`
	// TrainSeconds is the training wall time per point, summed over seeds.
	TrainSeconds []float64 `json:"train_seconds"`
}

// DesignPoint is the best non-adaptive linear design that meanfield.BestLevelDesign finds with M channels: the
// reference a trained model B is compared with.
type DesignPoint struct {
	M int `json:"m"`
	// MSE is the design's Bayes-readout MSE re-estimated on data.theory_contexts fresh draws.
	MSE meanfield.Estimate `json:"mse"`
	// W are the design's level weights [M][K] (eq. 4.12 of theory/meanfield).
	W [][]float64 `json:"w"`
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
	// BestDesign is the best non-adaptive level design at each M of sweep.tree_m (empty when
	// data.design_contexts is 0).
	BestDesign []DesignPoint `json:"best_design,omitempty"`
	Models     []Curve       `json:"models"`
}

// GaussianResult is the Gaussian-prior study (spec §6 item 1).
type GaussianResult struct {
	Theory *meanfield.GaussianCurves `json:"theory"`
	Models []Curve                   `json:"models"`
}

// Check is one statement about the run with its measured value.
type Check struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Want  string  `json:"want"`
	Pass  bool    `json:"pass"`
}

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "fvec"

// LoadOrRun returns the result stored for cfg under run.Out, or runs the study.
// Finished chains are stored as they finish and a rerun resumes from them (doc.go, "Progress").
func LoadOrRun(cfg Config, opts ...run.Option) (*Result, error) {
	r, err := run.LoadOrRun(Study, cfg, opts, runStudy)
	return withProgressRemoved(r, err, opts)
}

// Run runs the whole study of cfg (theory curves, the tree and Gaussian sweeps, key patching and the
// function-vector probes, then the checks) even when a result is stored, and stores it under run.Out.
// Chains stored by an interrupted run of cfg are loaded, not retrained (doc.go, "Progress").
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	r, err := run.Recompute(Study, cfg, opts, runStudy)
	return withProgressRemoved(r, err, opts)
}

// Notebook returns what notebook 30 shows: at the Small preset (run.PresetName) the stored protocol run when
// `protolab run fvec --preset small` has made one, else the Quick run (computed or loaded); at any other preset
// LoadOrRun of that preset.
func Notebook(opts ...run.Option) (*Result, error) {
	r, err := run.Notebook(Study, Preset, Small, Quick, opts, runStudy)
	return withProgressRemoved(r, err, opts)
}

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
		kept: map[string][]*trained{}, keptVal: map[string][]float64{}, progress: progress}
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
	kept     map[string][]*trained
	keptVal  map[string][]float64
	treeTest *Batch     // the tree prior's test set (the probes' contexts)
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

// treeKinds returns the kinds trained on the tree prior: Sweep.TreeKinds plus the patching kinds.
func (s *study) treeKinds() []string {
	kinds := slices.Clone(s.cfg.Sweep.TreeKinds)
	for _, k := range s.cfg.Sweep.PatchKinds {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// evalSets are the validation, test and held-out test sets of one prior.
type evalSets struct{ val, test, heldOut *Batch }

func (s *study) evalSets(p prior.Prior, name string) evalSets {
	c, d := s.cfg, s.cfg.Data
	return evalSets{
		val:     Generate(p, d.ValContexts, d.Tokens, d.LabelNoise, c.ValSeed, "val-"+name),
		test:    Generate(p, d.TestContexts, d.Tokens, d.LabelNoise, c.TestSeed, "test-"+name),
		heldOut: Generate(p, d.TestContexts, d.Tokens, d.LabelNoise, c.HeldOutSeed, "test-"+name),
	}
}

// sweeps trains every row of both priors in one parallel.Do (each row's seeds are independent chains over M), the most
// expensive rows first so that the workers finish together.
func (s *study) sweeps() error {
	c := s.cfg
	tree := s.evalSets(c.Data.Tree, "tree")
	s.treeTest = tree.test
	var first, rest []sweepSpec
	for _, kind := range s.treeKinds() {
		sp := sweepSpec{prior: "tree", name: kind, kind: kind, p: c.Data.Tree, ms: c.Sweep.TreeM, sets: tree,
			keep: slices.Contains(c.Sweep.PatchKinds, kind)}
		if kind == linattn.KindA {
			first = append(first, sp)
		} else {
			rest = append(rest, sp)
		}
	}
	if g := c.Sweep.KeyGainAblation; g > 0 {
		first = append(first, sweepSpec{prior: "tree", name: AblationKeyGain, kind: linattn.KindA, keyGain: g,
			p: c.Data.Tree, ms: c.Sweep.TreeM, sets: tree, keep: slices.Contains(c.Sweep.PatchKinds, linattn.KindA)})
	}
	if s.res.Gaussian != nil {
		p := prior.NewGaussian(c.Data.GaussianDim)
		gauss := s.evalSets(p, "gaussian")
		for _, kind := range c.Sweep.GaussianKinds {
			sp := sweepSpec{prior: "gaussian", name: kind, kind: kind, p: p, ms: c.Sweep.GaussianM, sets: gauss}
			if kind == linattn.KindA {
				first = append(first, sp)
			} else {
				rest = append(rest, sp)
			}
		}
	}
	specs := append(first, rest...)
	S := c.Sweep.Seeds
	chains := make([]chainResult, len(specs)*S)
	if err := parallel.Do(len(chains), c.Sweep.Workers, func(j int) error {
		var err error
		chains[j], err = s.chain(specs[j/S], j%S)
		return err
	}); err != nil {
		return err
	}
	for i, sp := range specs {
		curve := aggregate(sp, chains[i*S:(i+1)*S])
		if sp.prior == "tree" {
			s.res.Tree.Models = append(s.res.Tree.Models, curve)
		} else {
			s.res.Gaussian.Models = append(s.res.Gaussian.Models, curve)
		}
		if sp.keep {
			for _, ch := range chains[i*S : (i+1)*S] {
				s.kept[sp.name] = append(s.kept[sp.name], ch.last)
			}
			s.keptVal[sp.name] = curve.ValMSE[len(curve.ValMSE)-1]
		}
	}
	// Rows in a fixed order whatever the scheduling: the kinds as configured, then the ablation.
	order := func(models []Curve, kinds []string) {
		rank := func(c Curve) int {
			if i := slices.Index(kinds, c.Name); i >= 0 {
				return i
			}
			return len(kinds)
		}
		slices.SortStableFunc(models, func(a, b Curve) int { return rank(a) - rank(b) })
	}
	order(s.res.Tree.Models, s.treeKinds())
	if s.res.Gaussian != nil {
		order(s.res.Gaussian.Models, c.Sweep.GaussianKinds)
	}
	return nil
}

// sweepSpec is one row swept over M on one prior.
type sweepSpec struct {
	prior   string // "tree" or "gaussian"
	name    string // Curve.Name
	kind    string
	keyGain float64 // model.key_gain of the row (the ablation), 0 for the common recipe
	p       prior.Prior
	ms      []int
	sets    evalSets
	keep    bool // keep the models at the largest M
}

// chainResult is one seed of a sweepSpec: the models at every M, grown from one another when Sweep.Grow.
type chainResult struct {
	test, heldOut []evalScore // per M
	val           []float64   // per M: final validation MSE
	training      []Training  // per M
	last          *trained
}

// evalScore is one model's MSE on one evaluation set with its per-context errors.
type evalScore struct {
	mse        float64
	perContext []float64
}

// modelConfig returns the model of row sp at M = m.
func (s *study) modelConfig(sp sweepSpec, m int) linattn.Config {
	mc := s.cfg.Model
	mc.Kind, mc.Measurements, mc.KeyGain = sp.kind, m, sp.keyGain
	if sp.prior == "gaussian" && s.cfg.Sweep.GaussianHidden > 0 {
		mc.Hidden = s.cfg.Sweep.GaussianHidden
	}
	return mc
}

// chain returns one seed of sp at every M: loaded from the run's progress folder when an earlier run stored it
// (progress.go), else trained, evaluated and stored there.
func (s *study) chain(sp sweepSpec, seed int) (chainResult, error) {
	if out, ok, err := s.loadChain(sp, seed); err != nil || ok {
		return out, err
	}
	out, err := s.trainChain(sp, seed)
	if err != nil {
		return out, err
	}
	return out, s.storeChain(sp, seed, out)
}

// trainChain trains and evaluates one seed of sp at every M.
func (s *study) trainChain(sp sweepSpec, seed int) (chainResult, error) {
	c := s.cfg
	gaussian := sp.prior == "gaussian"
	var out chainResult
	var prev *trained
	for _, m := range sp.ms {
		if err := s.o.Err(); err != nil {
			return out, err
		}
		steps := c.steps(gaussian, m)
		mc := s.modelConfig(sp, m)
		tc := c.Train
		tc.Steps = steps
		tc.WarmupSteps = min(tc.WarmupSteps, steps)
		tc.EvalEvery = c.evalEvery(steps)
		from := prev
		if !c.Sweep.Grow {
			from = nil
		}
		var opts []fit.Option
		if s.o.Context != nil {
			opts = append(opts, fit.WithContext(s.o.Context))
		}
		t, err := train(s.backend, mc, tc, sp.p, c.Data, c.Seed+uint64(seed), from, sp.sets.val, opts...)
		if err != nil {
			return out, errors.WithMessagef(err, "%s prior, row %s", sp.prior, sp.name)
		}
		rec := t.record(steps, c.Data.Batch, c.Sweep.PlateauTail)
		var scores [2]evalScore
		for i, b := range []*Batch{sp.sets.test, sp.sets.heldOut} {
			o, err := t.run(b, nil, nil)
			if err != nil {
				return out, err
			}
			scores[i] = evalScore{mse: stats.Mean(o.se), perContext: o.se}
		}
		val := math.NaN()
		if n := len(rec.ValMSE); n > 0 {
			val = rec.ValMSE[n-1]
		}
		s.logf("%s prior, %s, M=%d, seed %d: validation MSE %.4f (last %.0f%% of training: %+.2f%%), test %.4f (%d "+
			"steps of %d contexts, %.1f s)", sp.prior, sp.name, m, seed, val, 100*c.Sweep.PlateauTail,
			-100*rec.Improvement, scores[0].mse, steps, c.Data.Batch, t.seconds)
		out.test = append(out.test, scores[0])
		out.heldOut = append(out.heldOut, scores[1])
		out.val = append(out.val, val)
		out.training = append(out.training, rec)
		prev = t
	}
	out.last = prev
	return out, nil
}

// aggregate turns the seeds' chains of one row into its curve.
func aggregate(sp sweepSpec, chains []chainResult) Curve {
	curve := Curve{Name: sp.name, Kind: sp.kind, KeyGain: sp.keyGain, M: slices.Clone(sp.ms)}
	for i := range sp.ms {
		var test, held []evalScore
		var val []float64
		var tr []Training
		seconds := 0.0
		for _, ch := range chains {
			test, held = append(test, ch.test[i]), append(held, ch.heldOut[i])
			val = append(val, ch.val[i])
			tr = append(tr, ch.training[i])
			seconds += ch.training[i].Seconds
		}
		curve.Scores.add(test)
		curve.HeldOut.add(held)
		curve.ValMSE = append(curve.ValMSE, val)
		curve.Training = append(curve.Training, tr)
		curve.TrainSeconds = append(curve.TrainSeconds, seconds)
	}
	return curve
}

// add appends one point (the seeds' scores on one evaluation set) to the scores.
func (sc *Scores) add(seeds []evalScore) {
	S := float64(len(seeds))
	per := make([]float64, len(seeds))
	mean := make([]float64, len(seeds[0].perContext)) // seed-averaged per-context errors
	for k, e := range seeds {
		per[k] = e.mse
		for j, v := range e.perContext {
			mean[j] += v / S
		}
	}
	_, seEval := stats.MeanSE(mean)
	mse, seSeed := stats.MeanSE(per)
	if len(per) < 2 {
		seSeed = 0
	}
	sc.MSE = append(sc.MSE, mse)
	sc.StdErr = append(sc.StdErr, math.Sqrt(seSeed*seSeed+seEval*seEval))
	sc.Best = append(sc.Best, slices.Min(per))
	sc.Median = append(sc.Median, stats.Median(per))
	sc.PerSeed = append(sc.PerSeed, per)
}

// String is the study's report: each row's test MSE against M, the scorecard claims (ours and the rule; the
// scorecard adds the papers' numbers and the verdicts), then every check with its measured value.
func (r *Result) String() string {
	var b strings.Builder
	table := func(prior string, models []Curve) {
		for i := range models {
			c := &models[i]
			fmt.Fprintf(&b, "%s prior, %s: test MSE", prior, rowName(c))
			for j, m := range c.M {
				fmt.Fprintf(&b, "  M=%d %.4g ± %.2g", m, c.MSE[j], c.StdErr[j])
			}
			fmt.Fprintf(&b, " (%d seeds)\n", len(c.PerSeed[0]))
		}
	}
	if r.Tree != nil {
		table("tree", r.Tree.Models)
		for _, d := range r.Tree.BestDesign {
			fmt.Fprintf(&b, "tree prior, best non-adaptive level design: M=%d %.4g ± %.2g\n", d.M, d.MSE.Mean,
				d.MSE.StdErr)
		}
	}
	if r.Gaussian != nil {
		table("gaussian", r.Gaussian.Models)
	}
	for _, c := range Claims(r) {
		ours := c.Ours.String()
		if c.Untestable != "" {
			ours = "not testable: " + c.Untestable
		}
		fmt.Fprintf(&b, "%s: %s [%s]\n", c.Claim, ours, c.Rule.Text())
	}
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "%-5v %-70s %8.4g  want %s\n", c.Pass, c.Name, c.Value, c.Want)
	}
	return b.String()
}
