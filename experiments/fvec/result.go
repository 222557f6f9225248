package fvec

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/protolab/protolab/models/icl"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
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

// Scores are the MSEs of one row on one evaluation set against M, over seeds. Slices are indexed like M;
// PerSeed[i][s] is seed s at M[i].
type Scores struct {
	// MSE is the mean over seeds of E‖θ̂ − θ‖² on the evaluation set.
	MSE []float64 `json:"mse"`
	// StdErr combines the spread between seeds and the finite evaluation set: √(Var_s/S + se_eval²), where Var_s is
	// the sample variance of the per-seed MSEs (0 for one seed) and se_eval the standard error over contexts of the
	// seed-averaged per-context error.
	StdErr []float64 `json:"std_err"`
	// Best and Median are over seeds (spec §5 asks both: narrow deep models can stall).
	Best    []float64   `json:"best"`
	Median  []float64   `json:"median"`
	PerSeed [][]float64 `json:"per_seed"`
}

// Curve is one row of the study: a model kind (or the key-gain ablation) trained at every M of its sweep, over
// seeds, scored on the test set (the embedded Scores: the reported numbers) and on the held-out test set.
type Curve struct {
	// Name is the row: the kind, or AblationKeyGain.
	Name string `json:"name"`
	Kind string `json:"kind"`
	// KeyGain is model.key_gain of the row (0: none, the common recipe).
	KeyGain float64 `json:"key_gain,omitempty"`
	M       []int   `json:"m"`
	Scores
	// HeldOut are the scores on the held-out test set (held_out_seed), reported separately.
	HeldOut Scores `json:"held_out"`
	// ValMSE[i][s] is the final validation MSE of seed s at M[i], the only score choices are made on.
	ValMSE [][]float64 `json:"val_mse"`
	// Training[i][s] is the training record of seed s at M[i] (validation curve, plateau statistic).
	Training [][]icl.Training `json:"training"`
	// TrainSeconds is the training wall time per point, summed over seeds.
	TrainSeconds []float64 `json:"train_seconds"`
}

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
	Models     []Curve       `json:"models"`
}

// GaussianResult is the Gaussian-prior study (spec §6 item 1).
type GaussianResult struct {
	Theory *meanfield.GaussianCurves `json:"theory"`
	Models []Curve                   `json:"models"`
}

// Check is one statement about the run with its measured value.
type Check struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Want  string  `json:"want"`
	Pass  bool    `json:"pass"`
}

// aggregate turns the seeds' chains of one row into its curve.
func aggregate(r row, chains []icl.ChainResult) Curve {
	curve := Curve{Name: r.name, Kind: r.kind, KeyGain: r.keyGain, M: slices.Clone(r.ms)}
	for i := range r.ms {
		var test, held []icl.Score
		var val []float64
		var tr []icl.Training
		seconds := 0.0
		for _, ch := range chains {
			test, held = append(test, ch.Test[i]), append(held, ch.HeldOut[i])
			val = append(val, ch.Val[i])
			tr = append(tr, ch.Training[i])
			seconds += ch.Training[i].Seconds
		}
		curve.Scores.add(test)
		curve.HeldOut.add(held)
		curve.ValMSE = append(curve.ValMSE, val)
		curve.Training = append(curve.Training, tr)
		curve.TrainSeconds = append(curve.TrainSeconds, seconds)
	}
	return curve
}

// add appends one point (the seeds' scores on one evaluation set) to the scores.
func (sc *Scores) add(seeds []icl.Score) {
	S := float64(len(seeds))
	per := make([]float64, len(seeds))
	mean := make([]float64, len(seeds[0].PerContext)) // seed-averaged per-context errors
	for k, e := range seeds {
		per[k] = e.MSE
		for j, v := range e.PerContext {
			mean[j] += v / S
		}
	}
	_, seEval := stats.MeanSE(mean)
	mse, seSeed := stats.MeanSE(per)
	if len(per) < 2 {
		seSeed = 0
	}
	sc.MSE = append(sc.MSE, mse)
	sc.StdErr = append(sc.StdErr, math.Sqrt(seSeed*seSeed+seEval*seEval))
	sc.Best = append(sc.Best, slices.Min(per))
	sc.Median = append(sc.Median, stats.Median(per))
	sc.PerSeed = append(sc.PerSeed, per)
}

// String is the study's report: each row's test MSE against M, the scorecard claims (ours and the rule; the
// scorecard adds the papers' numbers and the verdicts), then every check with its measured value.
func (r *Result) String() string {
	var b strings.Builder
	table := func(prior string, models []Curve) {
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
