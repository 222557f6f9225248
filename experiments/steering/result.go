package steering

import (
	"fmt"
	"strings"

	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/workbench/run"
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
