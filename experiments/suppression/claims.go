package suppression

import (
	"fmt"

	"github.com/protolab/protolab/workbench/report"
)

// Claim ids of docs/spec/papers.md that the study's scorecard rows compare with.
const (
	// PaperCut is the paper's relative cut of the concept score under suppression (0.668 → 0.154).
	PaperCut = "prism_suppress_cut"
	// PaperQuality is the paper's "no measurable loss in generation quality" (words only).
	PaperQuality = "prism_suppress_quality"
)

// MinSeeds is the number of training seeds a claim needs.
const MinSeeds = 3

// QualityBound is the largest rise of other-text perplexity, in percent, that the quality claim accepts as "no
// measurable loss": the quality target the suppression recipe was chosen against, fixed before the protocol ran.
const QualityBound = 1.0

// CutTolerance is the relative tolerance of the cut claim: our concept, scorer and scale differ from the paper's
// (a topic of the synthetic corpus scored by keyword rate, against NSFW scored by an LLM judge at K = 16,384), so a
// cut within 10% of the paper's counts as one of the same size.
const CutTolerance = 0.1

// Claims returns the scorecard rows of the suppression claims, computed from the stored result r only: for each
// model label (the recipe's model and the spec-range model) the zero-mode cut of the concept's keyword rate and the
// change of other-text perplexity, mean ± s.e. over training seeds. With r nil every claim is returned with Ours
// empty. A claim is untestable when r has fewer than MinSeeds seeds or lacks the model.
func Claims(r *Result) []report.Claim {
	s := Small().Settings()
	if r != nil {
		s = r.Config
	}
	method := fmt.Sprintf("Ω by spec §10's rule %q (≥ %.0f%% of the top-%d contexts hit a keyword), %s=%s; "+
		"zero mode (r_t kept); keyword rate of %d generations per mode from prompts of fresh documents, perplexity on "+
		"fresh documents without the concept; mean ± s.e. over training seeds; evaluation seeds used by no choice",
		s.Rule, 100*s.MinHitRate, s.TopContexts, s.Concept, s.Value, s.Samples)
	var out []report.Claim
	for _, label := range []string{ModelRecipe, ModelSpecRange} {
		what := "the suppression model (K = 64·D, outside spec §12's range)"
		if label == ModelSpecRange {
			what = "the spec-range model (K = 16·D)"
		}
		cut := report.Claim{ID: PaperCut, Method: method,
			Claim: "suppressing a concept's prototypes cuts the concept in generations, on " + what,
			Rule: report.Rule{Kind: report.RuleWithin, Tol: CutTolerance, Test: "cut in %; a cut within 10% " +
				"(relative) of the paper's counts as the same size, since concept, scorer and scale differ"}}
		ppl := report.Claim{ID: PaperQuality, Method: method,
			Claim: "suppression costs no measurable quality: other-text perplexity barely changes, on " + what,
			Rule: report.Rule{Kind: report.RuleAtMost, Bound: QualityBound, HasBound: true,
				Test: "rise of the perplexity of validation text without the concept, in %"}}
		if r != nil {
			sum := r.Summary(label)
			switch {
			case sum == nil:
				cut.Untestable = "the result has no " + label + " model (spec_range_k = 0)"
			case len(sum.Seeds) < MinSeeds:
				cut.Untestable = fmt.Sprintf("needs ≥ %d training seeds, the result has %d", MinSeeds, len(sum.Seeds))
			default:
				z := sum.Mode(ModeZero)
				cut.Ours = report.Estimate{Value: 100 * z.Reduction.Mean, SE: 100 * z.Reduction.SE,
					Seeds: z.Reduction.N, Unit: "%"}
				ppl.Ours = report.Estimate{Value: 100 * z.OtherChange.Mean, SE: 100 * z.OtherChange.SE,
					Seeds: z.OtherChange.N, Unit: "%"}
			}
			ppl.Untestable = cut.Untestable
		}
		out = append(out, cut, ppl)
	}
	return out
}
