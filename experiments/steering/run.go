package steering

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "steering"

// ControllerWeight is one non-zero gain γ_i of a fitted controller: prototype i's slice is scaled by 1 + γ_i.
type ControllerWeight struct {
	Prototype int     `json:"prototype"`
	Gain      float64 `json:"gain"`
}

// TaskResult is the controller result of one task. Accuracies are fractions of items; SEs are binomial
// (√(p(1−p)/n)), and GainSE is the standard error of the mean paired difference over the held-out items.
type TaskResult struct {
	Task        string  `json:"task"`
	Calibration int     `json:"calibration"` // calibration items (β selection uses Select of them)
	HeldOut     int     `json:"held_out"`    // held-out items (other documents)
	Chance      float64 `json:"chance"`      // mean 1/options over the held-out items
	// Beta is the chosen L1 weight; BetaAccuracy the β-selection accuracy of each of Settings.Betas.
	Beta         float64   `json:"beta"`
	BetaAccuracy []float64 `json:"beta_accuracy"`
	CalibBefore  float64   `json:"calib_before"` // calibration accuracy of the frozen model (γ = 0)
	CalibAfter   float64   `json:"calib_after"`  // calibration accuracy with the controller
	Before       float64   `json:"before"`       // held-out accuracy of the frozen model
	After        float64   `json:"after"`        // held-out accuracy with the controller
	BeforeSE     float64   `json:"before_se"`
	AfterSE      float64   `json:"after_se"`
	GainSE       float64   `json:"gain_se"`
	// Support is the number of prototypes active at the calibration items' option positions: the gains that can
	// be non-zero. ActiveWeights is the number that are.
	Support       int                `json:"support"`
	ActiveWeights int                `json:"active_weights"`
	Weights       []ControllerWeight `json:"weights"` // the non-zero gains, by decreasing |γ|
}

// Result is the controller study on one PRISM model.
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	Run        string          `json:"run"` // the model's name (lm.Config.Name)
	Config     Settings        `json:"config"`
	Tasks      []TaskResult    `json:"tasks"`
	MeanBefore float64         `json:"mean_before"` // held-out accuracy averaged over tasks
	MeanAfter  float64         `json:"mean_after"`
	Seconds    float64         `json:"seconds"`
}

// String is the study's report: one line per task and the mean.
func (r *Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "steering %s: held-out accuracy (frozen → with controller)\n", r.Run)
	for _, t := range r.Tasks {
		fmt.Fprintf(&b, "%-8s %.3f ± %.3f → %.3f ± %.3f (gain s.e. %.3f; chance %.3f), β %g, %d/%d non-zero gains, "+
			"%d calibration / %d held-out items\n", t.Task, t.Before, t.BeforeSE, t.After, t.AfterSE, t.GainSE,
			t.Chance, t.Beta, t.ActiveWeights, t.Support, t.Calibration, t.HeldOut)
	}
	fmt.Fprintf(&b, "%-8s %.3f → %.3f", "mean", r.MeanBefore, r.MeanAfter)
	return b.String()
}

// LoadOrRun returns the result stored for cfg under run.Out, or runs the study: it trains (or loads, from
// run.Out/models) the PRISM model of cfg and runs Steer with cfg.Steering on it.
func LoadOrRun(cfg Config, opts ...run.Option) (*Result, error) {
	return run.LoadOrRun(Study, cfg, opts, compute)
}

// Run runs the study even when a result is stored (the model itself is loaded when trained before).
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	return run.Recompute(Study, cfg, opts, compute)
}

func compute(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seed
	m, err := lm.LoadOrTrain(cfg.Config, run.With(o))
	if err != nil {
		return nil, err
	}
	res, err := Steer(m, cfg.Steering, run.With(o))
	if err != nil {
		return nil, err
	}
	res.Provenance = prov
	return res, nil
}

// Steer builds the multiple-choice tasks from fresh synthetic documents, splits each by document into calibration
// and held-out parts, fits one sparse linear prototype controller per task on the calibration part (β chosen on a
// Select fraction of it) and reports held-out accuracy before and after. The model stays frozen. The result's
// Provenance is nil (LoadOrRun sets it).
func Steer(m *lm.Model, s Settings, opts ...run.Option) (*Result, error) {
	if err := s.Validate(); err != nil {
		return nil, errors.WithMessage(err, "steering")
	}
	o := run.NewOptions(opts...)
	start := time.Now()
	corpus, err := m.FreshCorpus(s.Docs, s.DocSeed)
	if err != nil {
		return nil, err
	}
	tasks, err := BuildTasks(corpus, s.Tasks, s.ItemsPerTask, s.Options, s.Seed)
	if err != nil {
		return nil, err
	}
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	res := &Result{Config: s, Run: m.Config.Name()}
	for _, task := range tasks {
		if err := o.Err(); err != nil {
			return nil, err
		}
		ctxTokens := s.ContextTokens
		if ctxTokens == 0 {
			longest := 0
			for _, it := range task.Items {
				for _, opt := range it.Options {
					longest = max(longest, len(d.Tokenizer.Encode(opt)))
				}
			}
			ctxTokens = max(1, m.Config.Data.SeqLen-longest)
		}
		p, err := ctrlProblemOf(m, task, ctxTokens, s.BatchSize)
		if err != nil {
			return nil, err
		}
		ts, err := steerTask(p, task, s)
		if err != nil {
			return nil, err
		}
		res.Tasks = append(res.Tasks, ts)
		res.MeanBefore += ts.Before / float64(len(tasks))
		res.MeanAfter += ts.After / float64(len(tasks))
	}
	res.Seconds = time.Since(start).Seconds()
	o.Logf(Study, "%s: held-out accuracy %.3f → %.3f (mean of %d tasks)", res.Run, res.MeanBefore, res.MeanAfter,
		len(res.Tasks))
	return res, nil
}

// steerTask splits the task's items by document, selects β, fits the controller and measures it.
func steerTask(p *ctrlProblem, task MCTask, s Settings) (TaskResult, error) {
	var calib, held []int
	for i, it := range task.Items {
		if heldOutDoc(it.Doc, s.Seed, s.HeldOut) {
			held = append(held, i)
		} else {
			calib = append(calib, i)
		}
	}
	if len(calib) < 2 || len(held) < 1 {
		return TaskResult{}, errors.Errorf("steering: task %q splits into %d calibration and %d held-out items; "+
			"raise steering.docs or steering.items_per_task", task.Name, len(calib), len(held))
	}
	f := ctrlFit{steps: s.Steps, lr: s.LR, maxActive: s.MaxActive}
	best, betaAcc := p.selectBeta(calib, s.Betas, s.Select, s.Seed, f)
	f.beta = s.Betas[best]
	gamma := p.fit(calib, f)
	zero := make([]float64, len(p.sig))
	ts := TaskResult{Task: task.Name, Calibration: len(calib), HeldOut: len(held), Beta: f.beta,
		BetaAccuracy: betaAcc, Support: len(p.sig)}
	ts.CalibBefore, _ = p.accuracy(zero, calib)
	ts.CalibAfter, _ = p.accuracy(gamma, calib)
	var hb, ha []bool
	ts.Before, hb = p.accuracy(zero, held)
	ts.After, ha = p.accuracy(gamma, held)
	n := float64(len(held))
	ts.BeforeSE = math.Sqrt(ts.Before * (1 - ts.Before) / n)
	ts.AfterSE = math.Sqrt(ts.After * (1 - ts.After) / n)
	ts.GainSE = pairedSE(hb, ha)
	for _, i := range held {
		ts.Chance += 1 / float64(len(task.Items[i].Options)) / n
	}
	for c, g := range gamma {
		if g != 0 {
			ts.Weights = append(ts.Weights, ControllerWeight{Prototype: p.bankID[c], Gain: g})
		}
	}
	slices.SortStableFunc(ts.Weights, func(a, b ControllerWeight) int {
		switch {
		case math.Abs(a.Gain) > math.Abs(b.Gain):
			return -1
		case math.Abs(a.Gain) < math.Abs(b.Gain):
			return 1
		}
		return a.Prototype - b.Prototype
	})
	ts.ActiveWeights = len(ts.Weights)
	return ts, nil
}

// heldOutDoc reports whether document doc belongs to the held-out part: a seeded hash of doc below fraction.
func heldOutDoc(doc int, seed uint64, fraction float64) bool {
	x := seed ^ (uint64(doc)+1)*0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11)/(1<<53) < fraction
}

// pairedSE is the standard error of the mean of after[i] − before[i] (as 0/1), stats.MeanSE; 0 for fewer than 2
// items.
func pairedSE(before, after []bool) float64 {
	if len(before) < 2 {
		return 0
	}
	b2i := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	d := make([]float64, len(before))
	for i := range before {
		d[i] = b2i(after[i]) - b2i(before[i])
	}
	_, se := stats.MeanSE(d)
	return se
}
