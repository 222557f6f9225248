package fvec

import (
	"math"
	"slices"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/models/icl"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/run"
)

// Protocol is the part of the configuration that the claims and checks state: the budgets, the seeds and the
// plateau criterion, copied into the result so that they are judged from the stored result alone.
type Protocol struct {
	Seeds       int    `json:"seeds"`
	ValSeed     uint64 `json:"val_seed"`
	TestSeed    uint64 `json:"test_seed"`
	HeldOutSeed uint64 `json:"held_out_seed"`
	// Batch is the contexts per training step of every model; SharedTokens whether a step's contexts share x.
	Batch        int  `json:"batch"`
	SharedTokens bool `json:"shared_tokens"`
	// TreeSteps[i] and GaussianSteps[i] are the training steps of every model at the i-th M of each sweep; with
	// Grow a model at M continues the one at the previous M.
	TreeSteps     []int   `json:"tree_steps"`
	GaussianSteps []int   `json:"gaussian_steps"`
	Grow          bool    `json:"grow"`
	TestContexts  int     `json:"test_contexts"`
	ValContexts   int     `json:"val_contexts"`
	PlateauTail   float64 `json:"plateau_tail"`
	PlateauTol    float64 `json:"plateau_tol"`
}

// protocolOf returns the protocol of cfg.
func protocolOf(cfg Config) Protocol {
	p := Protocol{Seeds: cfg.Sweep.Seeds, ValSeed: cfg.ValSeed, TestSeed: cfg.TestSeed, HeldOutSeed: cfg.HeldOutSeed,
		Batch: cfg.Data.Batch, SharedTokens: cfg.Data.SharedTokens, Grow: cfg.Sweep.Grow,
		TestContexts: cfg.Data.TestContexts, ValContexts: cfg.Data.ValContexts, PlateauTail: cfg.Sweep.PlateauTail,
		PlateauTol: cfg.Sweep.PlateauTol}
	for _, m := range cfg.Sweep.TreeM {
		p.TreeSteps = append(p.TreeSteps, cfg.steps(false, m))
	}
	for _, m := range cfg.Sweep.GaussianM {
		p.GaussianSteps = append(p.GaussianSteps, cfg.steps(true, m))
	}
	return p
}

// steps returns the training steps of every model with M = m on the tree (gaussian = false) or Gaussian prior.
func (c Config) steps(gaussian bool, m int) int {
	if gaussian {
		steps := c.Sweep.GaussianSteps
		if i := slices.Index(c.Sweep.GaussianM, m); i >= 0 && i < len(steps) && steps[i] > 0 {
			return steps[i]
		}
		return c.Train.Steps
	}
	if m >= 1 && m <= len(c.Sweep.DepthSteps) && c.Sweep.DepthSteps[m-1] > 0 {
		return c.Sweep.DepthSteps[m-1]
	}
	return c.Train.Steps
}

// evalEvery returns the validation interval of a model trained for steps steps: the plateau tail, so that the
// validation curve has a point at (1 − plateau_tail)·steps when the product is a whole number.
func (c Config) evalEvery(steps int) int {
	return max(1, int(math.Round(c.Sweep.PlateauTail*float64(steps))))
}

// row is one row of the study: a model kind (or the key-gain ablation) swept over the M of one prior.
type row struct {
	prior   string // "tree" or "gaussian"
	name    string // Curve.Name
	kind    string
	keyGain float64 // model.key_gain of the row (the ablation), 0 for the common recipe
	ms      []int
	keep    bool // keep the models at the largest M (patched and probed)
}

// rows returns every row the study trains, in the order of the result: on the tree prior the kinds of
// sweep.tree_kinds and then the patching kinds not among them, then the key-gain ablation; then the kinds of
// sweep.gaussian_kinds.
func (c Config) rows() []row {
	var rows []row
	kinds := slices.Clone(c.Sweep.TreeKinds)
	for _, k := range c.Sweep.PatchKinds {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	for _, k := range kinds {
		rows = append(rows, row{prior: "tree", name: k, kind: k, ms: c.Sweep.TreeM,
			keep: slices.Contains(c.Sweep.PatchKinds, k)})
	}
	if g := c.Sweep.KeyGainAblation; g > 0 {
		rows = append(rows, row{prior: "tree", name: AblationKeyGain, kind: linattn.KindA, keyGain: g,
			ms: c.Sweep.TreeM, keep: slices.Contains(c.Sweep.PatchKinds, linattn.KindA)})
	}
	for _, k := range c.Sweep.GaussianKinds {
		rows = append(rows, row{prior: "gaussian", name: k, kind: k, ms: c.Sweep.GaussianM})
	}
	return rows
}

// priorOf returns the prior of a row: data.tree, or the Gaussian prior of dimension data.gaussian_dim.
func (c Config) priorOf(name string) prior.Prior {
	if name == "gaussian" {
		return prior.NewGaussian(c.Data.GaussianDim)
	}
	return c.Data.Tree
}

// segments returns the models of one chain of row r, one per M: the template model with the row's kind, M and key
// gain (model.hidden replaced by sweep.gaussian_hidden on the Gaussian prior), trained for its steps with
// validation every plateau tail.
func (c Config) segments(r row) []icl.Segment {
	var out []icl.Segment
	for _, m := range r.ms {
		mc := c.Model
		mc.Kind, mc.Measurements, mc.KeyGain = r.kind, m, r.keyGain
		if r.prior == "gaussian" && c.Sweep.GaussianHidden > 0 {
			mc.Hidden = c.Sweep.GaussianHidden
		}
		steps := c.steps(r.prior == "gaussian", m)
		tc := c.Train
		tc.Steps = steps
		tc.WarmupSteps = min(tc.WarmupSteps, steps)
		tc.EvalEvery = c.evalEvery(steps)
		out = append(out, icl.Segment{Model: mc, Train: tc})
	}
	return out
}

// Cost estimates the compute of the study at c (run.Cost's conventions), counting the models sweeps trains: per
// row and seed, one model per M (icl.Segment.Cost), validated on data.val_contexts contexts and scored on the test
// and held-out sets (data.test_contexts each). The theory curves, patching and function vectors are not counted.
func (c Config) Cost() run.Cost {
	var total run.Cost
	for _, r := range c.rows() {
		dim := c.priorOf(r.prior).Dim()
		for _, sg := range c.segments(r) {
			one := sg.Cost(dim, c.Data.Data, c.Data.ValContexts, 2*c.Data.TestContexts)
			total = total.Add(one.Times(c.Sweep.Seeds))
		}
	}
	return total.Note("products of layers/linattn's equations, shared tokens computed once per batch " +
		"(icl.StepFLOPs); theory, patching and vectors not counted")
}
