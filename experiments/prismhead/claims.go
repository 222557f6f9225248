package prismhead

import (
	"fmt"
	"math"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/report"
)

// Paper-number ids of docs/spec/papers.md that the study's claims compare with.
const (
	idLossVsDense   = "prism_loss_vs_dense"
	idCoverage      = "prism_coverage_min"
	idLocalisation  = "prism_curvature_localisation"
	minClaimSeeds   = 3
	perplexityBound = 5 // percent: spec §3's acceptance, read on the perplexity (claim 2)
)

// claimCorpora are the corpora whose rows the scorecard shows, in order: the synthetic corpus's rows keep protocol
// v1's claim text; the Brown corpus's rows (protocol v2, docs/PROTOCOL.md) are new rows with the same paper ids and
// the corpus named in their claim and method.
var claimCorpora = []struct{ source, label string }{{lmdata.SourceSynthetic, ""}, {lmdata.SourceBrown, "Brown"}}

// Claims returns the scorecard rows of the claims this study tests (doc.go, "Claims"), one set per corpus of
// claimCorpora, each computed from that corpus's part of the stored result r alone; with r nil every claim is
// returned with Ours empty. A corpus the result has no run on makes its rows untestable. The rules are fixed here,
// before any result is read, and are the same on every corpus.
func Claims(r *Result) []report.Claim {
	var out []report.Claim
	for _, cc := range claimCorpora {
		var c *CorpusResult
		if r != nil {
			if c = r.Corpus(cc.source); c == nil {
				rows := corpusClaims(nil, cc.label)
				for i := range rows {
					rows[i].Untestable = fmt.Sprintf("this result has no run on the %s corpus (`protolab run %s "+
						"--preset small` runs the protocol on the synthetic and the Brown corpus)", cc.source, Study)
				}
				out = append(out, rows...)
				continue
			}
		}
		out = append(out, corpusClaims(c, cc.label)...)
	}
	return out
}

// corpusClaims returns the rows of one corpus from its result c (nil: Ours empty, no verdict), with label ("" or
// the corpus's name) in each claim and method.
func corpusClaims(c *CorpusResult, label string) []report.Claim {
	var s Summary
	var p Protocol
	if c != nil {
		s, p = Summarize(c.Replicates), c.Protocol
	}
	quality := "PRISM (λ1=λ2=spec default) vs the dense-head model of the same backbone, data and steps × batch, " +
		"each at its learning rate chosen on a validation split"
	if c != nil {
		quality = fmt.Sprintf("PRISM (λ1=%g, λ2=%g) vs the dense-head model of the same backbone, data and %d steps × "+
			"%d×%d tokens; lr %s; mean ± s.e. over training seeds %v, on %s", p.R1Weight, p.R2Weight, p.Steps,
			p.BatchSize, p.SeqLen, lrText(p), p.Seeds, evalText(p))
	}
	sweep := "one PRISM model per λ1 = λ2 of the sweep and per training seed; the trend is the mean over seeds of " +
		"the paired difference largest − smallest weight"
	if c != nil {
		sweep = fmt.Sprintf("one PRISM model per λ1 = λ2 ∈ %v and training seed %v, measured on %d tokens of %s; "+
			"ours: mean ± s.e. over seeds of the paired difference between the largest and the smallest weight",
			p.Sweep, p.Seeds, p.CurvatureTokens, evalText(p))
	}
	if label != "" {
		quality, sweep = label+" corpus; "+quality, label+" corpus; "+sweep
	}
	claims := []report.Claim{
		{ID: idLossVsDense, Claim: "PRISM validation loss within about 5% of the matched dense model",
			Ours: s.RelLoss.Estimate(100, "%"), Method: quality + "; ours: 100·(L_PRISM/L_dense − 1)",
			Rule: report.Rule{Kind: report.RuleAtMost}},
		{Claim: "perplexity cost of the prototype head within 5% of the matched dense model",
			Ours: s.RelPerplexity.Estimate(100, "%"), Method: quality + "; ours: 100·(PPL_PRISM/PPL_dense − 1)",
			Rule: report.Rule{Kind: report.RuleAtMost, Bound: perplexityBound, HasBound: true,
				Test: "spec §3's 5% acceptance read on the perplexity, which is stricter than on the loss"}},
		{ID: idCoverage, Claim: "coverage R̄1 (mean max-cosine of each prototype to a held-out token) ≥ 0.94",
			Ours: s.R1Bar.Estimate(1, ""), Method: quality + "; ours: R̄1 of spec §4",
			Rule: report.Rule{Kind: report.RuleAtLeast}},
		{ID: idCoverage, Claim: "coverage R2 (mean max-cosine of each held-out token to a prototype) ≥ 0.94",
			Ours: s.R2.Estimate(1, ""), Method: quality + "; ours: R2 of spec §4",
			Rule: report.Rule{Kind: report.RuleAtLeast}},
		{ID: idLocalisation, Claim: "larger λ1 = λ2 make the co-usage matrix C closer to diagonal (spec §5's " +
			"off-diagonal mass Σ_{i≠j}|C_ij| / Σ|C_ij| over the whole bank falls)",
			Ours: s.OffDiagonalTrend.Estimate(1, ""), Method: sweep,
			Rule: report.Rule{Kind: report.RuleHolds, Holds: falls(s.OffDiagonalTrend),
				Test: fmt.Sprintf("holds when the mean paired change of C's off-diagonal mass from the smallest to the "+
					"largest weight + %g·s.e. < 0", report.Z)}},
		{ID: idLocalisation, Claim: "larger λ1 = λ2 lower κ of the prototype blocks H_jj (exact Hessian, damping " +
			"held fixed across λ)",
			Ours: s.BlockCondTrend.Estimate(1, "log10"), Method: sweep + "; κ̃: median over the M most used " +
				"prototypes j of κ(H_jj + λI), λ = the spec §5 damping of the seed's smallest-weight model",
			Rule: report.Rule{Kind: report.RuleHolds, Holds: falls(s.BlockCondTrend),
				Test: fmt.Sprintf("holds when the mean paired change of log10 κ̃ from the smallest to the largest "+
					"weight + %g·s.e. < 0", report.Z)}},
	}
	for i := range claims {
		if label != "" {
			claims[i].Claim = label + " corpus: " + claims[i].Claim
		}
		if c != nil {
			if claims[i].Ours.Seeds == 0 { // measured on no seed (κ undefined on each): no value, not a 0
				claims[i].Ours.Value = math.NaN()
			}
			claims[i].Untestable = untestable(claims[i], s, p)
		}
	}
	return claims
}

// falls reports whether a paired change is negative beyond Z standard errors (with at least minClaimSeeds seeds).
func falls(t Stat) bool { return t.N >= minClaimSeeds && t.Mean+report.Z*t.SE < 0 }

// untestable returns why the stored result cannot test claim c, or "".
func untestable(c report.Claim, s Summary, p Protocol) string {
	switch {
	case s.Seeds < minClaimSeeds:
		return fmt.Sprintf("%d training seed(s): a claim needs ≥ %d (`protolab run %s --preset small`)", s.Seeds,
			minClaimSeeds, Study)
	case p.EvalDocs == 0:
		return "measured on the validation split the settings were chosen on; set eval.docs > 0 for fresh documents"
	case c.ID == idLocalisation && len(s.Sweep) < 2:
		return "the sweep has fewer than two clustering weights common to every seed"
	case c.Ours.Seeds < minClaimSeeds:
		return fmt.Sprintf("defined for %d of %d seeds only (κ needs a positive-definite damped matrix)",
			c.Ours.Seeds, s.Seeds)
	}
	return ""
}

func lrText(p Protocol) string {
	if len(p.LRs) == 0 {
		return fmt.Sprintf("%g for both, untuned", p.PrismLR)
	}
	return fmt.Sprintf("from %v on seed %d's validation split (dense %g, PRISM %g)", p.LRs, p.TuneSeed, p.DenseLR,
		p.PrismLR)
}

// evalText names the evaluation data of p: fresh synthetic documents, a Brown split, or the validation split.
func evalText(p Protocol) string {
	if p.EvalDocs == 0 {
		return "the validation split"
	}
	held := ""
	if p.HeldBack {
		held = ", the held-back set"
	}
	if isBrown(p.Source) {
		split := "test"
		if lm.EvalSplitOf(p.EvalSeed) == brown.Heldout {
			split = "held-out"
		}
		return fmt.Sprintf("the Brown %s split's first %d documents (seed %d%s)", split, p.EvalDocs, p.EvalSeed, held)
	}
	return fmt.Sprintf("%d fresh documents (seed %d%s)", p.EvalDocs, p.EvalSeed, held)
}
