package interp

import (
	"fmt"
	"math"
	"strings"

	"github.com/protolab/protolab/docs"
	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/report"
	"github.com/protolab/protolab/workbench/stats"
)

// The claims' statistics (doc.go, "Claims"): at least MinClaimSeeds training seeds, and 95% percentile bootstrap
// intervals over units (stats.MeanCI) from ciReps resamples with a fixed seed.
const (
	MinClaimSeeds = 3
	ciLevel       = 0.95
	ciReps        = 2000
	ciSeed        = 1
)

// ClaimSource is the corpus of the claims' first rows: the synthetic concept corpus, whose ground-truth labels name
// the units and whose marked words are the intervention targets.
const ClaimSource = lmdata.SourceSynthetic

// ClaimSources are the corpora the claims read, one set of rows each, in scorecard order: the synthetic corpus
// (protocol v1's rows), then the Brown corpus (protocol v2's new rows: the words' WordNet supersenses name the units
// and are the intervention targets).
var ClaimSources = []string{ClaimSource, lmdata.SourceBrown}

// claimCorpus says how the rows of a claimed corpus name it: the prefix of its claims and, in their methods, the
// corpus, its labels and its evaluation text.
type claimCorpus struct {
	prefix, corpus, labels, evalText string
}

// claimCorpusOf returns how the rows of corpus source name it.
func claimCorpusOf(source string) claimCorpus {
	if source == lmdata.SourceBrown {
		return claimCorpus{prefix: "Brown corpus: ", corpus: "the Brown corpus",
			labels:   "the WordNet supersenses of each word (every supersense WordNet lists for it)",
			evalText: "the Brown test split"}
	}
	return claimCorpus{corpus: "the synthetic corpus", labels: "ground-truth labels",
		evalText: "fresh evaluation documents"}
}

// KindStats summarises one unit kind of one corpus over every training seed (doc.go, "Claims"): the units of all
// seeds pooled.
type KindStats struct {
	Kind  string
	Seeds int // training seeds whose result scored this kind
	Units int // units over all seeds
	// Named counts the units named with a concept label (Score.Named, label not naming.NoneLabel).
	Named int
	// D is the mean disentanglement over the Named units with its 95% bootstrap interval [DLo, DHi] over units;
	// NaN when no unit is named.
	D, DLo, DHi float64
	// None is the share of units whose label is naming.NoneLabel (their top tokens are mostly function words and
	// punctuation), with its 95% bootstrap interval [NoneLo, NoneHi]; NaN when there is no unit.
	None, NoneLo, NoneHi float64
}

// PooledKindStats returns the KindStats of a kind on the corpus source of r, pooling the units of every seed.
func PooledKindStats(r *Result, source, kind string) KindStats {
	ks := KindStats{Kind: kind}
	var d, none []float64
	for _, c := range r.Runs(source) {
		found := false
		for _, u := range c.Units {
			if u.Kind != kind {
				continue
			}
			found = true
			ks.Units++
			isNone := 0.0
			if u.Score.Label == naming.NoneLabel {
				isNone = 1
			}
			none = append(none, isNone)
			if u.Score.Named && u.Score.Label != naming.NoneLabel {
				ks.Named++
				d = append(d, u.Score.Disentanglement)
			}
		}
		if found {
			ks.Seeds++
		}
	}
	ks.D, ks.DLo, ks.DHi = stats.MeanCI(d, ciLevel, ciReps, ciSeed)
	ks.None, ks.NoneLo, ks.NoneHi = stats.MeanCI(none, ciLevel, ciReps, ciSeed)
	return ks
}

// Above reports whether the interval of k's D lies entirely above that of o (both defined).
func (k KindStats) Above(o KindStats) bool { return k.Named > 0 && o.Named > 0 && k.DLo > o.DHi }

// String is "D 0.810 [0.750, 0.860] over 40/96 named, none 0.10 [0.05, 0.16]".
func (k KindStats) String() string {
	switch {
	case k.Units == 0:
		return "no units"
	case k.Named == 0:
		return fmt.Sprintf("none of %d units named with a concept label, none %.2f [%.2f, %.2f]", k.Units, k.None,
			k.NoneLo, k.NoneHi)
	}
	return fmt.Sprintf("D %.3f [%.3f, %.3f] over %d/%d named, none %.2f [%.2f, %.2f]", k.D, k.DLo, k.DHi, k.Named,
		k.Units, k.None, k.NoneLo, k.NoneHi)
}

// estimate is the report.Estimate of k's D.
func (k KindStats) estimate() report.Estimate {
	return report.Estimate{Value: k.D, Lo: k.DLo, Hi: k.DHi, Seeds: k.Seeds}
}

// Claims returns the scorecard rows of the paper claims this study tests (docs/spec/protot.md §7.3, §7.4, §8),
// computed from the stored result r only: the masking row and the disentanglement rows of each corpus of
// ClaimSources, the Brown rows with the same ids as the synthetic ones and "Brown" in their claims and methods. With
// r nil every claim comes back with its rule and no value.
func Claims(r *Result) []report.Claim {
	var out []report.Claim
	for _, source := range ClaimSources {
		out = append(out, maskingClaim(r, source))
		out = append(out, disentanglementClaims(r, source)...)
	}
	if r != nil && len(r.Departures) > 0 {
		for i := range out {
			out[i].Method += "; departs from the spec: " + strings.Join(r.Departures, "; ")
		}
	}
	return out
}

// seedsShort returns the reason a result of n training seeds cannot support a claim, or "".
func seedsShort(n int) string {
	if n >= MinClaimSeeds {
		return ""
	}
	return fmt.Sprintf("%d training seed(s); a claim needs at least %d (the Small preset's protocol)", n,
		MinClaimSeeds)
}

// maskingClaim is the write-mask effect of spec §7.4 against the paper's effect on "women" (doc.go, "Claims"), on
// corpus source.
func maskingClaim(r *Result, source string) report.Claim {
	cc := claimCorpusOf(source)
	c := report.Claim{ID: "protot_writemask_female_women",
		Claim: cc.prefix + "write-masking one prototype lowers the probability of its target word (paper: the " +
			"\"female\" prototype on \"women\") while perplexity moves by less than 1%",
		Method: "ProtoT of the model pair on the synthetic corpus; per training seed, the (target, prototype) write " +
			"mask with the most negative ΔProb among masks with |ΔPPL| < intervene.max_ppl_change, both chosen on the " +
			"calibration split; its ΔProb (%, spec §7.4) on fresh evaluation documents, 0 where its held-out |ΔPPL| " +
			"breaks the bound; mean ± s.e. over seeds",
		Rule: report.Rule{Kind: report.RuleAtMost, Test: "ΔProb in %, more negative is a stronger effect"}}
	if source == lmdata.SourceBrown {
		c.Method = "ProtoT of the model pair on the Brown corpus, the targets " + cc.labels + " (a target's words are " +
			"those WordNet lists under it); per training seed, the (target, prototype) write mask with the most " +
			"negative ΔProb among masks with |ΔPPL| < intervene.max_ppl_change, both chosen on the calibration split " +
			"(the first half of the Brown validation split); its ΔProb (%, spec §7.4) on " + cc.evalText + ", 0 where " +
			"its held-out |ΔPPL| breaks the bound; mean ± s.e. over seeds"
	}
	if r == nil {
		return c
	}
	runs := r.Runs(source)
	var vals []float64
	var picks []string
	for _, cr := range runs {
		if cr.Intervene == nil {
			continue
		}
		v, e := MaskingEffect(cr.Intervene)
		vals = append(vals, 100*v)
		if e != nil {
			picks = append(picks, fmt.Sprintf("seed %d: %s on %s %+.1f%% (ΔPPL %+.2f%%)", cr.Seed, e.Selective,
				e.Target, 100*e.SelectiveProb, 100*e.SelectivePPL))
		} else {
			picks = append(picks, fmt.Sprintf("seed %d: no mask within the bound", cr.Seed))
		}
	}
	if len(vals) == 0 {
		c.Ours.Value = math.NaN()
		c.Untestable = "the result has no interventions on the " + source + " corpus"
		return c
	}
	m, se := stats.MeanSE(vals)
	if math.IsNaN(se) {
		se = 0
	}
	c.Ours = report.Estimate{Value: m, SE: se, Seeds: len(vals), Unit: "%"}
	c.Rule.Test += "; chosen masks: " + strings.Join(picks, "; ")
	c.Untestable = seedsShort(len(vals))
	return c
}

// disentanglementClaims compares the disentanglement of ProtoT prototypes (by π) with LLaMA heads and SAE features
// (spec §7.3, §8) on corpus source: one row for the paper's ranking (prototypes best) and one per compared kind.
func disentanglementClaims(r *Result, source string) []report.Claim {
	cc := claimCorpusOf(source)
	method := "D = e_ℓ*/Σ_ℓ max(e_ℓ, 0) ∈ [0, 1] against ground-truth labels (workbench/naming; the paper's is a " +
		"1–10 LLM-judge score, so only the order is compared), mean over the units named with a concept label, " +
		"pooled over the training seeds, 95% bootstrap interval over units; the model pair on the synthetic corpus, " +
		"every unit scored on fresh evaluation documents; SAEs trained on training tokens, their features selected " +
		"on the selection split"
	if source == lmdata.SourceBrown {
		method = "D = e_ℓ*/Σ_ℓ max(e_ℓ, 0) ∈ [0, 1] against " + cc.labels + " (workbench/naming; the paper's is a " +
			"1–10 LLM-judge score, so only the order is compared), mean over the units named with a concept label, " +
			"pooled over the training seeds, 95% bootstrap interval over units; the model pair on " + cc.corpus +
			", every unit scored on " + cc.evalText + "; SAEs trained on training tokens, their features selected on " +
			"the selection split (the first half of the Brown validation split)"
	}
	compared := []struct{ kind, id, name string }{
		{pair.KindHeads, "protot_disent_heads", "LLaMA attention heads"},
		{pair.KindSAEVariance, "protot_disent_sae_var", "LLaMA SAE features (top variance)"},
		{pair.KindSAEFrequency, "protot_disent_sae_freq", "LLaMA SAE features (top frequency)"},
	}
	best := report.Claim{ID: "protot_disent_protot",
		Claim:  cc.prefix + "ProtoT prototypes (π) are the most disentangled unit kind: above LLaMA heads and SAE features",
		Method: method,
		Rule: report.Rule{Kind: report.RuleHolds, Test: "holds when the prototypes' interval lies above that of " +
			"heads, SAE (top variance) and SAE (top frequency)"}}
	out := []report.Claim{best}
	for _, k := range compared {
		out = append(out, report.Claim{ID: k.id,
			Claim:  cc.prefix + "ProtoT prototypes (π) are more disentangled than " + k.name,
			Method: method,
			Rule: report.Rule{Kind: report.RuleHolds, Test: "holds when the prototypes' interval lies above this " +
				"kind's (ours: this kind's D)"}})
	}
	if r == nil {
		return out
	}
	proto := PooledKindStats(r, source, pair.KindProtoPi)
	undefined := func(k KindStats, name string) string {
		switch {
		case k.Units == 0:
			return fmt.Sprintf("%s: the result has no such units on the %s corpus", name, source)
		case k.Named == 0:
			return fmt.Sprintf("%s: no unit is named with a concept label, so D over named units is undefined", name)
		}
		return ""
	}
	protoWhy := seedsShort(proto.Seeds)
	if proto.Seeds == 0 {
		protoWhy = fmt.Sprintf("the result has no units on the %s corpus", source)
	}
	if protoWhy == "" {
		protoWhy = undefined(proto, "ProtoT prototypes (π)")
	}
	b := &out[0]
	b.Ours, b.Untestable = proto.estimate(), protoWhy
	b.Rule.Holds = true
	details := []string{"prototypes " + proto.String()}
	for i, k := range compared {
		ks := PooledKindStats(r, source, k.kind)
		c := &out[i+1]
		c.Ours = ks.estimate()
		c.Rule.Holds = proto.Above(ks)
		c.Rule.Test += fmt.Sprintf("; prototypes %s; %s %s", proto, k.name, ks)
		if c.Untestable = protoWhy; c.Untestable == "" {
			c.Untestable = undefined(ks, k.name)
		}
		if c.Untestable != "" && b.Untestable == "" {
			b.Untestable = c.Untestable
		}
		b.Rule.Holds = b.Rule.Holds && c.Rule.Holds
		details = append(details, k.name+" "+ks.String())
	}
	b.Rule.Test += "; " + strings.Join(details, "; ")
	for i := range out {
		if math.IsNaN(out[i].Ours.Value) && out[i].Untestable == "" {
			out[i].Untestable = "no value"
		}
	}
	return out
}

// DisentanglementTable lists, per unit kind of the corpus, the protocol's disentanglement statistics pooled over
// the training seeds (PooledKindStats): units, units named with a concept label, mean D over those with its 95%
// bootstrap interval, and the share of units labelled "none" with its interval.
func DisentanglementTable(res *Result, source string) *plot.Table {
	runs := res.Runs(source)
	t := &plot.Table{Title: fmt.Sprintf("Disentanglement over named units, %d training seed(s) pooled (%s)",
		len(runs), source), Header: []string{"unit kind", "seeds", "units", "named (concept)", "D over named",
		"95% interval", "share labelled none", "95% interval"},
		Note: "D over the units named with a concept label; \"none\": the unit's top tokens mostly carry no concept " +
			"label (function words, punctuation); bootstrap intervals over units"}
	if len(runs) > 0 {
		t.Note += "; evaluation text: " + runs[0].EvalText
	}
	for _, kind := range pair.Kinds() {
		k := PooledKindStats(res, source, kind)
		if k.Units == 0 {
			continue
		}
		t.Rows = append(t.Rows, []string{pair.KindName(kind), fmt.Sprint(k.Seeds), fmt.Sprint(k.Units),
			fmt.Sprint(k.Named), fmt.Sprintf("%.3f", k.D), fmt.Sprintf("[%.3f, %.3f]", k.DLo, k.DHi),
			fmt.Sprintf("%.2f", k.None), fmt.Sprintf("[%.2f, %.2f]", k.NoneLo, k.NoneHi)})
	}
	return t
}

// ClaimsTable lists the study's scorecard rows (Claims) with the papers' numbers (docs/spec/papers.md) and the
// verdicts of their rules, as `protolab report` computes them.
func ClaimsTable(res *Result) *plot.Table {
	t := &plot.Table{Title: "Claims (scorecard rows)", Header: []string{"claim", "paper", "ours", "verdict", "rule"}}
	for _, c := range Claims(res) {
		var p report.Paper
		paper := "(in words)"
		if c.ID != "" {
			if n, err := docs.Paper(c.ID); err == nil {
				p = report.Paper{Value: n.Value, HasValue: n.HasValue(), Text: n.Text, Source: n.Source}
				if n.HasValue() {
					paper = strings.TrimSpace(n.Text + " " + n.Unit)
				}
			} else {
				paper = err.Error()
			}
		}
		verdict, why := report.Verdict(c, p)
		t.Rows = append(t.Rows, []string{c.Claim, paper, c.Ours.String(), verdict, why})
	}
	return t
}
