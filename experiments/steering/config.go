package steering

import (
	"math"
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/sae"
	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/steer"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the study. Start from a preset (Small, Quick, Tiny, Paper); change fields or apply run.Override.
type Config struct {
	// Config is the recipe of the frozen PRISM model the controllers steer (seed, data, model, head "prism", prism,
	// train, eval_batches; JSON keys at the top level); the "sae" controller steers its dense baseline (the same
	// recipe with the dense head, lm.Config.Dense). Its corpus must be the synthetic concept corpus.
	lm.Config
	// Seeds are the training seeds: one PRISM model (and one dense baseline) per seed, each the recipe with seed
	// replaced (weights, data split, tokenizer, batch order and bank seeding all follow it); empty means [seed].
	// A claim needs at least 3.
	Seeds []uint64 `json:"seeds"`
	// Steering configures the tasks and the controllers.
	Steering Settings `json:"steering"`
	// HeldBack is a second evaluation (documents and split seeds) that no preset runs: it stays untouched until the
	// settings are final, then confirms the protocol's figures once. UseHeldBack evaluates on it instead of
	// steering.doc_seed and steering.splits.
	HeldBack    Eval `json:"held_back"`
	UseHeldBack bool `json:"use_held_back"`
}

// Eval names the seeds of one evaluation.
type Eval struct {
	DocSeed uint64   `json:"doc_seed"` // the fresh documents the items come from
	Splits  []uint64 `json:"splits"`   // the split seeds
}

// Controllers of Settings.Controllers (doc.go, "Controllers").
const (
	// ControllerPrototype is spec §9's sparse linear controller over the PRISM model's prototype slices (S1).
	ControllerPrototype = "prototype"
	// ControllerSAE is spec §9's SAE baseline: the same controller over the features of an SAE (F = K) trained on
	// the dense model's final hidden state, steering the dense model.
	ControllerSAE = "sae"
	// ControllerSAEPrism (our variant) is the same over an SAE trained on the PRISM model's own final hidden state
	// z_t, the state its prototypes reconstruct, steering the PRISM model: the basis differs, the model does not.
	ControllerSAEPrism = "sae_prism"
	// ControllerBias (our control) is a sparse bias over the vocabulary added to every position's logits (S6),
	// fitted the same way: what a controller gains without reading the context.
	ControllerBias = "bias"
)

// AllControllers lists the controllers, the prototype controller first.
var AllControllers = []string{ControllerPrototype, ControllerSAE, ControllerSAEPrism, ControllerBias}

// Settings configures the controller study (docs/spec/prism.md §9) on one frozen model.
type Settings struct {
	// Tasks lists the multiple-choice tasks (models/steer.AllTasks): "number", "gender", "topic", "country".
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
	// Splits are the split seeds: each draws the items, their option order, the calibration/held-out split and the
	// β-selection split, and every controller is fitted and scored on each; at least one.
	Splits []uint64 `json:"splits"`
	// BatchSize is the number of sequences per forward pass of the frozen model; > 0.
	BatchSize int `json:"batch_size"`
	// Controllers lists the controllers fitted (AllControllers); every one uses the fit above.
	Controllers []string `json:"controllers"`
	// SAE configures the dictionaries of the SAE controllers.
	SAE SAESettings `json:"sae"`
}

// SAESettings configures the SAEs of the "sae" and "sae_prism" controllers (models/dictionary).
type SAESettings struct {
	// Config is the SAE and its training: model.features 0 means K (prism.num_prototypes: spec §9 matches the
	// bank) and model.k 0 means prism.top_k (kind "topk": as many active features per token as prototypes).
	dictionary.Config
	// Batches is the number of training batches whose final hidden states train each SAE (never the items); > 0.
	Batches int `json:"batches"`
}

// Small is the study's protocol v2 (docs/PROTOCOL.md, "steering"; `protolab run steering --preset small`): the spec
// §9 recipe, frozen as Quick runs it, measured on evaluation data from seeds no choice used, on five models of the v2
// PRISM shape, for four controllers fitted alike:
//
//   - models: lm.PrismSmallV2 (D = 64 with 4 heads, L = 2, T = 64, B = 16, K = 512 = 8·D, k = 8, 500 updates of
//     which 100 are cross-entropy only, 10,000 synthetic documents), training seeds 1–5, and for the "sae" controller
//     the dense baseline of each (the same recipe with the dense head);
//   - items: the four tasks with up to 300 items each from 1,000 fresh documents (doc seed 3101), 4 options, the
//     context cut to data.seq_len minus the longest option; split seeds 31 and 32, each a 50/50 document split with
//     β ∈ {1e−4, 1e−3, 1e−2} chosen on 20% of the calibration part, then 200 Adam steps at lr 1e−2 (spec §9);
//   - controllers: prototype, sae (spec §9: SAE on the dense model's final hidden state), sae_prism (SAE on the
//     PRISM model's own hidden state) and bias; each SAE has F = K = 512 features, k = 8 active per token (the
//     prototypes' sparsity), trained 1,000 steps of 256 rows on the hidden states of 64 training batches;
//   - the held-back evaluation (doc seed 3102, split seeds 33 and 34) is not run.
//
// Protocol v1 (lm.PrismSmall's models: D = 32, T = 32, B = 8, K = 256, 400 updates) is Small at commit 8706f7f; v2
// changes only the models (and the SAEs' F = K that follows the bank), on the synthetic corpus alone: the tasks are
// its concept labels. Budget: per model, a PRISM model, its dense baseline and the SAEs train once, then each split
// runs the forward passes of both models and fits the four controllers on the four tasks; sized with protolab cost
// and a short timing run to docs/DESIGN.md's Small budget (about an hour per study on 2 cores). The models are
// stored under run.Out/models and shared with any study that trains the same recipe and seeds. `protolab cost`
// estimates its compute from the configuration; a stored run's provenance records the seconds each phase took.
func Small() Config {
	c := Quick()
	c.Config = lm.PrismSmallV2()
	c.Seeds = []uint64{1, 2, 3, 4, 5}
	s := &c.Steering
	s.DocSeed, s.Splits = 3101, []uint64{31, 32}
	s.Controllers = slices.Clone(AllControllers)
	return c
}

// Quick is what notebooks and `make run` show when no protocol result is stored: one model of lm.PrismSmall (seed 1;
// protocol v1's shape, on which the recipe was chosen), the development evaluation the settings were chosen on (doc seed 1001, split seed 7), the prototype and bias-only
// controllers (the bias fits add little to the forward passes); `protolab cost` estimates its compute.
func Quick() Config {
	m := lm.PrismSmall()
	return Config{Config: m, Seeds: []uint64{m.Seed}, Steering: Settings{Tasks: slices.Clone(steer.AllTasks),
		Docs: 1000, DocSeed: 1001, ItemsPerTask: 300, Options: 4, HeldOut: 0.5, Select: 0.2,
		Betas: []float64{1e-4, 1e-3, 1e-2}, Steps: 200, LR: 1e-2, Splits: []uint64{7}, BatchSize: 32,
		Controllers: []string{ControllerPrototype, ControllerBias}, SAE: defaultSAE()},
		HeldBack: Eval{DocSeed: 3102, Splits: []uint64{33, 34}}}
}

// defaultSAE is the Small SAE: a top-k SAE sized from the bank (F = K, k = prism.top_k), 1,000 steps of 256 rows
// from 64 training batches at lr 3e−3 without weight decay (layers/sae: decay only rescales directions).
func defaultSAE() SAESettings {
	m := sae.DefaultConfig()
	m.Kind, m.Features, m.K = sae.KindTopK, 0, 0
	t := fit.DefaultConfig()
	t.Steps, t.LR, t.WarmupSteps, t.WeightDecay, t.ClipNorm = 1000, 3e-3, 20, 0, 0
	t.EvalEvery, t.EvalBatches, t.CheckpointEvery = 0, 1, 0
	return SAESettings{Config: dictionary.Config{Model: m, Train: t, BatchSize: 256}, Batches: 64}
}

// Tiny is seconds on one CPU core (lm.PrismTiny): two models, two tasks of up to 24 items from 60 documents, 3
// options, 30 steps, every controller, SAEs of 100 steps on 8 batches.
func Tiny() Config {
	c := Small()
	c.Config = lm.PrismTiny()
	c.Seeds = []uint64{1, 2}
	s := &c.Steering
	s.Tasks = []string{steer.TaskNumber, steer.TaskTopic}
	s.Docs, s.ItemsPerTask, s.Options, s.Steps, s.BatchSize = 60, 24, 3, 30, 16
	s.SAE.Train.Steps, s.SAE.Batches, s.SAE.BatchSize = 100, 8, 64
	return c
}

// Paper is the Small protocol on spec §12's model (lm.PrismPaper). Meant for a GPU with XLA.
func Paper() Config {
	c := Small()
	c.Config = lm.PrismPaper()
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// Models returns the PRISM model configurations, one per training seed.
func (c Config) Models() []lm.Config {
	seeds := c.Seeds
	if len(seeds) == 0 {
		seeds = []uint64{c.Seed}
	}
	out := make([]lm.Config, len(seeds))
	for i, s := range seeds {
		out[i] = c.Config
		out[i].Seed = s
	}
	return out
}

// Settings returns the steering settings of the evaluation the Config runs: Steering, with the held-back seeds
// when UseHeldBack is set.
func (c Config) Settings() Settings {
	s := c.Steering
	if c.UseHeldBack {
		s.DocSeed, s.Splits = c.HeldBack.DocSeed, slices.Clone(c.HeldBack.Splits)
	}
	return s
}

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if c.Head != lm.HeadPrism {
		return errors.Errorf("head=%q, want %q (the controllers act on prototypes)", c.Head, lm.HeadPrism)
	}
	seen := map[uint64]bool{}
	for i, s := range c.Seeds {
		if seen[s] {
			return errors.Errorf("seeds[%d]=%d repeats a seed; each model needs its own", i, s)
		}
		seen[s] = true
	}
	h, s := c.HeldBack, c.Steering
	if h.DocSeed == 0 || len(h.Splits) == 0 {
		return errors.New("held_back.doc_seed and held_back.splits must be set (a second, untouched evaluation)")
	}
	if !c.UseHeldBack && h.DocSeed == s.DocSeed {
		return errors.Errorf("held_back.doc_seed=%d repeats steering.doc_seed: the held-back evaluation must stay "+
			"untouched", h.DocSeed)
	}
	st := c.Settings()
	if st.DocSeed == c.Data.Synthetic.Seed {
		return errors.Errorf("steering.doc_seed=%d equals data.synthetic.seed: the items must come from documents no "+
			"model trained on", st.DocSeed)
	}
	if err := st.Validate(); err != nil {
		return errors.WithMessage(err, "steering")
	}
	if st.needsSAE() {
		if _, err := st.SAE.resolved(c.Prism.NumPrototypes, c.Prism.TopK, c.Model.Width); err != nil {
			return errors.WithMessage(err, "steering.sae")
		}
	}
	return nil
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
	case len(s.Splits) == 0:
		return errors.New("splits is empty; want at least one split seed")
	case s.BatchSize <= 0:
		return errors.Errorf("batch_size=%d, want > 0", s.BatchSize)
	case len(s.Controllers) == 0:
		return errors.Errorf("controllers is empty; want some of %q", AllControllers)
	case s.needsSAE() && s.SAE.Batches <= 0:
		return errors.Errorf("sae.batches=%d, want > 0", s.SAE.Batches)
	}
	for i, b := range s.Betas {
		if !(b >= 0) || math.IsInf(b, 0) {
			return errors.Errorf("betas[%d]=%g, want a finite value ≥ 0", i, b)
		}
	}
	for i, t := range s.Tasks {
		if !slices.Contains(steer.AllTasks, t) {
			return errors.Errorf("tasks[%d]=%q, want one of %v", i, t, steer.AllTasks)
		}
	}
	for i, c := range s.Controllers {
		if !slices.Contains(AllControllers, c) || slices.Index(s.Controllers, c) != i {
			return errors.Errorf("controllers[%d]=%q, want one of %q, each once", i, c, AllControllers)
		}
	}
	for i, sp := range s.Splits {
		if slices.Index(s.Splits, sp) != i {
			return errors.Errorf("splits[%d]=%d repeats a split seed", i, sp)
		}
	}
	return nil
}

// needsSAE reports whether an SAE controller is fitted.
func (s Settings) needsSAE() bool {
	return slices.Contains(s.Controllers, ControllerSAE) || slices.Contains(s.Controllers, ControllerSAEPrism)
}

// resolved returns the dictionary configuration for a bank of K prototypes with k active and width D: features 0
// becomes K and k 0 becomes k.
func (s SAESettings) resolved(K, k, D int) (dictionary.Config, error) {
	c := s.Config
	if c.Model.Features == 0 {
		c.Model.Features = K
	}
	if c.Model.K == 0 {
		c.Model.K = k
	}
	return c, c.Validate(D)
}
