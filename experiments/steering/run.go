package steering

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "steering"

// ControllerWeight is one non-zero gain γ_u of a fitted controller: unit u's slice is scaled by 1 + γ_u (u a
// prototype's bank index or an SAE feature), or token u's logit is raised by γ_u (the bias-only controller).
type ControllerWeight struct {
	Unit int     `json:"unit"`
	Gain float64 `json:"gain"`
}

// TaskResult is one controller's result on one task. Accuracies are fractions of items; SEs are binomial
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
	// Support is the number of units active at the calibration and held-out items' option positions (V for the
	// bias-only controller): the gains that can be non-zero. ActiveWeights is the number that are.
	Support       int                `json:"support"`
	ActiveWeights int                `json:"active_weights"`
	Weights       []ControllerWeight `json:"weights"` // the non-zero gains, by decreasing |γ|
	// FVU is the SAE's fraction of variance unexplained on the task's rows (SAE controllers; 0 otherwise).
	FVU float64 `json:"fvu,omitempty"`
}

// ControllerRun is one controller on every task of one split.
type ControllerRun struct {
	Controller string       `json:"controller"`
	Model      string       `json:"model"` // the steered model (lm.Config.Name): the PRISM model or its dense baseline
	Tasks      []TaskResult `json:"tasks"`
	MeanBefore float64      `json:"mean_before"` // held-out accuracy averaged over tasks
	MeanAfter  float64      `json:"mean_after"`
}

// SplitRun is every controller on one split seed.
type SplitRun struct {
	Seed        uint64          `json:"seed"`
	Controllers []ControllerRun `json:"controllers"` // Settings.Controllers order
}

// SAEStats describes one SAE of an SAE controller on its training rows.
type SAEStats struct {
	Controller string `json:"controller"`
	Rows       int    `json:"rows"` // training hidden states
	dictionary.Stats
	Seconds float64 `json:"seconds"`
}

// ModelRun is the study on one training seed: its PRISM model (and dense baseline), SAEs and splits.
type ModelRun struct {
	Seed    uint64     `json:"seed"`
	Run     string     `json:"run"`   // the PRISM model (lm.Config.Name)
	Dense   string     `json:"dense"` // its dense baseline ("" without the "sae" controller)
	SAE     []SAEStats `json:"sae"`
	Splits  []SplitRun `json:"splits"`
	Seconds float64    `json:"seconds"`
}

// Controller returns the named controller's run on split i, or nil.
func (r *ModelRun) Controller(split int, name string) *ControllerRun {
	for j := range r.Splits[split].Controllers {
		if c := &r.Splits[split].Controllers[j]; c.Controller == name {
			return c
		}
	}
	return nil
}

// Result is the controller study: one ModelRun per training seed and, per controller, the average over tasks and
// splits of each model, summarised over models (Summary).
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	// Config is the steering settings as run (with the held-back seeds when HeldBack is set).
	Config    Settings   `json:"config"`
	HeldBack  bool       `json:"held_back"` // the evaluation is the held-back one
	Models    []ModelRun `json:"models"`
	Summaries []Summary  `json:"summaries"` // Settings.Controllers order
	Seconds   float64    `json:"seconds"`
}

// Summary returns the named controller's summary, or nil.
func (r *Result) Summary(controller string) *Summary {
	for i := range r.Summaries {
		if r.Summaries[i].Controller == controller {
			return &r.Summaries[i]
		}
	}
	return nil
}

// String is the study's report: per controller the held-out accuracy before and after and the gain with its
// interval over training seeds, then the gain per task.
func (r *Result) String() string {
	var b strings.Builder
	ev := "protocol evaluation"
	if r.HeldBack {
		ev = "held-back evaluation"
	}
	fmt.Fprintf(&b, "steering (%s; %d models × %d splits; held-out accuracy averaged over tasks, gains in points "+
		"with 95%% t-intervals over training seeds)\n", ev, len(r.Models), len(r.Config.Splits))
	for _, s := range r.Summaries {
		fmt.Fprintf(&b, "%-10s %.3f → %.3f  gain %+.2f [%+.2f, %+.2f]", s.Controller, s.Before.Mean, s.After.Mean,
			100*s.Gain.Mean, 100*s.Gain.Lo, 100*s.Gain.Hi)
		if s.Controller != ControllerPrototype {
			fmt.Fprintf(&b, "  prototype − this %+.2f [%+.2f, %+.2f]", 100*s.VsPrototype.Mean, 100*s.VsPrototype.Lo,
				100*s.VsPrototype.Hi)
		}
		fmt.Fprintf(&b, "  (%.1f non-zero gains per fit)\n", s.ActiveWeights)
		for _, t := range s.Tasks {
			fmt.Fprintf(&b, "    %-8s %.3f → %.3f  gain %+.2f ± %.2f (chance %.3f)\n", t.Task, t.Before.Mean,
				t.After.Mean, 100*t.Gain.Mean, 100*t.Gain.SE, t.Chance)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// LoadOrRun returns the result stored for cfg under run.Out, or runs the study: it trains (or loads, from
// run.Out/models) the PRISM model of every seed (and its dense baseline for the "sae" controller) and runs Steer on
// each.
func LoadOrRun(cfg Config, opts ...run.Option) (*Result, error) {
	return run.LoadOrRun(Study, cfg, opts, runStudy)
}

// Run runs the study even when a result is stored (the models themselves are loaded when trained before).
func Run(cfg Config, opts ...run.Option) (*Result, error) {
	return run.Recompute(Study, cfg, opts, runStudy)
}

// Notebook returns what notebook 20 and `make run` show: at the Small preset (run.PresetName) the stored protocol
// result when `protolab run steering --preset small` made one, else Quick's result (loaded or computed); at other
// presets LoadOrRun of that preset.
func Notebook(opts ...run.Option) (*Result, error) {
	return run.Notebook(Study, Preset, Small, Quick, opts, runStudy)
}

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
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	for _, seed := range s.Splits {
		tasks, err := BuildTasks(corpus, s.Tasks, s.ItemsPerTask, s.Options, seed)
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
				longest := 0
				for _, it := range task.Items {
					for _, opt := range it.Options {
						longest = max(longest, len(d.Tokenizer.Encode(opt)))
					}
				}
				ctxTokens = max(1, m.Config.Data.SeqLen-longest)
			}
			rows, err := collectRows(m, task, ctxTokens, s.BatchSize)
			if err != nil {
				return nil, err
			}
			var denseRows *ctrlData
			if dense != nil && slices.Contains(s.Controllers, ControllerSAE) {
				if denseRows, err = collectRows(dense, task, ctxTokens, s.BatchSize); err != nil {
					return nil, err
				}
			}
			for ci, c := range s.Controllers {
				var p *ctrlProblem
				var fvu float64
				switch c {
				case ControllerPrototype:
					p, err = rows.prototypeProblem(m)
				case ControllerBias:
					p = rows.biasProblem(V)
				case ControllerSAE, ControllerSAEPrism:
					src := rows
					if c == ControllerSAE {
						src = denseRows
					}
					var st dictionary.Stats
					p, st, err = src.featureProblem(saes[c].dict, saes[c].w, V)
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

// trainSAE trains the dictionary of an SAE controller on the final hidden states of model's first batches training
// batches (never the items), with F = K and k active features unless sae sets them, seeded by the model's seed.
func trainSAE(model *lm.Model, s SAESettings, K, k int) (*dictionary.Dictionary, SAEStats, error) {
	start := time.Now()
	D := model.Config.Model.Width
	cfg, err := s.resolved(K, k, D)
	if err != nil {
		return nil, SAEStats{}, err
	}
	batches, err := model.TrainTensors(s.Batches)
	if err != nil {
		return nil, SAEStats{}, err
	}
	hs, err := model.HeadStats(batches)
	if err != nil {
		return nil, SAEStats{}, err
	}
	dict, err := dictionary.Train(model.Backend, hs.Z, hs.N, D, cfg, model.Config.Seed, "steering/sae")
	if err != nil {
		return nil, SAEStats{}, err
	}
	_, st, err := dict.Encode(hs.Z, hs.N)
	if err != nil {
		return nil, SAEStats{}, err
	}
	return dict, SAEStats{Rows: hs.N, Stats: st, Seconds: time.Since(start).Seconds()}, nil
}

// steerTask splits the task's items by document (split seed), selects β, fits the controller and measures it.
func steerTask(p *ctrlProblem, task MCTask, s Settings, seed uint64) (TaskResult, error) {
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
	f := ctrlFit{steps: s.Steps, lr: s.LR, maxActive: s.MaxActive}
	best, betaAcc := p.selectBeta(calib, s.Betas, s.Select, seed, f)
	f.beta = s.Betas[best]
	gamma := p.fit(calib, f)
	zero := make([]float64, p.units())
	ts := TaskResult{Task: task.Name, Calibration: len(calib), HeldOut: len(held), Beta: f.beta,
		BetaAccuracy: betaAcc, Support: p.units()}
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
		if g == 0 {
			continue
		}
		u := c // the bias-only controller's gains are indexed by token
		if !p.bias {
			u = p.bankID[c]
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
