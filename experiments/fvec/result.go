package fvec

import (
	"fmt"
	"strings"

	"github.com/protolab/protolab/models/icl"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/workbench/run"
)

// Result is everything the study measured, as plain data (JSON-able; figures.go draws it, Claims scores it).
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	// Protocol states the budgets, seeds and plateau criterion the claims and checks are judged under.
	Protocol Protocol        `json:"protocol"`
	Tree     *TreeResult     `json:"tree"`
	Gaussian *GaussianResult `json:"gaussian,omitempty"`
	// Patches holds one entry per patched row (Sweep.PatchKinds and the key-gain ablation) and seed; Vectors one
	// per patched row, for the seed with the lowest validation MSE.
	Patches []PatchResult  `json:"patches,omitempty"`
	Vectors []VectorResult `json:"vectors,omitempty"`
	// Checks say whether the protocol ran as stated (every model on its plateau, B at the best non-adaptive design,
	// C on its theory curve), each with the measured value.
	Checks []Check `json:"checks"`
}

// AblationKeyGain is the name of the key-gain ablation row: model A with model.key_gain = sweep.key_gain_ablation.
const AblationKeyGain = "a_key_gain"

// DesignPoint is the best non-adaptive linear design that meanfield.BestLevelDesign finds with M channels: the
// reference a trained model B is compared with.
type DesignPoint struct {
	M int `json:"m"`
	// MSE is the design's Bayes-readout MSE re-estimated on data.theory_contexts fresh draws.
	MSE meanfield.Estimate `json:"mse"`
	// W are the design's level weights [M][K] (eq. 4.12 of theory/meanfield).
	W [][]float64 `json:"w"`
}

// TreeResult is the tree-prior study: theory curves and trained models against M (spec §6 item 2).
type TreeResult struct {
	// Theory holds the measurement-model curves at τ² = TokenTau2 (spec §4.7 convention) and the per-node LMMSE of
	// real tokens (LMMSETokens, model C's exact baseline).
	Theory *meanfield.TreeCurves `json:"theory"`
	// AdaptiveTokens and NonAdaptiveTokens are the ideal models A (greedy binary search) and B (BFS nodes, Bayes
	// readout) run as real linear attention on N tokens (spec §8 item 7), indexed by M − 1.
	AdaptiveTokens    []meanfield.Estimate `json:"adaptive_tokens"`
	NonAdaptiveTokens []meanfield.Estimate `json:"non_adaptive_tokens"`
	// OptimalNoiseless is the dynamic programme's optimal adaptive MSE over node keys, noise-free (K ≤ 6, L ≤ 4);
	// greedy binary search is not optimal, so trained models can fall below Theory.Adaptive.
	OptimalNoiseless []float64 `json:"optimal_noiseless,omitempty"`
	// BestDesign is the best non-adaptive level design at each M of sweep.tree_m (empty when
	// data.design_contexts is 0).
	BestDesign []DesignPoint `json:"best_design,omitempty"`
	Models     []icl.Curve   `json:"models"`
}

// GaussianResult is the Gaussian-prior study (spec §6 item 1).
type GaussianResult struct {
	Theory *meanfield.GaussianCurves `json:"theory"`
	Models []icl.Curve               `json:"models"`
}

// Check is one statement about the run with its measured value.
type Check struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Want  string  `json:"want"`
	Pass  bool    `json:"pass"`
}

// String is the study's report: each row's test MSE against M, the scorecard claims (ours and the rule; the
// scorecard adds the papers' numbers and the verdicts), then every check with its measured value.
func (r *Result) String() string {
	var b strings.Builder
	table := func(prior string, models []icl.Curve) {
		for i := range models {
			c := &models[i]
			fmt.Fprintf(&b, "%s prior, %s: test MSE", prior, rowName(c))
			for j, m := range c.M {
				fmt.Fprintf(&b, "  M=%d %.4g ± %.2g", m, c.MSE[j], c.StdErr[j])
			}
			fmt.Fprintf(&b, " (%d seeds)\n", len(c.PerSeed[0]))
		}
	}
	if r.Tree != nil {
		table("tree", r.Tree.Models)
		for _, d := range r.Tree.BestDesign {
			fmt.Fprintf(&b, "tree prior, best non-adaptive level design: M=%d %.4g ± %.2g\n", d.M, d.MSE.Mean,
				d.MSE.StdErr)
		}
	}
	if r.Gaussian != nil {
		table("gaussian", r.Gaussian.Models)
	}
	for _, c := range Claims(r) {
		ours := c.Ours.String()
		if c.Untestable != "" {
			ours = "not testable: " + c.Untestable
		}
		fmt.Fprintf(&b, "%s: %s [%s]\n", c.Claim, ours, c.Rule.Text())
	}
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "%-5v %-70s %8.4g  want %s\n", c.Pass, c.Name, c.Value, c.Want)
	}
	return b.String()
}
