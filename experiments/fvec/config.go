package fvec

import (
	"math"
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/models/icl"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the whole study. Start from a preset (Tiny, Quick, Small, Paper); change fields or apply
// run.Override.
//
// Four seeds keep the data of each use apart (doc.go, "Protocol"): training (model s of a sweep point uses weights
// and training stream Seed+s; the theory Monte Carlo uses Seed), validation (every choice), test (the reported
// numbers) and held-out test (reported separately, never used for a choice).
type Config struct {
	Seed uint64 `json:"seed"`
	// ValSeed draws the validation contexts: the plateau criterion and every choice the study makes (which seed's
	// model the figures show).
	ValSeed uint64 `json:"val_seed"`
	// TestSeed draws the test contexts, the patching pairs and the probe contexts: the reported numbers.
	TestSeed uint64 `json:"test_seed"`
	// HeldOutSeed draws a second test set of the same size, evaluated once the settings are frozen and reported
	// separately; nothing is chosen on it.
	HeldOutSeed uint64     `json:"held_out_seed"`
	Data        DataConfig `json:"data"`
	// Model is the template of every model (icl.Segment.Model); kind, measurements and key_gain are set per row
	// and M.
	Model linattn.Config `json:"model"`
	// Train is the optimizer and schedule of every model (icl.Segment.Train); train.steps where sweep.depth_steps or
	// sweep.gaussian_steps has no entry.
	Train fit.Config  `json:"train"`
	Sweep SweepConfig `json:"sweep"`
}

// DataConfig configures the context generators of spec §2 and the sizes of every evaluation.
type DataConfig struct {
	// Tree is the tree prior (K, α). Spec §9: K = 8, α = 0.6 (K = 6 for fast runs); keep K ≥ L + 2.
	Tree prior.Tree `json:"tree"`
	// GaussianDim is D of the Gaussian prior θ ~ N(0, I_D). Spec §2.1: 8.
	GaussianDim int `json:"gaussian_dim"`
	// Data is how the training contexts of every model are drawn: data.tokens (N), data.label_noise (s),
	// data.batch and data.shared_tokens.
	icl.Data
	// ValContexts is the size of the validation set (one per prior, from val_seed), evaluated during training for
	// the plateau criterion; ≤ 500 or a multiple of 500 (it runs in equal chunks).
	ValContexts int `json:"val_contexts"`
	// TestContexts is the size of the test set and of the held-out test set (one of each per prior, shared by every
	// model). Spec §5: 10,000.
	TestContexts int `json:"test_contexts"`
	// PatchPairs is the number of target–donor pairs per divergence level of the patching heatmap. Spec §7: ≥ 1000.
	PatchPairs int `json:"patch_pairs"`
	// TheoryContexts is the number of Monte Carlo contexts of every theory curve, and of the re-estimate of each best
	// non-adaptive design.
	TheoryContexts int `json:"theory_contexts"`
	// BoundContexts is the number of contexts of the unconstrained Bayes bound of §4.6 (the tree prior's floor);
	// 0 skips it.
	BoundContexts int `json:"bound_contexts"`
	// DesignContexts is the number of fixed draws on which meanfield.BestLevelDesign searches the best non-adaptive
	// linear design at each M of sweep.tree_m (the reference model B is trained towards); 0 skips the search.
	DesignContexts int `json:"design_contexts"`
}

// SweepConfig says which models are trained on which prior, and with what budget.
type SweepConfig struct {
	// Seeds is the number of independently initialised and trained models per sweep point (≥ 1; spec §5: ≥ 3; the
	// scorecard's claims need ≥ 3).
	Seeds int `json:"seeds"`
	// TreeM are the measurement budgets M on the tree prior: the depth L of A and A′, the channels of B and C.
	TreeM []int `json:"tree_m"`
	// TreeKinds are the models trained on the tree prior (linattn.KindA, KindB, KindC, KindAPrime).
	TreeKinds []string `json:"tree_kinds"`
	// DepthSteps is train.steps of every model (whatever its kind) at M = 1, 2, … on the tree prior: entry M−1 for
	// M; a missing or 0 entry means train.steps. With Grow it is the length of each segment of a chain.
	DepthSteps []int `json:"depth_steps"`
	// GaussianM are the measurement budgets on the Gaussian prior.
	GaussianM []int `json:"gaussian_m"`
	// GaussianKinds are the models trained on the Gaussian prior; empty skips the Gaussian study.
	GaussianKinds []string `json:"gaussian_kinds"`
	// GaussianSteps is train.steps of every model (whatever its kind) at the i-th M of gaussian_m: entry i; a missing
	// or 0 entry means train.steps.
	GaussianSteps []int `json:"gaussian_steps"`
	// GaussianHidden is model.hidden of every model on the Gaussian prior (D is small there); 0 means model.hidden.
	GaussianHidden int `json:"gaussian_hidden"`
	// KeyGainAblation, when > 0, trains one more row on the tree prior: model A with linattn's key gain g_k set to
	// this value (eq. 8 of layers/linattn), with the same budget and seeds as every other row. It is an ablation,
	// not part of the common recipe (the gain exists for A's keys only); 0 skips it.
	KeyGainAblation float64 `json:"key_gain_ablation"`
	// PlateauTail and PlateauTol state the plateau criterion that every trained model is checked against: over the
	// last PlateauTail of its training steps, its validation MSE improves by less than PlateauTol (relative to the
	// final value). Validation runs every PlateauTail·steps steps. Both in (0, 1).
	PlateauTail float64 `json:"plateau_tail"`
	PlateauTol  float64 `json:"plateau_tol"`
	// Workers is the number of models trained at once (each seed's sweep over M is one sequential chain); 0 means
	// GOMAXPROCS. Results do not depend on it.
	Workers int `json:"workers"`
	// Grow starts each model from the trained model of the same kind and seed at the next smaller M of the sweep
	// (layers, heads or key rows it already has keep their weights; the new ones and the new readout rows start
	// fresh), for every kind alike: a chain's depth-M model has had the steps of every segment up to M.
	Grow bool `json:"grow"`
	// PatchKinds are the models whose keys are patched and whose function vectors are probed (KindA, KindAPrime;
	// every seed at the largest TreeM, and the key-gain ablation with KindA; trained on the tree prior even when
	// not in TreeKinds); empty skips patching and probing.
	PatchKinds []string `json:"patch_kinds"`
}

// Tiny is seconds on one CPU core, for the unit tests and the notebook's smoke run: K = 4 (D = 15), N = 32,
// M = 1…2, two seeds (too few for a claim), 150 steps of 32 independent contexts per model and segment.
func Tiny() Config {
	c := Small()
	c.Data.Tree = prior.Tree{Depth: 4, Alpha: 0.6}
	c.Data.GaussianDim = 4
	c.Data.Tokens = 32
	c.Data.Batch = 32
	c.Data.SharedTokens = false // at D = 15 independent contexts are cheap
	c.Data.ValContexts = 100
	c.Data.TestContexts = 500
	c.Data.PatchPairs = 200
	c.Data.TheoryContexts = 1000
	c.Data.BoundContexts = 0
	c.Data.DesignContexts = 200
	c.Model.Hidden = 16
	c.Model.ReadoutHidden = 32
	c.Train.Steps = 150
	c.Train.WarmupSteps = 10
	c.Sweep.Seeds = 2
	c.Sweep.TreeM = []int{1, 2}
	c.Sweep.DepthSteps = nil
	c.Sweep.GaussianM = []int{2, 6} // D = 4: one point on each side of M = D
	c.Sweep.GaussianSteps = nil
	c.Sweep.KeyGainAblation = 0
	return c
}

// Quick is what the notebook and `make run` compute when no protocol run (Small) is stored: the same protocol and
// models at a shorter budget (docs/DESIGN.md, "Presets": minutes per notebook on 2 cores): 16 contexts per step
// and [1000, 1000, 2000, 4000] steps per depth on the tree prior for every model, [500, 500, 1000, 1000] on the
// Gaussian prior, no key-gain ablation, smaller evaluation sets. Its models need not have plateaued; Result.Checks
// says whether they have.
func Quick() Config {
	c := Small()
	c.Data.Batch = 16
	c.Data.ValContexts = 500
	c.Data.TestContexts = 1000
	c.Data.PatchPairs = 300
	c.Data.DesignContexts = 1000
	c.Sweep.DepthSteps = []int{1000, 1000, 2000, 4000}
	c.Sweep.GaussianSteps = []int{500, 500, 1000, 1000}
	c.Sweep.KeyGainAblation = 0
	return c
}

// Small is the study's protocol (`protolab run fvec --preset small`, sized for the Small budget of docs/DESIGN.md,
// "Presets"): K = 6 (D = 63), α = 0.6, N = 128, s = 0.1 (spec), depths 1…4 of A and A′ against 1…4 channels of B
// and C on the tree prior, M ∈ {2, 4, 8, 12} at D = 8 on the Gaussian prior, three seeds, validation, test and
// held-out test contexts from three seeds no training stream uses (doc.go, "Protocol"). Every model, whatever its
// kind, trains with one recipe: the same batch, the same steps per depth (a chain grown from depth 1, each segment
// with its own warm-up and cosine decay), the same optimiser and schedule; model A with a key gain is an extra,
// named row with the same budget. The recipe departs from the spec's (§5: batch 512 of independent contexts,
// 20,000 steps, lr 1e-3, H = 128, GELU, no growing) to fit the budget, for every model alike: 32 contexts per step
// sharing their tokens, ReLU key MLPs of width 32, lr 1e-2 with a cosine decay to 1%.
//
// Budget: most steps go to the largest M of the tree sweep, where the claims are judged, and to M ≥ D on the
// Gaussian prior, where the models learn slowest. The batch is the largest that keeps A's chains (whose cost grows
// with it, unlike B's, A′'s and C's) within the budget; BenchmarkTrainStep measures the step times it is sized
// from. Whether every model reached the plateau criterion (sweep.plateau_tail,
// sweep.plateau_tol) is a check of the run (Result.Checks), not an assumption. `protolab cost` estimates its compute
// from the configuration; a stored run's provenance records the seconds each phase took.
func Small() Config {
	m := linattn.DefaultConfig()
	m.Hidden = 32         // key MLPs of A and B and query MLPs of A′
	m.ReadoutHidden = 128 // the readouts run once per context, so the spec's width is cheap
	m.Activation = linattn.ReLU
	t := fit.DefaultConfig()
	t.Steps = 3000
	t.LR = 1e-2
	t.MinLRFrac = 0.01
	t.WarmupSteps = 30
	t.WeightDecay = 0 // a regression with a known optimum (model C's LMMSE): no decay
	t.ClipNorm = 1    // spec §5
	t.EvalBatches = 1 // set per model from data.val_contexts
	t.LogEvery = 50
	return Config{
		Seed:        1,
		ValSeed:     1,
		TestSeed:    3003,
		HeldOutSeed: 4004,
		Data: DataConfig{
			Tree:           prior.Tree{Depth: 6, Alpha: 0.6},
			GaussianDim:    8,
			Data:           icl.Data{Tokens: 128, LabelNoise: 0.1, Batch: 32, SharedTokens: true},
			ValContexts:    1000,
			TestContexts:   3000,
			PatchPairs:     500,
			TheoryContexts: 4000,
			BoundContexts:  2000,
			DesignContexts: 2000,
		},
		Model: m,
		Train: t,
		Sweep: SweepConfig{
			Seeds:           3,
			TreeM:           []int{1, 2, 3, 4},
			TreeKinds:       []string{linattn.KindA, linattn.KindAPrime, linattn.KindB, linattn.KindC},
			DepthSteps:      []int{3000, 3000, 6000, 24_000},
			GaussianM:       []int{2, 4, 8, 12},
			GaussianKinds:   []string{linattn.KindA, linattn.KindB, linattn.KindC},
			GaussianSteps:   []int{1000, 1000, 3000, 3000},
			GaussianHidden:  16,
			KeyGainAblation: 16,
			PlateauTail:     0.2,
			PlateauTol:      0.01,
			Grow:            true,
			PatchKinds:      []string{linattn.KindA, linattn.KindAPrime},
		},
	}
}

// Paper is the spec's setting (docs/spec/function_vectors.md §5 and §9): K = 8 (D = 255), α = 0.6, N = 128, s = 0.1,
// H = 128, GELU, batch 512 of independent contexts, Adam at lr 1e-3 with 500 warm-up steps and cosine decay,
// clipping at 1.0, 20,000 steps (50,000 at L = 6), every model trained from scratch, three seeds, 10,000 test
// contexts, depths 1…6, and M = 1…16 at D = 8. Meant for a GPU with XLA.
func Paper() Config {
	c := Small()
	c.Data.Tree = prior.Tree{Depth: 8, Alpha: 0.6}
	c.Data.Tokens = 128
	c.Data.Batch = 512
	c.Data.SharedTokens = false
	c.Data.ValContexts = 2000
	c.Data.TestContexts = 10_000
	c.Data.TheoryContexts = 10_000
	c.Data.BoundContexts = 50_000
	c.Data.DesignContexts = 0 // 2^8 leaves: the search is too slow on a CPU
	c.Model.Hidden = 128
	c.Model.ReadoutHidden = 128
	c.Model.Activation = linattn.GELU
	c.Train.Steps = 20_000
	c.Train.LR = 1e-3
	c.Train.WarmupSteps = 500
	c.Train.MinLRFrac = 0
	c.Sweep.Seeds = 3
	c.Sweep.TreeM = []int{1, 2, 3, 4, 5, 6}
	c.Sweep.DepthSteps = []int{20_000, 20_000, 20_000, 20_000, 20_000, 50_000}
	c.Sweep.GaussianM = []int{1, 2, 4, 6, 8, 10, 12, 14, 16}
	c.Sweep.GaussianSteps = nil
	c.Sweep.GaussianHidden = 0
	c.Sweep.KeyGainAblation = 0 // the spec has no gains
	c.Sweep.Grow = false
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// kinds accepted by the sweeps.
var allKinds = []string{linattn.KindA, linattn.KindB, linattn.KindC, linattn.KindAPrime}

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	d := c.Data
	if err := d.Tree.Validate(); err != nil {
		return errors.WithMessage(err, "data.tree")
	}
	switch {
	case c.TestSeed == c.ValSeed || c.HeldOutSeed == c.ValSeed || c.HeldOutSeed == c.TestSeed:
		return errors.Errorf("val_seed=%d, test_seed=%d, held_out_seed=%d: want three different seeds (a test set "+
			"must not be the data choices are made on)", c.ValSeed, c.TestSeed, c.HeldOutSeed)
	case d.GaussianDim < 3:
		return errors.Errorf("data.gaussian_dim=%d, want ≥ 3", d.GaussianDim)
	case d.Tokens < 1:
		return errors.Errorf("data.tokens=%d, want ≥ 1", d.Tokens)
	case !(d.LabelNoise >= 0):
		return errors.Errorf("data.label_noise=%g, want ≥ 0", d.LabelNoise)
	case d.Batch < 1:
		return errors.Errorf("data.batch=%d, want ≥ 1", d.Batch)
	case d.ValContexts < 2 || (d.ValContexts > icl.ValidationChunk && d.ValContexts%icl.ValidationChunk != 0):
		return errors.Errorf("data.val_contexts=%d, want 2…%d or a multiple of %d (validation runs in equal chunks)",
			d.ValContexts, icl.ValidationChunk, icl.ValidationChunk)
	case d.TestContexts < 4:
		return errors.Errorf("data.test_contexts=%d, want ≥ 4", d.TestContexts)
	case d.PatchPairs < 2:
		return errors.Errorf("data.patch_pairs=%d, want ≥ 2", d.PatchPairs)
	case d.TheoryContexts < 2:
		return errors.Errorf("data.theory_contexts=%d, want ≥ 2", d.TheoryContexts)
	case d.BoundContexts < 0 || d.BoundContexts == 1:
		return errors.Errorf("data.bound_contexts=%d, want 0 or ≥ 2", d.BoundContexts)
	case d.DesignContexts < 0 || d.DesignContexts == 1:
		return errors.Errorf("data.design_contexts=%d, want 0 or ≥ 2", d.DesignContexts)
	}
	m := c.Model
	if m.KeyGain != 0 {
		return errors.Errorf("model.key_gain=%g: the key gain acts on model A alone, so it cannot be part of the "+
			"recipe every model shares; leave it 0 and set sweep.key_gain_ablation to train A with it as an extra row",
			m.KeyGain)
	}
	m.Kind, m.Measurements = linattn.KindA, 1
	if err := m.Validate(); err != nil {
		return errors.WithMessage(err, "model")
	}
	if err := c.Train.Validate(); err != nil {
		return errors.WithMessage(err, "train")
	}
	s := c.Sweep
	switch {
	case s.Seeds < 1:
		return errors.Errorf("sweep.seeds=%d, want ≥ 1", s.Seeds)
	case s.GaussianHidden < 0:
		return errors.Errorf("sweep.gaussian_hidden=%d, want ≥ 0 (0 means model.hidden)", s.GaussianHidden)
	case !(s.KeyGainAblation >= 0) || math.IsInf(s.KeyGainAblation, 0):
		return errors.Errorf("sweep.key_gain_ablation=%g, want a finite value ≥ 0 (0 skips the ablation)",
			s.KeyGainAblation)
	case !(s.PlateauTail > 0 && s.PlateauTail < 1):
		return errors.Errorf("sweep.plateau_tail=%g, want a fraction of the training steps in (0, 1)", s.PlateauTail)
	case !(s.PlateauTol > 0 && s.PlateauTol < 1):
		return errors.Errorf("sweep.plateau_tol=%g, want a relative improvement in (0, 1)", s.PlateauTol)
	case s.Workers < 0:
		return errors.Errorf("sweep.workers=%d, want ≥ 0 (0 means GOMAXPROCS)", s.Workers)
	}
	for key, steps := range map[string][]int{"sweep.depth_steps": s.DepthSteps, "sweep.gaussian_steps": s.GaussianSteps} {
		for _, n := range steps {
			if n < 0 {
				return errors.Errorf("%s=%v: want entries ≥ 0 (0 means train.steps)", key, steps)
			}
		}
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
	}
	for _, sw := range []struct {
		gaussian bool
		m        []int
	}{{false, s.TreeM}, {true, s.GaussianM}} {
		for _, m := range sw.m {
			if n := c.steps(sw.gaussian, m); n < 2 {
				return errors.Errorf("train.steps, sweep.depth_steps or sweep.gaussian_steps: %d steps at M = %d; want "+
					"≥ 2 (the plateau criterion needs two validation points)", n, m)
			}
		}
	}
	if (len(s.PatchKinds) > 0 || s.KeyGainAblation > 0) && len(s.TreeM) == 0 {
		return errors.New("sweep.patch_kinds or sweep.key_gain_ablation is set but sweep.tree_m is empty")
	}
	return nil
}
