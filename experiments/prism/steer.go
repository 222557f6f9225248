package prism

import (
	"math"
	"slices"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/store"
)

// SteeringConfig configures the controller study (spec §9) and, in Suppress, the suppression study (spec §10),
// both run on the frozen PRISM model of the study's Config. Start from DefaultSteering.
type SteeringConfig struct {
	// Tasks lists the multiple-choice tasks (SteeringTasks): "number", "gender", "topic", "country".
	Tasks []string `json:"tasks"`
	// Docs is the number of documents of the fresh synthetic corpus the items are drawn from (the data section's
	// synthetic settings with seed DocSeed); > 0.
	Docs int `json:"docs"`
	// DocSeed seeds that corpus; it must differ from data.synthetic.seed so that its documents are new.
	DocSeed uint64 `json:"doc_seed"`
	// ItemsPerTask caps the items of each task; ≥ 4.
	ItemsPerTask int `json:"items_per_task"`
	// Options is the number of options of the topic and country tasks (number and gender have 2); ≥ 2.
	Options int `json:"options"`
	// ContextTokens is the number of tokens kept of each item's context (cut on the left); 0 means data.seq_len
	// minus the task's longest option, so that every sequence fits the trained length.
	ContextTokens int `json:"context_tokens"`
	// HeldOut is the fraction of documents whose items are held out (spec §9: 0.5); in (0, 1).
	HeldOut float64 `json:"held_out"`
	// Select is the fraction of the calibration items set aside to choose β (spec §9: 0.2); in (0, 1).
	Select float64 `json:"select"`
	// Betas are the L1 weights β tried (spec §9: 1e−4, 1e−3, 1e−2); each ≥ 0.
	Betas []float64 `json:"betas"`
	// Steps is the number of full-batch Adam steps of each fit (spec §9: 200); > 0.
	Steps int `json:"steps"`
	// LR is Adam's learning rate (spec §9: 1e−2); > 0.
	LR float64 `json:"lr"`
	// MaxActive caps the non-zero gains (top-k sparsity on top of the L1 penalty); 0 means no cap.
	MaxActive int `json:"max_active"`
	// Seed seeds the item draws, option order, calibration/held-out split and β selection split.
	Seed uint64 `json:"seed"`
	// BatchSize is the number of sequences per forward pass of the frozen model; > 0.
	BatchSize int `json:"batch_size"`
	// Suppress configures concept suppression (suppress.go).
	Suppress SuppressConfig `json:"suppress"`
}

// DefaultSteering returns the Small preset's settings: the four tasks with up to 300 items each from 1,000 fresh
// documents, 4 options, a 50/50 document split, β ∈ {1e−4, 1e−3, 1e−2} chosen on 20% of the calibration part,
// 200 Adam steps at lr 1e−2 (spec §9), and DefaultSuppress.
func DefaultSteering() SteeringConfig {
	return SteeringConfig{
		Tasks:        slices.Clone(SteeringTasks),
		Docs:         1000,
		DocSeed:      1001,
		ItemsPerTask: 300,
		Options:      4,
		HeldOut:      0.5,
		Select:       0.2,
		Betas:        []float64{1e-4, 1e-3, 1e-2},
		Steps:        200,
		LR:           1e-2,
		Seed:         7,
		BatchSize:    32,
		Suppress:     DefaultSuppress(),
	}
}

// TinySteering returns DefaultSteering cut to seconds for the Tiny preset: two tasks of up to 24 items from 60
// documents, 30 steps, and TinySuppress.
func TinySteering() SteeringConfig {
	s := DefaultSteering()
	s.Tasks = []string{TaskNumber, TaskTopic}
	s.Docs = 60
	s.ItemsPerTask = 24
	s.Options = 3
	s.Steps = 30
	s.BatchSize = 16
	s.Suppress = TinySuppress()
	return s
}

// Validate reports the first problem of the steering settings (the suppression ones included), naming its key.
func (s SteeringConfig) Validate() error {
	switch {
	case len(s.Tasks) == 0:
		return errors.New("steering.tasks is empty")
	case s.Docs <= 0:
		return errors.Errorf("steering.docs=%d, want > 0", s.Docs)
	case s.ItemsPerTask < 4:
		return errors.Errorf("steering.items_per_task=%d, want ≥ 4", s.ItemsPerTask)
	case s.Options < 2:
		return errors.Errorf("steering.options=%d, want ≥ 2", s.Options)
	case s.ContextTokens < 0:
		return errors.Errorf("steering.context_tokens=%d, want ≥ 0 (0: derived from data.seq_len)", s.ContextTokens)
	case !(s.HeldOut > 0 && s.HeldOut < 1):
		return errors.Errorf("steering.held_out=%g, want in (0, 1)", s.HeldOut)
	case !(s.Select > 0 && s.Select < 1):
		return errors.Errorf("steering.select=%g, want in (0, 1)", s.Select)
	case len(s.Betas) == 0:
		return errors.New("steering.betas is empty")
	case s.Steps <= 0:
		return errors.Errorf("steering.steps=%d, want > 0", s.Steps)
	case !(s.LR > 0) || math.IsInf(s.LR, 0):
		return errors.Errorf("steering.lr=%g, want a finite value > 0", s.LR)
	case s.MaxActive < 0:
		return errors.Errorf("steering.max_active=%d, want ≥ 0 (0: no cap)", s.MaxActive)
	case s.BatchSize <= 0:
		return errors.Errorf("steering.batch_size=%d, want > 0", s.BatchSize)
	}
	for i, b := range s.Betas {
		if !(b >= 0) || math.IsInf(b, 0) {
			return errors.Errorf("steering.betas[%d]=%g, want a finite value ≥ 0", i, b)
		}
	}
	for i, t := range s.Tasks {
		if !slices.Contains(SteeringTasks, t) {
			return errors.Errorf("steering.tasks[%d]=%q, want one of %v", i, t, SteeringTasks)
		}
	}
	return errors.WithMessage(s.Suppress.Validate(), "steering.suppress")
}

// ControllerWeight is one non-zero gain γ_i of a fitted controller: prototype i's slice is scaled by 1 + γ_i.
type ControllerWeight struct {
	Prototype int     `json:"prototype"`
	Gain      float64 `json:"gain"`
}

// TaskSteering is the controller result of one task. Accuracies are fractions of items; SEs are binomial
// (√(p(1−p)/n)), and GainSE is the standard error of the mean paired difference over the held-out items.
type TaskSteering struct {
	Task        string  `json:"task"`
	Calibration int     `json:"calibration"` // calibration items (β selection uses Select of them)
	HeldOut     int     `json:"held_out"`    // held-out items (other documents)
	Chance      float64 `json:"chance"`      // mean 1/options over the held-out items
	// Beta is the chosen L1 weight; BetaAccuracy the β-selection accuracy of each of SteeringConfig.Betas.
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

// SteeringResult is the controller study on one PRISM model.
type SteeringResult struct {
	Run        string         `json:"run"` // the model's run folder name
	Config     SteeringConfig `json:"config"`
	Tasks      []TaskSteering `json:"tasks"`
	MeanBefore float64        `json:"mean_before"` // held-out accuracy averaged over tasks
	MeanAfter  float64        `json:"mean_after"`
	Seconds    float64        `json:"seconds"`
}

// RunSteering loads (or trains) the PRISM model of cfg and runs Steer with cfg.Steering. With cfg.Out set, the
// result is cached in the model's run folder as steering-<hash>.json.
func RunSteering(cfg Config, opts ...Option) (*SteeringResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := LoadOrTrain(cfg, false, opts...)
	if err != nil {
		return nil, err
	}
	return Steer(m, cfg.Steering, opts...)
}

// Steer builds the multiple-choice tasks from fresh synthetic documents, splits each by document into calibration
// and held-out parts, fits one sparse linear prototype controller per task on the calibration part (β chosen on a
// Select fraction of it) and reports held-out accuracy before and after. The model stays frozen. With m.Dir set
// the result is cached there.
func Steer(m *Model, sc SteeringConfig, opts ...Option) (*SteeringResult, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	o := newOptions(opts)
	key := struct {
		Run   any
		Steer SteeringConfig
	}{m.Run.Config, sc}
	key.Steer.Suppress = SuppressConfig{} // suppression settings do not change the controller
	res, cached, err := store.LoadOrCompute(m.Dir, "steering", key, func() (*SteeringResult, error) { return steer(m, sc) })
	if err == nil {
		if cached {
			o.logf("prism: loaded the steering results of %s", res.Run)
		} else {
			o.logf("prism: steering %s: held-out accuracy %.3f → %.3f (mean of %d tasks)", res.Run, res.MeanBefore,
				res.MeanAfter, len(res.Tasks))
		}
	}
	return res, err
}

// freshCorpus generates docs new documents with the model's synthetic settings and another seed.
func freshCorpus(m *Model, docs int, seed uint64) (*data.Corpus, error) {
	dc := m.Data.Config
	if dc.Source != lmdata.SourceSynthetic {
		return nil, errors.Errorf("prism: steering and suppression need the synthetic concept corpus, the model was "+
			"trained on %q", dc.Source)
	}
	if seed == dc.Synthetic.Seed {
		return nil, errors.Errorf("prism: doc_seed=%d equals data.synthetic.seed: the items would repeat training "+
			"documents", seed)
	}
	sc := dc.Synthetic
	sc.Seed, sc.NumDocs = seed, docs
	return data.Synthetic(sc)
}

func steer(m *Model, sc SteeringConfig) (*SteeringResult, error) {
	start := time.Now()
	corpus, err := freshCorpus(m, sc.Docs, sc.DocSeed)
	if err != nil {
		return nil, err
	}
	tasks, err := BuildTasks(corpus, sc.Tasks, sc.ItemsPerTask, sc.Options, sc.Seed)
	if err != nil {
		return nil, err
	}
	res := &SteeringResult{Config: sc, Run: m.Run.Config.Name()}
	for _, task := range tasks {
		ctxTokens := sc.ContextTokens
		if ctxTokens == 0 {
			longest := 0
			for _, it := range task.Items {
				for _, opt := range it.Options {
					longest = max(longest, len(m.Data.Tokenizer.Encode(opt)))
				}
			}
			ctxTokens = max(1, m.Data.Config.SeqLen-longest)
		}
		p, err := ctrlProblemOf(m, task, ctxTokens, sc.BatchSize)
		if err != nil {
			return nil, err
		}
		ts, err := steerTask(p, task, sc)
		if err != nil {
			return nil, err
		}
		res.Tasks = append(res.Tasks, ts)
		res.MeanBefore += ts.Before / float64(len(tasks))
		res.MeanAfter += ts.After / float64(len(tasks))
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// steerTask splits the task's items by document, selects β, fits the controller and measures it.
func steerTask(p *ctrlProblem, task MCTask, sc SteeringConfig) (TaskSteering, error) {
	var calib, held []int
	for i, it := range task.Items {
		if heldOutDoc(it.Doc, sc.Seed, sc.HeldOut) {
			held = append(held, i)
		} else {
			calib = append(calib, i)
		}
	}
	if len(calib) < 2 || len(held) < 1 {
		return TaskSteering{}, errors.Errorf("prism: task %q splits into %d calibration and %d held-out items; "+
			"raise steering.docs or steering.items_per_task", task.Name, len(calib), len(held))
	}
	f := ctrlFit{steps: sc.Steps, lr: sc.LR, maxActive: sc.MaxActive}
	best, betaAcc := p.selectBeta(calib, sc.Betas, sc.Select, sc.Seed, f)
	f.beta = sc.Betas[best]
	gamma := p.fit(calib, f)
	zero := make([]float64, len(p.sig))
	ts := TaskSteering{Task: task.Name, Calibration: len(calib), HeldOut: len(held), Beta: f.beta,
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

// pairedSE is the standard error of the mean of after[i] − before[i] (as 0/1); 0 for fewer than 2 items.
func pairedSE(before, after []bool) float64 {
	n := float64(len(before))
	if n < 2 {
		return 0
	}
	b2i := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	mean, sq := 0.0, 0.0
	for i := range before {
		d := b2i(after[i]) - b2i(before[i])
		mean += d
		sq += d * d
	}
	mean /= n
	variance := (sq - n*mean*mean) / (n - 1)
	return math.Sqrt(max(variance, 0) / n)
}
