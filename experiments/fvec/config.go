package fvec

import (
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the whole study. Start from a preset (Tiny, Small, Paper); change fields or apply run.Override.
type Config struct {
	// Seed seeds everything: model s of a sweep point uses weights and training stream Seed+s; the evaluation set,
	// the patching pairs and the theory Monte Carlo use streams of Seed.
	Seed  uint64         `json:"seed"`
	Data  DataConfig     `json:"data"`
	Model linattn.Config `json:"model"` // the template of every model; kind and measurements are set per sweep point
	Train fit.Config     `json:"train"` // optimizer and schedule of one model; train.steps is per model
	Sweep SweepConfig    `json:"sweep"`
}

// DataConfig configures the context generators of spec §2 and the sizes of every evaluation.
type DataConfig struct {
	// Tree is the tree prior (K, α). Spec §9: K = 8, α = 0.6 (K = 6 for fast runs); keep K ≥ L + 2.
	Tree prior.Tree `json:"tree"`
	// GaussianDim is D of the Gaussian prior θ ~ N(0, I_D). Spec §2.1: 8.
	GaussianDim int `json:"gaussian_dim"`
	// Tokens is N, the context length; it sets the measurement noise τ² ∝ 1/N. Spec: 128.
	Tokens int `json:"tokens"`
	// LabelNoise is s. Spec: 0.1.
	LabelNoise float64 `json:"label_noise"`
	// Batch is the number of fresh contexts per training step. Spec §5: 512.
	Batch int `json:"batch"`
	// SharedTokens draws one x_{1:N} per training step for all Batch contexts (θ and label noise stay independent
	// per context; GenerateShared): the key MLPs of A and B then cost O(N·D·H) per step instead of O(Batch·N·D·H),
	// so many more contexts fit the budget. Evaluation always uses independent tokens. Spec §2 (independent
	// tokens): false.
	SharedTokens bool `json:"shared_tokens"`
	// EvalContexts is the size of the fixed evaluation set (one per prior, shared by every model). Spec §5: 10,000.
	EvalContexts int `json:"eval_contexts"`
	// PatchPairs is the number of target–donor pairs per divergence level of the patching heatmap. Spec §7: ≥ 1000.
	PatchPairs int `json:"patch_pairs"`
	// TheoryContexts is the number of Monte Carlo contexts of every theory curve.
	TheoryContexts int `json:"theory_contexts"`
	// BoundContexts is the number of contexts of the unconstrained Bayes bound of §4.6 (the tree prior's floor);
	// 0 skips it.
	BoundContexts int `json:"bound_contexts"`
}

// SweepConfig says which models are trained on which prior.
type SweepConfig struct {
	// Seeds is the number of independently initialised and trained models per sweep point (≥ 1; spec §5: ≥ 3).
	Seeds int `json:"seeds"`
	// TreeM are the measurement budgets M on the tree prior: the depth L of A and A′, the channels of B and C.
	TreeM []int `json:"tree_m"`
	// TreeKinds are the models trained on the tree prior (linattn.KindA, KindB, KindC, KindAPrime).
	TreeKinds []string `json:"tree_kinds"`
	// GaussianM are the measurement budgets on the Gaussian prior.
	GaussianM []int `json:"gaussian_m"`
	// GaussianKinds are the models trained on the Gaussian prior; empty skips the Gaussian study.
	GaussianKinds []string `json:"gaussian_kinds"`
	// GaussianSteps is train.steps for the Gaussian study; 0 means train.steps.
	GaussianSteps int `json:"gaussian_steps"`
	// GaussianHidden is model.hidden for the Gaussian study (D is small there, so narrower MLPs suffice); 0 means
	// model.hidden.
	GaussianHidden int `json:"gaussian_hidden"`
	// GaussianKeyGain is model.key_gain for the Gaussian study; 0 means model.key_gain. Adaptivity cannot help on
	// the Gaussian prior, so its key MLPs have nothing to gate on, and the tree prior's key gain (set for its
	// statistics |φ_ℓ| ≈ α^{ℓ−1}) need not carry over.
	GaussianKeyGain float64 `json:"gaussian_key_gain"`
	// LinearSteps is train.steps for model C on either prior (cheap steps, but its linear readout converges to the
	// LMMSE optimum only slowly under batch noise); 0 means the prior's steps.
	LinearSteps int `json:"linear_steps"`
	// ASteps is train.steps for model A on the tree prior at the depths a_depth_steps leaves out, and ABatch
	// data.batch for model A on either prior; 0 means the prior's steps and data.batch. A's key MLPs read the
	// workspace, so they run once per context and token even with shared tokens: its steps cost several times those
	// of A′ and B, and a smaller batch with more steps uses the budget better.
	ASteps int `json:"a_steps"`
	ABatch int `json:"a_batch"`
	// ADepthSteps is train.steps for model A with M = 1, 2, … layers on the tree prior: entry M−1 for depth M (a
	// missing or 0 entry means a_steps), so it keeps its meaning when tree_m changes. With Grow the smaller depths
	// are a curriculum for the deepest model, which needs the most steps (its key MLPs gate on the most workspace
	// coordinates) and is the one the depth advantage is judged at.
	ADepthSteps []int `json:"a_depth_steps"`
	// Workers is the number of models trained at once (each seed's sweep over M is one sequential chain); 0 means
	// GOMAXPROCS. Results do not depend on it.
	Workers int `json:"workers"`
	// Grow starts each model from the trained model of the same kind and seed at the next smaller M of the sweep
	// (layers or heads it already has keep their weights; the new ones and the new readout rows start fresh), so a
	// depth sweep costs about one long run instead of one per depth. Model C always starts fresh.
	Grow bool `json:"grow"`
	// PatchKinds are the models whose keys are patched and whose function vectors are probed (KindA, KindAPrime;
	// each at the largest TreeM, the seed with the lowest evaluation MSE; trained on the tree prior even when not in
	// TreeKinds); empty skips patching and probing.
	PatchKinds []string `json:"patch_kinds"`
}

// Tiny is seconds on one CPU core, for the unit tests and the notebook's smoke run: K = 4 (D = 15), N = 32,
// M = 1…2, two seeds, 150 steps of 32 independent contexts per model (400 for model C).
func Tiny() Config {
	c := Small()
	c.Data.Tree = prior.Tree{Depth: 4, Alpha: 0.6}
	c.Data.GaussianDim = 4
	c.Data.Tokens = 32
	c.Data.Batch = 32
	c.Data.SharedTokens = false // at D = 15 independent contexts are cheap, and 150 steps need every one of them
	c.Data.EvalContexts = 1000
	c.Data.PatchPairs = 200
	c.Data.TheoryContexts = 1000
	c.Data.BoundContexts = 0
	c.Model.Hidden = 16
	c.Model.ReadoutHidden = 32
	c.Train.Steps = 150
	c.Train.WarmupSteps = 10
	c.Sweep.TreeM = []int{1, 2}
	c.Sweep.GaussianM = []int{2, 6} // D = 4: one point on each side of M = D
	c.Sweep.GaussianSteps = 0
	c.Sweep.LinearSteps = 400
	c.Sweep.ASteps = 0
	c.Sweep.ABatch = 0
	c.Sweep.ADepthSteps = nil
	c.Model.KeyGain = 0 // key_gain and a_depth_steps were chosen for Small's depth-4 tree; Tiny keeps the defaults
	c.Sweep.GaussianKeyGain = 0
	return c
}

// Small is the `make run` study, sized for a 10-minute notebook on 2 CPU cores with the pure-Go backend (its wall
// time is in Result.Provenance.Timings): K = 6 (D = 63), α = 0.6, N = 128 (spec), depths 1…4 of A and A′ against
// 1…4 channels of B and C on the tree prior; M ∈ {2, 4, 8, 12} at D = 8 on the Gaussian prior; two seeds, trained
// two at a time; grown sweeps. It departs from the spec's recipe (§5: batch 512 of independent contexts, 20,000
// steps, lr 1e-3, H = 128, GELU) to fit the budget:
//   - training batches share their tokens (data.shared_tokens; every context keeps its own θ and label noise), which
//     makes a step of B, A′ and C nearly independent of the batch size: 64 contexts per step, 3000 steps per point
//     (4000 for C, 1000 on the Gaussian prior);
//   - model A's key MLPs still run per context, so A trains on 16 contexts per step, for 3000, 3000 and 9000 steps
//     at depths 1…3 (a curriculum, with Grow) and 18,000 at depth 4, where the depth advantage is judged
//     (sweep.a_depth_steps);
//   - model A's key MLPs read the workspace with gain 16 (model.key_gain, eq. 8 of layers/linattn; 1 on the
//     Gaussian prior and for the readouts): gating a key on |φ_ℓ| ≈ α^{ℓ−1} needs workspace weights ≈ 10× the
//     x-weights, which Adam at lr 1e-2 does not reach in 3000 steps from N(0, 1/fan_in);
//   - narrow key MLPs (H = 32, 16 on the Gaussian prior), ReLU (faster to train than GELU here), lr 1e-2.
//
// At this budget neither deep model reaches the adaptive optimum at depth 4; measured with two seeds, B/A there is
// 2.03 ± 0.05 and B/A′ 1.83 ± 0.07, and the notebook takes 526 s wall, 998 CPU-s (package doc, "Findings"). See Paper for the
// spec's setting.
func Small() Config {
	m := linattn.DefaultConfig()
	m.Hidden = 32         // key MLPs of A and B and query MLPs of A′
	m.ReadoutHidden = 128 // the readouts run once per context, so the spec's width is cheap
	m.Activation = linattn.ReLU
	m.KeyGain = 16 // model A only; measured at depth 4 (one seed): MSE 0.0607 at gain 1, 0.0489 at 8, 0.0463 at 16
	t := fit.DefaultConfig()
	t.Steps = 3000
	t.LR = 1e-2
	t.MinLRFrac = 0.01
	t.WarmupSteps = 30
	t.WeightDecay = 0 // a regression with a known optimum (model C's LMMSE): no decay
	t.ClipNorm = 1    // spec §5
	t.EvalBatches = 1
	t.LogEvery = 50
	return Config{
		Seed: 1,
		Data: DataConfig{
			Tree:           prior.Tree{Depth: 6, Alpha: 0.6},
			GaussianDim:    8,
			Tokens:         128,
			LabelNoise:     0.1,
			Batch:          64,
			SharedTokens:   true,
			EvalContexts:   2000,
			PatchPairs:     500,
			TheoryContexts: 4000,
			BoundContexts:  2000,
		},
		Model: m,
		Train: t,
		Sweep: SweepConfig{
			Seeds:          2,
			TreeM:          []int{1, 2, 3, 4},
			TreeKinds:      []string{linattn.KindA, linattn.KindAPrime, linattn.KindB, linattn.KindC},
			GaussianM:      []int{2, 4, 8, 12},
			GaussianKinds:  []string{linattn.KindA, linattn.KindB, linattn.KindC},
			GaussianSteps:  1000,
			GaussianHidden: 16,
			LinearSteps:    4000,
			ASteps:         6000, // depths past a_depth_steps
			ABatch:         16,
			// Depths 1…4; the package doc ("Findings") gives the measured allocations. Two seeds at depth 4: MSE
			// 0.0359 with [6000, 6000, 6000, 12,000], 0.0348 with this list or with [3000, 3000, 6000, 20,000].
			ADepthSteps:     []int{3000, 3000, 9000, 18_000},
			GaussianKeyGain: 1,
			Grow:            true,
			PatchKinds:      []string{linattn.KindA, linattn.KindAPrime},
		},
	}
}

// Paper is the spec's setting (docs/spec/function_vectors.md §5 and §9): K = 8 (D = 255), α = 0.6, N = 128, s = 0.1,
// H = 128, GELU, batch 512, Adam at lr 1e-3 with 500 warm-up steps and cosine decay, clipping at 1.0, 20,000 steps
// (the spec asks 50,000 for L ≥ 6), three seeds, 10,000 evaluation contexts, depths 1…6, and M = 1…16 at D = 8.
// Meant for a GPU with XLA.
func Paper() Config {
	c := Small()
	c.Data.Tree = prior.Tree{Depth: 8, Alpha: 0.6}
	c.Data.Tokens = 128
	c.Data.Batch = 512
	c.Data.EvalContexts = 10_000
	c.Data.TheoryContexts = 10_000
	c.Data.BoundContexts = 50_000
	c.Model.Hidden = 128
	c.Model.ReadoutHidden = 128
	c.Model.Activation = linattn.GELU
	c.Train.Steps = 20_000
	c.Train.LR = 1e-3
	c.Train.WarmupSteps = 500
	c.Train.MinLRFrac = 0
	c.Sweep.Seeds = 3
	c.Sweep.TreeM = []int{1, 2, 3, 4, 5, 6}
	c.Sweep.GaussianM = []int{1, 2, 4, 6, 8, 10, 12, 14, 16}
	c.Data.SharedTokens = false
	c.Sweep.GaussianSteps = 0
	c.Sweep.GaussianHidden = 0
	c.Sweep.LinearSteps = 0
	c.Sweep.ASteps = 0
	c.Sweep.ABatch = 0
	c.Sweep.ADepthSteps = nil
	c.Sweep.Grow = false
	c.Model.KeyGain = 0 // the spec has no gains
	c.Sweep.GaussianKeyGain = 0
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// FromEnv returns the preset named by $PROTOLAB_PRESET (default "small"), as notebooks and `make run` select it.
func FromEnv() (Config, error) { return Preset(run.PresetName()) }

// kinds accepted by the sweeps.
var allKinds = []string{linattn.KindA, linattn.KindB, linattn.KindC, linattn.KindAPrime}

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	d := c.Data
	if err := d.Tree.Validate(); err != nil {
		return errors.WithMessage(err, "data.tree")
	}
	switch {
	case d.GaussianDim < 3:
		return errors.Errorf("data.gaussian_dim=%d, want ≥ 3", d.GaussianDim)
	case d.Tokens < 1:
		return errors.Errorf("data.tokens=%d, want ≥ 1", d.Tokens)
	case !(d.LabelNoise >= 0):
		return errors.Errorf("data.label_noise=%g, want ≥ 0", d.LabelNoise)
	case d.Batch < 1:
		return errors.Errorf("data.batch=%d, want ≥ 1", d.Batch)
	case d.EvalContexts < 4:
		return errors.Errorf("data.eval_contexts=%d, want ≥ 4", d.EvalContexts)
	case d.PatchPairs < 2:
		return errors.Errorf("data.patch_pairs=%d, want ≥ 2", d.PatchPairs)
	case d.TheoryContexts < 2:
		return errors.Errorf("data.theory_contexts=%d, want ≥ 2", d.TheoryContexts)
	case d.BoundContexts < 0 || d.BoundContexts == 1:
		return errors.Errorf("data.bound_contexts=%d, want 0 or ≥ 2", d.BoundContexts)
	}
	m := c.Model
	m.Kind, m.Measurements = linattn.KindA, 1
	if err := m.Validate(); err != nil {
		return errors.WithMessage(err, "model")
	}
	if err := c.Train.Validate(); err != nil {
		return errors.WithMessage(err, "train")
	}
	s := c.Sweep
	if s.Seeds < 1 {
		return errors.Errorf("sweep.seeds=%d, want ≥ 1", s.Seeds)
	}
	if s.GaussianHidden < 0 {
		return errors.Errorf("sweep.gaussian_hidden=%d, want ≥ 0 (0 means model.hidden)", s.GaussianHidden)
	}
	if !(s.GaussianKeyGain >= 0) {
		return errors.Errorf("sweep.gaussian_key_gain=%g, want ≥ 0 (0 means model.key_gain)", s.GaussianKeyGain)
	}
	if s.GaussianSteps < 0 || s.LinearSteps < 0 || s.ASteps < 0 {
		return errors.Errorf("sweep.gaussian_steps=%d, sweep.linear_steps=%d, sweep.a_steps=%d: want ≥ 0 (0 means "+
			"train.steps)", s.GaussianSteps, s.LinearSteps, s.ASteps)
	}
	for _, n := range s.ADepthSteps {
		if n < 0 {
			return errors.Errorf("sweep.a_depth_steps=%v: want entries ≥ 0 (0 means sweep.a_steps)", s.ADepthSteps)
		}
	}
	if s.ABatch < 0 || s.Workers < 0 {
		return errors.Errorf("sweep.a_batch=%d, sweep.workers=%d: want ≥ 0 (0 means data.batch, GOMAXPROCS)",
			s.ABatch, s.Workers)
	}
	for _, l := range []struct {
		key   string
		m     []int
		kinds []string
		max   int
	}{
		{"tree", s.TreeM, s.TreeKinds, d.Tree.Depth},
		{"gaussian", s.GaussianM, s.GaussianKinds, 1 << 10},
	} {
		if len(l.kinds) > 0 && len(l.m) == 0 {
			return errors.Errorf("sweep.%s_m is empty but sweep.%s_kinds=%v", l.key, l.key, l.kinds)
		}
		for i, v := range l.m {
			if v < 1 || v > l.max || (i > 0 && v <= l.m[i-1]) {
				return errors.Errorf("sweep.%s_m=%v: want increasing values in 1…%d", l.key, l.m, l.max)
			}
		}
		for _, k := range l.kinds {
			if !slices.Contains(allKinds, k) {
				return errors.Errorf("sweep.%s_kinds: unknown kind %q, want one of %v", l.key, k, allKinds)
			}
		}
	}
	for _, k := range s.PatchKinds {
		if k != linattn.KindA && k != linattn.KindAPrime {
			return errors.Errorf("sweep.patch_kinds: %q, want %q or %q", k, linattn.KindA, linattn.KindAPrime)
		}
		if len(s.TreeM) == 0 {
			return errors.New("sweep.patch_kinds is set but sweep.tree_m is empty")
		}
	}
	return nil
}

// steps returns the training steps of a model of kind with M = m on the tree (gaussian = false) or Gaussian prior.
func (c Config) steps(kind string, gaussian bool, m int) int {
	switch {
	case !gaussian && kind == linattn.KindA && m >= 1 && m <= len(c.Sweep.ADepthSteps) && c.Sweep.ADepthSteps[m-1] > 0:
		return c.Sweep.ADepthSteps[m-1]
	case kind == linattn.KindC && c.Sweep.LinearSteps > 0:
		return c.Sweep.LinearSteps
	case gaussian && c.Sweep.GaussianSteps > 0:
		return c.Sweep.GaussianSteps
	case !gaussian && kind == linattn.KindA && c.Sweep.ASteps > 0:
		return c.Sweep.ASteps
	}
	return c.Train.Steps
}

// batch returns the contexts per training step of a model of kind.
func (c Config) batch(kind string) int {
	if kind == linattn.KindA && c.Sweep.ABatch > 0 {
		return c.Sweep.ABatch
	}
	return c.Data.Batch
}
