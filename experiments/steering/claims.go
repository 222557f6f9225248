package steering

import (
	"fmt"

	"github.com/protolab/protolab/workbench/report"
)

// Claim ids of docs/spec/papers.md that the study's scorecard rows compare with.
const (
	// PaperGain is "about +3 points downstream" (the paper's benchmark tasks).
	PaperGain = "prism_steer_gain"
	// PaperGainMC4 is the prototype controllers' mean gain on four multiple-choice tasks.
	PaperGainMC4 = "prism_steer_gain_mc4"
	// PaperGainSAE is the SAE controller's mean gain on the same tasks.
	PaperGainSAE = "prism_steer_gain_sae"
)

// MinSeeds is the number of training seeds a claim needs.
const MinSeeds = 3

// Claims returns the scorecard rows of the controller claims, computed from the stored result r only: the prototype
// controller's average gain (it holds when its interval over training seeds lies above 0), the SAE controller's
// gain against the paper's, and the prototype controller against the SAE, same-state SAE and bias-only
// controllers (each holds when the interval of the paired difference lies above 0). Gains are in points. With r nil
// every claim is returned with Ours empty. A claim is untestable when r has fewer than MinSeeds models or lacks a
// controller it needs.
func Claims(r *Result) []report.Claim {
	s := Small().Settings()
	if r != nil {
		s = r.Config
	}
	method := fmt.Sprintf("spec §9 fit (L1 with β ∈ %v chosen on %.0f%% of the calibration part, %d Adam steps at "+
		"lr %g) on %v from fresh documents, %.0f/%.0f document split, %d split seeds per model; per model the "+
		"held-out gain averaged over tasks and splits; %.0f%% t-interval over training seeds", s.Betas, 100*s.Select,
		s.Steps, s.LR, s.Tasks, 100*(1-s.HeldOut), 100*s.HeldOut, len(s.Splits), 100*Level)
	above := func(what string) string {
		return fmt.Sprintf("holds when the %.0f%% interval of %s over training seeds lies above 0", 100*Level, what)
	}
	mc4 := report.Claim{ID: PaperGainMC4, Method: method,
		Claim: "a sparse prototype controller raises held-out multiple-choice accuracy (mean of the tasks)",
		Rule:  report.Rule{Kind: report.RuleHolds, Test: above("the gain")}}
	paper := report.Claim{ID: PaperGain, Method: method,
		Claim: "prototype controllers add about +3 points on the paper's downstream benchmarks",
		Rule:  report.Rule{Kind: report.RuleWithin}}
	sae := report.Claim{ID: PaperGainSAE, Method: method + "; SAE with F = K and k active features per token " +
		"trained on the dense model's final hidden states",
		Claim: "an SAE controller (spec §9: SAE on the dense model) gains little",
		Rule:  report.Rule{Kind: report.RuleWithin, Test: "the paper's number lies in our interval"}}
	vs := func(c, what string) report.Claim {
		return report.Claim{Method: method, Claim: "the prototype controller gains more than " + what,
			Rule: report.Rule{Kind: report.RuleHolds, Test: above("the prototype controller's gain minus the " + c +
				" controller's, paired by model,")}}
	}
	vsSAE := vs(ControllerSAE, "the SAE controller (paper: +2.72 vs +0.32)")
	vsSame := vs(ControllerSAEPrism, "an SAE controller on the same hidden states (our variant)")
	vsBias := vs(ControllerBias, "a sparse bias-only controller fitted alike (our control)")
	paper.Untestable = "the paper's benchmarks (ARC-E, ARC-C, OpenBookQA, PIQA) are not available offline; the " +
		"synthetic tasks test whether a gain exists (row " + PaperGainMC4 + "), not its size on those benchmarks"
	out := []*report.Claim{&mc4, &paper, &sae, &vsSAE, &vsSame, &vsBias}
	if r == nil {
		return deref(out)
	}
	need := func(c *report.Claim, controller string) *Summary {
		sum := r.Summary(controller)
		switch {
		case sum == nil:
			c.Untestable = fmt.Sprintf("the result has no %q controller", controller)
		case sum.Gain.N < MinSeeds:
			c.Untestable = fmt.Sprintf("needs ≥ %d training seeds, the result has %d", MinSeeds, sum.Gain.N)
		}
		return sum
	}
	if p := need(&mc4, ControllerPrototype); mc4.Untestable == "" {
		mc4.Ours, mc4.Rule.Holds = points(p.Gain), p.Gain.Lo > 0
		paper.Ours = mc4.Ours
	}
	if p := need(&sae, ControllerSAE); sae.Untestable == "" {
		sae.Ours = points(p.Gain)
	}
	for _, x := range []struct {
		c          *report.Claim
		controller string
	}{{&vsSAE, ControllerSAE}, {&vsSame, ControllerSAEPrism}, {&vsBias, ControllerBias}} {
		if need(x.c, ControllerPrototype); x.c.Untestable != "" {
			continue
		}
		if p := need(x.c, x.controller); x.c.Untestable == "" {
			x.c.Ours, x.c.Rule.Holds = points(p.VsPrototype), p.VsPrototype.Lo > 0
		}
	}
	return deref(out)
}

// points is an interval of accuracy fractions as an estimate in points.
func points(i Interval) report.Estimate {
	return report.Estimate{Value: 100 * i.Mean, SE: 100 * i.SE, Lo: 100 * i.Lo, Hi: 100 * i.Hi, Seeds: i.N,
		Unit: "points"}
}

func deref(cs []*report.Claim) []report.Claim {
	out := make([]report.Claim, len(cs))
	for i, c := range cs {
		out[i] = *c
	}
	return out
}
