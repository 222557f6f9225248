package steering

import (
	"math"
	"slices"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/steer"
	control "github.com/protolab/protolab/theory/steer"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Runs is the study's entry points (run.Entry): Runs.LoadOrRun(cfg) returns the result stored for cfg under
// run.Out or runs the study; Runs.Run(cfg) runs it even when a result is stored (the models it trains are loaded
// from run.Out/models when trained before); Runs.Notebook() and Runs.NotebookConfig() are what a notebook shows
// and starts its settings from at $PROTOLAB_PRESET.
var Runs = run.Entry[Config, *Result]{Study: Study, Preset: Preset, Small: Small, Quick: Quick, Compute: runStudy}

// runStudy trains (or loads, from run.Out/models) the PRISM model of every seed (and its dense baseline for the
// "sae" controller) and runs Steer on each.
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	start := time.Now()
	s := cfg.Settings()
	models := cfg.Models()
	prov.Seed = models[0].Seed
	res := &Result{Provenance: prov, Config: s, HeldBack: cfg.UseHeldBack}
	for _, mc := range models {
		m, err := lm.LoadOrTrain(mc, run.With(o))
		if err != nil {
			return nil, err
		}
		var dense *lm.Model
		if slices.Contains(s.Controllers, ControllerSAE) {
			if dense, err = lm.LoadOrTrain(mc.Dense(), run.With(o)); err != nil {
				return nil, err
			}
		}
		mr, err := Steer(m, dense, s, run.With(o))
		if err != nil {
			return nil, err
		}
		res.Models = append(res.Models, *mr)
	}
	res.Summaries = summarise(res.Models, s.Controllers)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// Steer builds the multiple-choice tasks from fresh synthetic documents and, for every split seed, splits each by
// document into calibration and held-out parts, fits every controller of s on the calibration part (β chosen on a
// Select fraction of it) and reports held-out accuracy before and after. The prototype, "sae_prism" and bias
// controllers steer m; the "sae" controller steers dense (m's dense baseline, needed only for it). The SAEs are
// trained on the final hidden states of the first sae.batches training batches of the model they belong to. The
// models stay frozen.
func Steer(m, dense *lm.Model, s Settings, opts ...run.Option) (*ModelRun, error) {
	if err := s.Validate(); err != nil {
		return nil, errors.WithMessage(err, "steering")
	}
	if m.Dense() {
		return nil, errors.New("steering: the dense model has no prototype head to steer")
	}
	if slices.Contains(s.Controllers, ControllerSAE) && (dense == nil || !dense.Dense()) {
		return nil, errors.New("steering: the \"sae\" controller needs the dense baseline of the PRISM model")
	}
	o := run.NewOptions(opts...)
	start := time.Now()
	mr := &ModelRun{Seed: m.Config.Seed, Run: m.Config.Name()}
	V := m.Config.Model.VocabSize
	type saeOf struct {
		dict *dictionary.Dictionary
		w    []float64 // the steered model's head W [V, D]
	}
	saes := map[string]saeOf{}
	for _, c := range s.Controllers {
		model := m
		switch c {
		case ControllerSAE:
			model = dense
			mr.Dense = dense.Config.Name()
		case ControllerSAEPrism:
		default:
			continue
		}
		dict, st, err := trainSAE(model, s.SAE, m.Config.Prism.NumPrototypes, m.Config.Prism.TopK)
		if err != nil {
			return nil, errors.WithMessagef(err, "steering: the SAE of controller %q", c)
		}
		st.Controller = c
		mr.SAE = append(mr.SAE, st)
		w, err := model.Unembed()
		if err != nil {
			return nil, err
		}
		saes[c] = saeOf{dict, w}
	}
	corpus, err := m.FreshCorpus(s.Docs, s.DocSeed)
	if err != nil {
		return nil, err
	}
	for _, seed := range s.Splits {
		tasks, err := steer.BuildTasks(corpus, s.Tasks, s.ItemsPerTask, s.Options, seed)
		if err != nil {
			return nil, err
		}
		sr := SplitRun{Seed: seed}
		for _, c := range s.Controllers {
			name := mr.Run
			if c == ControllerSAE {
				name = mr.Dense
			}
			sr.Controllers = append(sr.Controllers, ControllerRun{Controller: c, Model: name})
		}
		for _, task := range tasks {
			if err := o.Err(); err != nil {
				return nil, err
			}
			ctxTokens := s.ContextTokens
			if ctxTokens == 0 {
				if ctxTokens, err = steer.ContextTokens(m, task); err != nil {
					return nil, err
				}
			}
			rows, err := steer.Collect(m, task, ctxTokens, s.BatchSize)
			if err != nil {
				return nil, err
			}
			var denseRows *steer.Rows
			if dense != nil && slices.Contains(s.Controllers, ControllerSAE) {
				if denseRows, err = steer.Collect(dense, task, ctxTokens, s.BatchSize); err != nil {
					return nil, err
				}
			}
			for ci, c := range s.Controllers {
				var p *control.Problem
				var fvu float64
				switch c {
				case ControllerPrototype:
					p, err = rows.PrototypeProblem(m)
				case ControllerBias:
					p = rows.BiasProblem(V)
				case ControllerSAE, ControllerSAEPrism:
					src := rows
					if c == ControllerSAE {
						src = denseRows
					}
					var st dictionary.Stats
					p, st, err = src.FeatureProblem(saes[c].dict, saes[c].w, V)
					fvu = st.FVU
				}
				if err != nil {
					return nil, errors.WithMessagef(err, "steering: controller %q, task %q", c, task.Name)
				}
				ts, err := steerTask(p, task, s, seed)
				if err != nil {
					return nil, err
				}
				ts.FVU = fvu
				cr := &sr.Controllers[ci]
				cr.Tasks = append(cr.Tasks, ts)
				cr.MeanBefore += ts.Before / float64(len(tasks))
				cr.MeanAfter += ts.After / float64(len(tasks))
			}
		}
		for _, cr := range sr.Controllers {
			o.Logf(Study, "%s, split %d, %s: held-out accuracy %.3f → %.3f (mean of %d tasks)", cr.Model, seed,
				cr.Controller, cr.MeanBefore, cr.MeanAfter, len(cr.Tasks))
		}
		mr.Splits = append(mr.Splits, sr)
	}
	mr.Seconds = time.Since(start).Seconds()
	return mr, nil
}

// trainSAE trains the dictionary of an SAE controller on the final hidden states of model's first sae.batches
// training batches (steer.TrainDictionary, never the items), with F = K and k active features unless sae sets them.
func trainSAE(model *lm.Model, s SAESettings, K, k int) (*dictionary.Dictionary, SAEStats, error) {
	start := time.Now()
	cfg, err := s.resolved(K, k, model.Config.Model.Width)
	if err != nil {
		return nil, SAEStats{}, err
	}
	dict, st, rows, err := steer.TrainDictionary(model, cfg, s.Batches, "steering/sae")
	if err != nil {
		return nil, SAEStats{}, err
	}
	return dict, SAEStats{Rows: rows, Stats: st, Seconds: time.Since(start).Seconds()}, nil
}

// steerTask splits the task's items by document (split seed), selects β, fits the controller and measures it.
func steerTask(p *control.Problem, task steer.Task, s Settings, seed uint64) (TaskResult, error) {
	var calib, held []int
	for i, it := range task.Items {
		if heldOutDoc(it.Doc, seed, s.HeldOut) {
			held = append(held, i)
		} else {
			calib = append(calib, i)
		}
	}
	if len(calib) < 2 || len(held) < 1 {
		return TaskResult{}, errors.Errorf("steering: task %q splits into %d calibration and %d held-out items; "+
			"raise steering.docs or steering.items_per_task", task.Name, len(calib), len(held))
	}
	f := control.FitConfig{Steps: s.Steps, LR: s.LR, MaxActive: s.MaxActive}
	best, betaAcc := p.SelectBeta(calib, s.Betas, s.Select, seed, f)
	f.Beta = s.Betas[best]
	gamma := p.Fit(calib, f)
	zero := make([]float64, p.Units())
	ts := TaskResult{Task: task.Name, Calibration: len(calib), HeldOut: len(held), Beta: f.Beta,
		BetaAccuracy: betaAcc, Support: p.Units()}
	ts.CalibBefore, _ = p.Accuracy(zero, calib)
	ts.CalibAfter, _ = p.Accuracy(gamma, calib)
	var hb, ha []bool
	ts.Before, hb = p.Accuracy(zero, held)
	ts.After, ha = p.Accuracy(gamma, held)
	n := float64(len(held))
	ts.BeforeSE = math.Sqrt(ts.Before * (1 - ts.Before) / n)
	ts.AfterSE = math.Sqrt(ts.After * (1 - ts.After) / n)
	ts.GainSE = pairedSE(hb, ha)
	for _, i := range held {
		ts.Chance += 1 / float64(len(task.Items[i].Options)) / n
	}
	for c, g := range gamma {
		if g == 0 {
			continue
		}
		u := c // the bias-only controller's gains are indexed by token
		if !p.Bias {
			u = p.IDs[c]
		}
		ts.Weights = append(ts.Weights, ControllerWeight{Unit: u, Gain: g})
	}
	slices.SortStableFunc(ts.Weights, func(a, b ControllerWeight) int {
		switch {
		case math.Abs(a.Gain) > math.Abs(b.Gain):
			return -1
		case math.Abs(a.Gain) < math.Abs(b.Gain):
			return 1
		}
		return a.Unit - b.Unit
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
