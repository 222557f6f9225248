package steering

import (
	"math"
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the study. Start from a preset (Tiny, Small, Paper); change fields or apply run.Override.
type Config struct {
	// Config is the frozen PRISM model the controllers steer (seed, data, model, head "prism", prism, train,
	// eval_batches; JSON keys at the top level). Its corpus must be the synthetic concept corpus.
	lm.Config
	// Steering configures the tasks and the controllers.
	Steering Settings `json:"steering"`
}

// Settings configures the controller study (docs/spec/prism.md §9) on the frozen PRISM model.
type Settings struct {
	// Tasks lists the multiple-choice tasks (AllTasks): "number", "gender", "topic", "country".
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
}

// Small is a few minutes on a 2-core CPU (lm.PrismSmall): the four tasks with up to 300 items each from 1,000 fresh
// documents, 4 options, a 50/50 document split, β ∈ {1e−4, 1e−3, 1e−2} chosen on 20% of the calibration part, 200
// Adam steps at lr 1e−2 (spec §9).
func Small() Config {
	return Config{Config: lm.PrismSmall(), Steering: Settings{Tasks: slices.Clone(AllTasks), Docs: 1000, DocSeed: 1001,
		ItemsPerTask: 300, Options: 4, HeldOut: 0.5, Select: 0.2, Betas: []float64{1e-4, 1e-3, 1e-2}, Steps: 200,
		LR: 1e-2, Seed: 7, BatchSize: 32}}
}

// Tiny is seconds on one CPU core (lm.PrismTiny): two tasks of up to 24 items from 60 documents, 3 options, 30 steps.
func Tiny() Config {
	c := Small()
	c.Config = lm.PrismTiny()
	s := &c.Steering
	s.Tasks = []string{TaskNumber, TaskTopic}
	s.Docs, s.ItemsPerTask, s.Options, s.Steps, s.BatchSize = 60, 24, 3, 30, 16
	return c
}

// Paper is the Small study on spec §12's model (lm.PrismPaper). Meant for a GPU with XLA.
func Paper() Config {
	c := Small()
	c.Config = lm.PrismPaper()
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// FromEnv returns the preset named by $PROTOLAB_PRESET (default "small"), as notebooks and `make run` select it.
func FromEnv() (Config, error) { return Preset(run.PresetName()) }

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if c.Head != lm.HeadPrism {
		return errors.Errorf("head=%q, want %q (the controllers act on prototypes)", c.Head, lm.HeadPrism)
	}
	return errors.WithMessage(c.Steering.Validate(), "steering")
}

// Validate reports the first problem of the settings, naming its key.
func (s Settings) Validate() error {
	switch {
	case len(s.Tasks) == 0:
		return errors.New("tasks is empty")
	case s.Docs <= 0:
		return errors.Errorf("docs=%d, want > 0", s.Docs)
	case s.ItemsPerTask < 4:
		return errors.Errorf("items_per_task=%d, want ≥ 4", s.ItemsPerTask)
	case s.Options < 2:
		return errors.Errorf("options=%d, want ≥ 2", s.Options)
	case s.ContextTokens < 0:
		return errors.Errorf("context_tokens=%d, want ≥ 0 (0: derived from data.seq_len)", s.ContextTokens)
	case !(s.HeldOut > 0 && s.HeldOut < 1):
		return errors.Errorf("held_out=%g, want in (0, 1)", s.HeldOut)
	case !(s.Select > 0 && s.Select < 1):
		return errors.Errorf("select=%g, want in (0, 1)", s.Select)
	case len(s.Betas) == 0:
		return errors.New("betas is empty")
	case s.Steps <= 0:
		return errors.Errorf("steps=%d, want > 0", s.Steps)
	case !(s.LR > 0) || math.IsInf(s.LR, 0):
		return errors.Errorf("lr=%g, want a finite value > 0", s.LR)
	case s.MaxActive < 0:
		return errors.Errorf("max_active=%d, want ≥ 0 (0: no cap)", s.MaxActive)
	case s.BatchSize <= 0:
		return errors.Errorf("batch_size=%d, want > 0", s.BatchSize)
	}
	for i, b := range s.Betas {
		if !(b >= 0) || math.IsInf(b, 0) {
			return errors.Errorf("betas[%d]=%g, want a finite value ≥ 0", i, b)
		}
	}
	for i, t := range s.Tasks {
		if !slices.Contains(AllTasks, t) {
			return errors.Errorf("tasks[%d]=%q, want one of %v", i, t, AllTasks)
		}
	}
	return nil
}
