package prismhead

import (
	"fmt"
	"strings"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "prismhead"

// SweepPoint is one clustering weight λ_1 = λ_2 of the conditioning sweep (docs/spec/prism.md §3 "Weights", §5,
// §8): the trade-off between quality and the coupling and conditioning of the prototype-space Hessian.
type SweepPoint struct {
	Weight        float64               `json:"weight"`         // λ_1 = λ_2
	Perplexity    float64               `json:"perplexity"`     // validation perplexity of the PRISM model
	RelPerplexity float64               `json:"rel_perplexity"` // against the dense model
	Coverage      prism.CoverageMetrics `json:"coverage"`
	Usage         prism.UsageSummary    `json:"usage"`
	Curvature     Curvature             `json:"curvature"`
}

// Result is the study's output: quality against the dense model, the curvature of the configured model and the
// clustering-weight sweep.
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	PrismDir   string          `json:"prism_dir"` // run folder of the configured PRISM model ("" in memory)
	DenseDir   string          `json:"dense_dir"` // run folder of the dense model
	Quality    Quality         `json:"quality"`
	Curvature  Curvature       `json:"curvature"`
	Sweep      []SweepPoint    `json:"sweep"`
}

// String is the study's report.
func (r *Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\ncurvature of the configured model:\n%s\n", r.Quality, r.Curvature)
	if len(r.Sweep) > 0 {
		fmt.Fprintf(&b, "clustering-weight sweep (λ1 = λ2):\n%8s %9s %7s %7s %9s %9s %10s %10s\n", "weight", "Δppl", "R̄1",
			"R2", "offdiagC", "blockmass", "κ exact+λ", "κ struct+λ")
		for _, p := range r.Sweep {
			st, _ := p.Curvature.Approximation(ApproxStructured)
			fmt.Fprintf(&b, "%8g %+8.2f%% %7.3f %7.3f %9.3f %9.3f %10.3g %10.3g\n", p.Weight, 100*p.RelPerplexity,
				p.Coverage.R1Bar, p.Coverage.R2, p.Curvature.OffDiagonalMass, p.Curvature.Exact.BlockMass,
				p.Curvature.Exact.DampedCond, st.DampedCond)
		}
	}
	return b.String()
}

// LoadOrRun returns the result stored for cfg under run.Out, or runs the study. Notebook cells use it so that only
// the first one computes.
func LoadOrRun(cfg Config, opts ...run.Option) (*Result, error) {
	return run.LoadOrRun(Study, cfg, opts, compute)
}

// Run runs the whole study even when a result is stored: it trains (or loads, from run.Out/models) the PRISM model
// of cfg and its dense baseline, compares them (ComputeQuality), studies the curvature of the PRISM model
// (ComputeCurvature), and trains one PRISM model per clustering weight of cfg.Curvature.Sweep; with run.Out set it
// stores the result there.
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	return run.Recompute(Study, cfg, opts, compute)
}

func compute(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seed
	res := &Result{Provenance: prov}
	dm, err := lm.LoadOrTrain(cfg.Config.Dense(), run.With(o))
	if err != nil {
		return nil, err
	}
	pm, err := lm.LoadOrTrain(cfg.Config, run.With(o))
	if err != nil {
		return nil, err
	}
	res.PrismDir, res.DenseDir = pm.Dir, dm.Dir
	if err := prov.Time("quality", func() error {
		res.Quality, err = cachedQuality(pm, dm)
		return err
	}); err != nil {
		return nil, err
	}
	if err := o.Err(); err != nil {
		return nil, err
	}
	if err := prov.Time("curvature", func() error {
		res.Curvature, err = cachedCurvature(pm, cfg.Curvature)
		return err
	}); err != nil {
		return nil, err
	}
	if err := prov.Time("sweep", func() error {
		res.Sweep, err = sweep(cfg, dm, o)
		return err
	}); err != nil {
		return nil, err
	}
	return res, nil
}

// RunSweep trains (or loads) one PRISM model per clustering weight λ_1 = λ_2 of cfg.Curvature.Sweep and returns
// each model's quality against the dense model and its curvature study.
func RunSweep(cfg Config, opts ...run.Option) ([]SweepPoint, error) {
	if err := cfg.Validate(); err != nil {
		return nil, errors.WithMessage(err, Study)
	}
	o := run.NewOptions(opts...)
	dm, err := lm.LoadOrTrain(cfg.Config.Dense(), run.With(o))
	if err != nil {
		return nil, err
	}
	return sweep(cfg, dm, o)
}

func sweep(cfg Config, dm *lm.Model, o run.Options) ([]SweepPoint, error) {
	var out []SweepPoint
	for _, w := range cfg.Curvature.Sweep {
		if err := o.Err(); err != nil {
			return nil, err
		}
		c := cfg.Config
		c.Prism.R1Weight, c.Prism.R2Weight = w, w
		start := time.Now()
		pm, err := lm.LoadOrTrain(c, run.With(o))
		if err != nil {
			return nil, errors.WithMessagef(err, "sweep weight %g", w)
		}
		q, err := cachedQuality(pm, dm)
		if err != nil {
			return nil, errors.WithMessagef(err, "sweep weight %g", w)
		}
		curv, err := cachedCurvature(pm, cfg.Curvature)
		if err != nil {
			return nil, errors.WithMessagef(err, "sweep weight %g", w)
		}
		out = append(out, SweepPoint{Weight: w, Perplexity: q.Prism.Perplexity, RelPerplexity: q.RelPerplexity,
			Coverage: q.Coverage, Usage: q.Usage, Curvature: curv})
		o.Logf(Study, "sweep weight %g done in %.1f s", w, time.Since(start).Seconds())
	}
	return out, nil
}

// cachedQuality is ComputeQuality, cached in the PRISM model's run folder (none in memory) and keyed by both models'
// configs.
func cachedQuality(pm, dm *lm.Model) (Quality, error) {
	key := struct {
		Prism, Dense lm.Config
	}{pm.Config, dm.Config}
	q, _, err := store.LoadOrCompute(pm.Dir, "quality", key, func() (Quality, error) { return ComputeQuality(pm, dm) })
	return q, err
}

// cachedCurvature is ComputeCurvature, cached in the PRISM model's run folder and keyed by the model and cc (without
// the sweep list, which does not change one model's study).
func cachedCurvature(pm *lm.Model, cc CurvatureConfig) (Curvature, error) {
	cc.Sweep = nil
	key := struct {
		Model     lm.Config
		Curvature CurvatureConfig
	}{pm.Config, cc}
	c, _, err := store.LoadOrCompute(pm.Dir, "curvature", key, func() (Curvature, error) { return ComputeCurvature(pm, cc) })
	return c, err
}
