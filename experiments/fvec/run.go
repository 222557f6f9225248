package fvec

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/gomlx/gomlx/backends"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// ResultFile is the name of the result file Run writes into Config.Out.
const ResultFile = "result.json"

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

// Option changes how Run runs.
type Option func(*options)

type options struct {
	overrides string
	log       io.Writer
}

// WithOverrides records the override string applied to the preset in the Provenance.
func WithOverrides(s string) Option { return func(o *options) { o.overrides = s } }

// Log sends one line per trained model and phase to w instead of os.Stderr; nil silences Run.
func Log(w io.Writer) Option { return func(o *options) { o.log = w } }

// Run runs the whole study of cfg: theory curves, the tree and Gaussian sweeps, key patching and the function-vector
// probes, then the checks; with cfg.Out set it writes Out/result.json.
func Run(cfg Config, opts ...Option) (*Result, error) {
	o := options{log: os.Stderr}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = io.Discard
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	s := &study{cfg: cfg, backend: backend, log: o.log, res: &Result{Provenance: run.NewProvenance(cfg, o.overrides,
		cfg.Seed)}, kept: map[string][]*trained{}, keptMSE: map[string][]float64{}}
	prov := s.res.Provenance
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
		if err := prov.Time(st.name, st.fn); err != nil {
			return nil, errors.WithMessagef(err, "fvec: %s", st.name)
		}
	}
	s.res.Checks = checks(s.res)
	prov.Finish()
	if cfg.Out != "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return nil, errors.Wrapf(err, "fvec: creating the output folder %s", cfg.Out)
		}
		if err := store.SaveJSON(filepath.Join(cfg.Out, ResultFile), s.res); err != nil {
			return nil, err
		}
	}
	return s.res, nil
}

// LoadOrRun returns the result stored in cfg.Out when its configuration equals cfg, and runs the study otherwise.
// Notebook cells use it so that only the first one trains.
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
			if equalJSON(stored.Provenance.Config, cfg) {
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
}

func (s *study) logf(format string, args ...any) { fmt.Fprintf(s.log, "fvec: "+format+"\n", args...) }

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
	eval := Generate(s.cfg.Data.Tree, s.cfg.Data.EvalContexts, s.cfg.Data.Tokens, s.cfg.Data.LabelNoise, s.cfg.Seed,
		"eval-tree")
	for _, kind := range s.treeKinds() {
		keep := slices.Contains(s.cfg.Sweep.PatchKinds, kind)
		curve, last, err := s.sweep("tree", kind, s.cfg.Data.Tree, s.cfg.Sweep.TreeM, s.cfg.steps(kind, false), eval,
			keep)
		if err != nil {
			return err
		}
		s.res.Tree.Models = append(s.res.Tree.Models, curve)
		if keep {
			s.kept[kind] = last
			s.keptMSE[kind] = curve.PerSeed[len(curve.PerSeed)-1]
		}
	}
	return nil
}

func (s *study) gaussianSweep() error {
	if s.res.Gaussian == nil {
		return nil
	}
	p := prior.NewGaussian(s.cfg.Data.GaussianDim)
	eval := Generate(p, s.cfg.Data.EvalContexts, s.cfg.Data.Tokens, s.cfg.Data.LabelNoise, s.cfg.Seed, "eval-gaussian")
	for _, kind := range s.cfg.Sweep.GaussianKinds {
		curve, _, err := s.sweep("gaussian", kind, p, s.cfg.Sweep.GaussianM, s.cfg.steps(kind, true), eval, false)
		if err != nil {
			return err
		}
		s.res.Gaussian.Models = append(s.res.Gaussian.Models, curve)
	}
	return nil
}

// sweep trains kind at every M (grown from the previous M when Sweep.Grow) for every seed, evaluates each model on
// eval and aggregates the curve. With keep it returns the models at the largest M (one per seed).
func (s *study) sweep(name, kind string, p prior.Prior, ms []int, steps int, eval *Batch, keep bool) (Curve,
	[]*trained, error) {
	c := s.cfg
	curve := Curve{Kind: kind, M: slices.Clone(ms)}
	perContext := make([][]float64, len(ms)) // seed-summed per-context errors
	curve.PerSeed = make([][]float64, len(ms))
	curve.TrainSeconds = make([]float64, len(ms))
	var last []*trained
	for seed := 0; seed < c.Sweep.Seeds; seed++ {
		var prev *trained
		for i, m := range ms {
			mc := c.Model
			mc.Kind, mc.Measurements = kind, m
			if name == "gaussian" && c.Sweep.GaussianHidden > 0 {
				mc.Hidden = c.Sweep.GaussianHidden
			}
			tc := c.Train
			tc.Steps = steps
			from := prev
			if !c.Sweep.Grow || kind == linattn.KindC {
				from = nil
			}
			t, err := train(s.backend, mc, tc, p, c.Data, c.Seed+uint64(seed), from)
			if err != nil {
				return curve, nil, errors.WithMessagef(err, "%s prior", name)
			}
			out, err := t.run(eval, nil, nil)
			if err != nil {
				return curve, nil, err
			}
			mse, se := meanStdErr(out.se)
			s.logf("%s prior, model %s, M=%d, seed %d: MSE %.4f ± %.4f (%d steps, %.1f s)", name, kind, m, seed, mse,
				se, steps, t.seconds)
			curve.PerSeed[i] = append(curve.PerSeed[i], mse)
			curve.TrainSeconds[i] += t.seconds
			if perContext[i] == nil {
				perContext[i] = make([]float64, len(out.se))
			}
			for j, v := range out.se {
				perContext[i][j] += v
			}
			prev = t
		}
		if keep {
			last = append(last, prev)
		}
	}
	S := float64(c.Sweep.Seeds)
	for i := range ms {
		per := curve.PerSeed[i]
		for j := range perContext[i] {
			perContext[i][j] /= S
		}
		_, seEval := meanStdErr(perContext[i])
		mean, seSeed := meanStdErr(per)
		if len(per) < 2 {
			seSeed = 0
		}
		curve.MSE = append(curve.MSE, mean)
		curve.StdErr = append(curve.StdErr, math.Sqrt(seSeed*seSeed+seEval*seEval))
		sorted := slices.Clone(per)
		sort.Float64s(sorted)
		curve.Best = append(curve.Best, sorted[0])
		med := sorted[len(sorted)/2]
		if len(sorted)%2 == 0 {
			med = (sorted[len(sorted)/2-1] + med) / 2
		}
		curve.Median = append(curve.Median, med)
	}
	return curve, last, nil
}

// equalJSON reports whether a and b have the same JSON encoding.
func equalJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
