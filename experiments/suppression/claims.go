package suppression

import (
	"fmt"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/lmdata"
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

// claimCorpora are the corpora whose rows the scorecard shows, in order: the synthetic corpus's rows keep protocol
// v1's claim text and method; the Brown corpus's rows (protocol v2, docs/PROTOCOL.md) are new rows with the same
// paper ids, the corpus named in their claim and method.
var claimCorpora = []struct{ source, label string }{{lmdata.SourceSynthetic, ""}, {lmdata.SourceBrown, "Brown"}}

// Claims returns the scorecard rows of the suppression claims, computed from the stored result r only: per corpus
// of claimCorpora and model label (the recipe's model and the spec-range model) the zero-mode cut of the concept's
// keyword rate and the change of other-text perplexity, mean ± s.e. over training seeds. With r nil every claim is
// returned with Ours empty. A claim is untestable when r has no run on its corpus, fewer than MinSeeds seeds or
// lacks the model; the quality claim also when the selection chose no prototype on any seed (nothing was suppressed,
// so no cost of suppression was measured; the cut claim then reports the cut of 0). The rules are the same on every
// corpus.
func Claims(r *Result) []report.Claim {
	s := Small().Settings()
	if r != nil {
		s = r.Config
	}
	var out []report.Claim
	for _, cc := range claimCorpora {
		var c *CorpusResult
		missing := ""
		if r != nil {
			if c = r.Corpus(cc.source); c == nil {
				missing = fmt.Sprintf("this result has no run on the %s corpus (`protolab run %s --preset small` "+
					"runs the study on the synthetic and the Brown corpus)", cc.source, Study)
			}
		}
		out = append(out, corpusClaims(r != nil, c, s, cc.source, cc.label, missing)...)
	}
	return out
}

// corpusClaims returns the rows of one corpus from its result c: Ours empty when judged is false (no result), all
// untestable with the reason missing when the result has no run on the corpus. label ("" or the corpus's name)
// prefixes each claim and method.
func corpusClaims(judged bool, c *CorpusResult, s Settings, source, label, missing string) []report.Claim {
	method := fmt.Sprintf("Ω by spec §10's rule %q (≥ %.0f%% of the top-%d contexts hit a keyword), %s=%s; "+
		"zero mode (r_t kept); keyword rate of %d generations per mode from prompts of fresh documents, perplexity on "+
		"fresh documents without the concept; mean ± s.e. over training seeds; evaluation seeds used by no choice",
		s.Rule, 100*s.MinHitRate, s.TopContexts, s.Concept, s.Value, s.Samples)
	if isBrown(source) {
		method = fmt.Sprintf("Brown corpus; Ω by spec §10's rule %q (≥ %.0f%% of the top-%d contexts hit a keyword), "+
			"the concept the words of %s (by each word's most frequent noun sense); zero mode (r_t kept); keyword "+
			"rate of %d generations per mode from prompts of the first %d words of keyword-free sentences of the "+
			"Brown %s, perplexity on its sequences without the concept; mean ± s.e. over training seeds; evaluation "+
			"seeds used by no choice", s.Rule, 100*s.MinHitRate, s.TopContexts, s.ConceptOn(source), s.Samples,
			s.PromptWords, brownDocsText(s.BrownDocs, s.TextSeed))
	}
	var out []report.Claim
	for _, lab := range []string{ModelRecipe, ModelSpecRange} {
		what := "the suppression model (K = 64·D, outside spec §12's range)"
		if lab == ModelSpecRange {
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
		if judged {
			var sum *Summary
			if c != nil {
				sum = c.Summary(lab)
			}
			switch {
			case missing != "":
				cut.Untestable = missing
			case sum == nil:
				cut.Untestable = "the result has no " + lab + " model (spec_range_k = 0)"
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
			if cut.Untestable == "" && sum.Omega.Mean == 0 {
				// The cut of an empty Ω is a measured failure of the selection (0%); its cost is no measurement.
				ppl.Untestable = "the keyword rule selected no prototype on any training seed (|Ω| = 0), so " +
					"nothing was suppressed and suppression's cost cannot be measured; the cut row reports the miss"
			}
		}
		if label != "" {
			cut.Claim, ppl.Claim = label+" corpus: "+cut.Claim, label+" corpus: "+ppl.Claim
		}
		out = append(out, cut, ppl)
	}
	return out
}

// brownDocsText names the Brown documents an evaluation seed reads: the first n of the test split (odd) or of the
// held-out split (even).
func brownDocsText(n int, seed uint64) string {
	split := "test split"
	if lm.EvalSplitOf(seed) == brown.Heldout {
		split = "held-out split"
	}
	return fmt.Sprintf("%s's first %d documents (seed %d)", split, n, seed)
}
