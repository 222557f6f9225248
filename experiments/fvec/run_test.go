package fvec

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/models/icl"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/run"
)

var (
	tinyOnce sync.Once
	tinyRes  *Result
	tinyErr  error
	tinyDir  string
)

// tinyResult runs the Tiny preset once per test binary (storing it under a temporary run.Out) and shares the
// result.
func tinyResult(t *testing.T) (*Result, Config) {
	t.Helper()
	cfg := Tiny()
	tinyOnce.Do(func() {
		var parent string
		parent, tinyErr = os.MkdirTemp("", "fvec-tiny-")
		if tinyErr != nil {
			return
		}
		tinyDir = filepath.Join(parent, "out") // not created yet: Run must create it
		tinyRes, tinyErr = Runs.Run(cfg, run.Out(tinyDir), run.Progress(nil))
	})
	if tinyErr != nil {
		t.Fatalf("Run(Tiny): %+v", tinyErr)
	}
	return tinyRes, cfg
}

func TestMain(m *testing.M) {
	code := m.Run()
	if tinyDir != "" {
		os.RemoveAll(tinyDir)
	}
	os.Exit(code)
}

// TestRun_TinyModelCMatchesLMMSE: a trained model C is the best linear readout of M linear keys, whose MSE on real
// tokens is LMMSE with the per-node noise τ_n² (tree, spec §4.4) and the linear-key curve (Gaussian, eq. 4.4,
// flat beyond M = D). The run trains C alone at the Tiny sizes, long enough for a linear model (1000 steps per
// point, from scratch). Tolerance: 4 standard errors plus 3% of the value for the optimisation left after Adam on
// batches of 32 noisy contexts.
func TestRun_TinyModelCMatchesLMMSE(t *testing.T) {
	cfg := Tiny()
	cfg.Sweep.TreeKinds, cfg.Sweep.GaussianKinds, cfg.Sweep.PatchKinds = []string{"c"}, []string{"c"}, nil
	cfg.Train.Steps, cfg.Sweep.Grow, cfg.Data.DesignContexts = 1000, false, 0
	res, err := Runs.Run(cfg, run.Progress(nil))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	c := curve(res.Tree.Models, linattn.KindC)
	if c == nil {
		t.Fatal("no model C on the tree prior")
	}
	for i, m := range c.M {
		want := res.Tree.Theory.LMMSETokens[m-1]
		if tol := 4*c.StdErr[i] + 0.03*want; math.Abs(c.MSE[i]-want) > tol {
			t.Errorf("tree, C at M=%d: MSE %.4f, LMMSE with per-node noise %.4f (|diff| > %.4f)", m, c.MSE[i], want, tol)
		}
	}
	g := curve(res.Gaussian.Models, linattn.KindC)
	for i, m := range g.M {
		want := res.Gaussian.Theory.LinearKey[m-1]
		if tol := 4*g.StdErr[i] + 0.03*want; math.Abs(g.MSE[i]-want) > tol {
			t.Errorf("gaussian, C at M=%d: MSE %.4f, linear-key curve %.4f (|diff| > %.4f)", m, g.MSE[i], want, tol)
		}
	}
}

// TestRun_TinyPatching checks the invariants of the patching protocol of spec §7 on every seed of the trained model
// A: layer 1's keys depend on x only, which donor and target share, so patching layer 1 changes nothing, bit for
// bit; the ideal model's ΔMSE is exactly 0 for a shared prefix (j ≥ ℓ, same noise); the shown model is the seed with
// the lowest validation MSE.
func TestRun_TinyPatching(t *testing.T) {
	res, cfg := tinyResult(t)
	seeds := res.PatchSeeds(linattn.KindA)
	if len(seeds) != cfg.Sweep.Seeds {
		t.Fatalf("%d patched seeds of A, want %d", len(seeds), cfg.Sweep.Seeds)
	}
	for _, p := range seeds {
		if p.Layers < 2 || len(p.Levels) != cfg.Data.Tree.Depth {
			t.Fatalf("patch result %+v, want L ≥ 2 and K = %d levels", p, cfg.Data.Tree.Depth)
		}
		for j := range p.Levels {
			if p.Delta[j][0] != 0 {
				t.Errorf("seed %d: ΔMSE(j=%d, ℓ=1) = %g, want exactly 0", p.Seed, j+1, p.Delta[j][0])
			}
			for l := 1; l <= j && l < p.Layers; l++ { // ℓ = l+1 ≤ j+1
				if th := p.Theory[j][l]; th != 0 {
					t.Errorf("theory ΔMSE(j=%d, ℓ=%d) = %g, want exactly 0 with shared noise", j+1, l+1, th)
				}
			}
		}
		if shown := res.Patch(linattn.KindA); p.ValMSE < shown.ValMSE {
			t.Errorf("Patch shows seed %d (validation MSE %g), but seed %d has %g", shown.Seed, shown.ValMSE, p.Seed,
				p.ValMSE)
		}
	}
}

// TestRun_TinyVectorsAndChecks checks the function vectors and the result's plumbing: the first statistic
// encodes the root bit, every model has a validation curve ending at its last step, the result survives JSON,
// LoadOrRun reads it back instead of training, and the provenance records the phases.
func TestRun_TinyVectorsAndChecks(t *testing.T) {
	res, cfg := tinyResult(t)
	for _, v := range res.Vectors {
		if acc := v.ProbeAccuracy[0][0]; acc < 0.9 {
			t.Errorf("model %s: probe accuracy of b_1 from p_1 = %.3f, want ≥ 0.9", v.Name, acc)
		}
	}
	for _, c := range append(slices.Clone(res.Tree.Models), res.Gaussian.Models...) {
		for i := range c.M {
			for s, tr := range c.Training[i] {
				n := len(tr.ValSteps)
				if n < 2 || tr.ValSteps[n-1] != tr.Steps || tr.ValMSE[n-1] != c.ValMSE[i][s] || math.IsNaN(tr.Improvement) {
					t.Errorf("%s M=%d seed %d: validation curve %v at steps %v (%d steps), final %g", c.Name, c.M[i], s,
						tr.ValMSE, tr.ValSteps, tr.Steps, c.ValMSE[i][s])
				}
			}
			if len(c.HeldOut.PerSeed[i]) != cfg.Sweep.Seeds || len(c.PerSeed[i]) != cfg.Sweep.Seeds {
				t.Errorf("%s M=%d: %d test and %d held-out scores, want %d", c.Name, c.M[i], len(c.PerSeed[i]),
					len(c.HeldOut.PerSeed[i]), cfg.Sweep.Seeds)
			}
		}
	}
	for _, name := range []string{"theory", "train", "patch", "vectors"} {
		if _, ok := res.Provenance.Timings[name]; !ok {
			t.Errorf("provenance has no timing %q: %v", name, res.Provenance.Timings)
		}
	}
	if len(res.Checks) == 0 || len(res.Tree.BestDesign) != len(cfg.Sweep.TreeM) {
		t.Errorf("%d checks, %d best designs", len(res.Checks), len(res.Tree.BestDesign))
	}
	loaded, err := Runs.LoadOrRun(cfg, run.Out(tinyDir), run.Progress(nil))
	if err != nil {
		t.Fatalf("LoadOrRun: %+v", err)
	}
	if !loaded.Provenance.Start.Equal(res.Provenance.Start) {
		t.Errorf("LoadOrRun ran again (start %v, stored %v)", loaded.Provenance.Start, res.Provenance.Start)
	}
	a, _ := json.Marshal(res.Tree)
	b, _ := json.Marshal(loaded.Tree)
	if string(a) != string(b) {
		t.Error("the tree result changed through result.json")
	}
	if a, b := res.String(), loaded.String(); a != b || !strings.Contains(a, "depth advantage") {
		t.Errorf("String() of the stored result differs or lacks the claims:\n%s\n%s", a, b)
	}
}

// TestNotebook_ShowsTheStoredProtocolOrQuick checks Notebook's choice at the Small preset: with no stored Small
// result it shows Quick's, which it finds stored here (so nothing trains).
func TestNotebook_ShowsTheStoredProtocolOrQuick(t *testing.T) {
	t.Setenv(run.PresetEnv, "small")
	t.Setenv(run.ResultsEnv, t.TempDir()) // an empty shipped folder: the checkout's results/ may hold a protocol run
	dir := t.TempDir()
	// Store a stand-in result under Quick's configuration: Notebook must load it rather than run anything.
	if _, err := run.LoadOrRun(Study, Quick(), []run.Option{run.Out(dir)}, func(Config, *run.Provenance, run.Options) (*Result, error) {
		return &Result{Checks: []Check{{Name: "quick stand-in"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	r, err := Runs.Notebook(run.Out(dir), run.Progress(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 1 || r.Checks[0].Name != "quick stand-in" {
		t.Errorf("Notebook at small without a protocol run returned %+v, want Quick's stored result", r.Checks)
	}
	if _, err := run.LoadOrRun(Study, Small(), []run.Option{run.Out(dir)}, func(Config, *run.Provenance, run.Options) (*Result, error) {
		return &Result{Checks: []Check{{Name: "protocol stand-in"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if r, err = Runs.Notebook(run.Out(dir), run.Progress(nil)); err != nil || r.Checks[0].Name != "protocol stand-in" {
		t.Errorf("Notebook at small with a protocol run returned %+v (%v), want the stored Small result", r.Checks, err)
	}
}

// TestChecks_FailWhenTheProtocolBreaks feeds checks a result in which every protocol statement is broken, then a
// healthy one.
func TestChecks_FailWhenTheProtocolBreaks(t *testing.T) {
	tree := prior.Tree{Depth: 4, Alpha: 0.6}
	curves, err := meanfield.ComputeTreeCurves(meanfield.TreeCurveConfig{Prior: tree, Tokens: 32, LabelNoise: 0.1,
		MaxMeasurements: 3})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Tiny()
	tol := cfg.Sweep.PlateauTol
	row := func(name string, mse []float64, improvement float64) icl.Curve {
		c := icl.Curve{Name: name, Kind: name, M: []int{1, 2, 3}}
		for i := range mse {
			c.Scores.Add([]icl.Score{{MSE: mse[i], PerContext: []float64{mse[i], mse[i]}}})
			c.StdErr[i] = 1e-3
			c.Training = append(c.Training, []icl.Training{{Improvement: improvement}})
		}
		return c
	}
	design := []DesignPoint{{M: 3, MSE: meanfield.Estimate{Mean: 0.1, StdErr: 1e-3}}}
	r := &Result{
		Tree: &TreeResult{Theory: curves, BestDesign: design, Models: []icl.Curve{
			row("a", []float64{0.5, 0.2, 0.07}, 3*tol),
			row("b", []float64{0.5, 0.3, 0.2}, 0), row("c", []float64{0.6, 0.6, 0.6}, 0)}},
		Patches: []PatchResult{{Name: "a", Levels: []int{1, 2}, Layers: 2,
			Patching: icl.Patching{Delta: [][]float64{{0.01, 0.2}, {0, 0.2}}}}},
	}
	for _, c := range checks(r, cfg) {
		// Only B's and C's plateaus are healthy in this result.
		broken := !strings.Contains(c.Name, "tree: B's validation") && !strings.Contains(c.Name, "tree: C's validation")
		if c.Pass == broken {
			t.Errorf("check %q: pass=%v on a result where it should be %v (value %g)", c.Name, c.Pass, !broken, c.Value)
		}
	}
	r.Tree.Models = []icl.Curve{row("a", []float64{0.5, 0.2, 0.07}, tol/2), row("b", []float64{0.5, 0.3, 0.1}, 0),
		row("c", curves.LMMSETokens, 0)}
	r.Patches[0].Delta = [][]float64{{0, 0.2}, {0, 0.001}}
	for _, c := range checks(r, cfg) {
		if !c.Pass {
			t.Errorf("check %q failed on a healthy result (value %g, want %s)", c.Name, c.Value, c.Want)
		}
	}
}

// TestRunSweeps_IndependentOfWorkers checks that training models concurrently does not change any result.
func TestRunSweeps_IndependentOfWorkers(t *testing.T) {
	cfg := Tiny()
	cfg.Data.Tree = prior.Tree{Depth: 3, Alpha: 0.6}
	cfg.Data.Tokens, cfg.Data.TestContexts, cfg.Data.ValContexts, cfg.Data.DesignContexts = 16, 64, 32, 0
	cfg.Train.Steps = 20
	cfg.Data.SharedTokens, cfg.Data.Batch = true, 8 // the Small preset's training path
	cfg.Sweep.TreeKinds, cfg.Sweep.PatchKinds, cfg.Sweep.GaussianKinds = []string{"a", "c"}, nil, nil
	cfg.Sweep.KeyGainAblation = 4
	var curves [][]icl.Curve
	for _, workers := range []int{1, 3} {
		cfg.Sweep.Workers = workers
		res, err := Runs.Run(cfg, run.Progress(nil))
		if err != nil {
			t.Fatalf("%+v", err)
		}
		curves = append(curves, res.Tree.Models)
	}
	for i := range curves[0] {
		a, b := curves[0][i], curves[1][i]
		if a.Name != b.Name || !slices.Equal(a.MSE, b.MSE) || !slices.Equal(a.StdErr, b.StdErr) ||
			!slices.Equal(a.HeldOut.MSE, b.HeldOut.MSE) {
			t.Errorf("row %s: MSE %v with 1 worker, row %s: %v with 3", a.Name, a.MSE, b.Name, b.MSE)
		}
	}
}

func TestConfig_PresetsAndValidate(t *testing.T) {
	for _, name := range []string{"tiny", "small", "paper", ""} {
		c, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("preset %q: %v", name, err)
		}
	}
	if _, err := Preset("huge"); err == nil {
		t.Error("unknown preset accepted")
	}
	c := Small()
	if err := run.Override(&c, "sweep.tree_m=[1,3];model.hidden=8;data.tokens=16"); err != nil {
		t.Fatal(err)
	}
	if c.Sweep.TreeM[1] != 3 || c.Model.Hidden != 8 || c.Data.Tokens != 16 {
		t.Errorf("override not applied: %+v", c.Sweep.TreeM)
	}
	for key, mutate := range map[string]func(*Config){
		"sweep.tree_m":            func(c *Config) { c.Sweep.TreeM = []int{2, 1} },
		"sweep.tree_kinds":        func(c *Config) { c.Sweep.TreeKinds = []string{"z"} },
		"sweep.seeds":             func(c *Config) { c.Sweep.Seeds = 0 },
		"data.tokens":             func(c *Config) { c.Data.Tokens = 0 },
		"sweep.patch_kinds":       func(c *Config) { c.Sweep.PatchKinds = []string{"b"} },
		"data.gaussian_dim":       func(c *Config) { c.Data.GaussianDim = 1 },
		"model":                   func(c *Config) { c.Model.Hidden = 0 },
		"model.key_gain":          func(c *Config) { c.Model.KeyGain = 16 },
		"sweep.depth_steps":       func(c *Config) { c.Sweep.DepthSteps = []int{100, -1} },
		"sweep.gaussian_steps":    func(c *Config) { c.Sweep.GaussianSteps = []int{-1} },
		"sweep.key_gain_ablation": func(c *Config) { c.Sweep.KeyGainAblation = -1 },
		"sweep.plateau_tail":      func(c *Config) { c.Sweep.PlateauTail = 1 },
		"sweep.plateau_tol":       func(c *Config) { c.Sweep.PlateauTol = 0 },
		"test_seed":               func(c *Config) { c.TestSeed = c.ValSeed },
		"held_out_seed":           func(c *Config) { c.HeldOutSeed = c.TestSeed },
		"data.val_contexts":       func(c *Config) { c.Data.ValContexts = 700 },
		"data.design_contexts":    func(c *Config) { c.Data.DesignContexts = 1 },
	} {
		c := Small()
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: Validate() = %v, want an error naming it", key, err)
		}
	}
}

// Every model at M on the tree prior trains for entry M−1 of sweep.depth_steps (train.steps where it is missing or
// 0), whatever its kind; at the i-th M of the Gaussian sweep for entry i of sweep.gaussian_steps; validation runs
// every plateau_tail of the steps.
func TestConfig_Steps(t *testing.T) {
	c := Small()
	c.Train.Steps, c.Sweep.GaussianM, c.Sweep.GaussianSteps = 10, []int{2, 3, 8}, []int{40, 50}
	c.Sweep.DepthSteps = []int{0, 30, 60}
	for _, tc := range []struct {
		gaussian bool
		m        int
		want     int
	}{
		{false, 1, 10}, // a 0 entry
		{false, 2, 30},
		{false, 3, 60},
		{false, 4, 10}, // past the list
		{true, 3, 50},  // the Gaussian prior: entry 1 of gaussian_steps for the second M of gaussian_m
		{true, 8, 10},  // past gaussian_steps
	} {
		if got := c.steps(tc.gaussian, tc.m); got != tc.want {
			t.Errorf("steps(gaussian=%v, M=%d) = %d, want %d", tc.gaussian, tc.m, got, tc.want)
		}
	}
	c.Sweep.PlateauTail = 0.2
	for steps, want := range map[int]int{3000: 600, 12_000: 2400, 3: 1} {
		if got := c.evalEvery(steps); got != want {
			t.Errorf("evalEvery(%d) = %d, want %d", steps, got, want)
		}
	}
	if tiny := Tiny(); tiny.Sweep.DepthSteps != nil || tiny.Sweep.KeyGainAblation != 0 {
		t.Errorf("Tiny inherits depth_steps=%v, key_gain_ablation=%g from Small, want none (seconds)",
			tiny.Sweep.DepthSteps, tiny.Sweep.KeyGainAblation)
	}
}
