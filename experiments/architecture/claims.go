package architecture

import (
	"fmt"
	"math"

	"github.com/protolab/protolab/docs"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/report"
	"github.com/protolab/protolab/workbench/stats"
)

// The claims' rules, fixed here before any result was read.
const (
	// RatioTol is the relative tolerance of a perplexity-ratio claim: ours agrees with the paper's ratio when
	// |ours − paper| ≤ max(2·s.e., RatioTol·paper). 5% of the ratio is small beside the gaps the paper reports
	// between LLaMA and the other mixers, so "within" means the gap itself is reproduced, not only its sign.
	RatioTol = 0.05
	// TieTol is the relative difference below which two of the paper's perplexities are a tie, whose order the
	// ranking claim does not judge.
	TieTol = 0.01
	// MinSeeds is the number of training seeds a claim needs.
	MinSeeds = 3
)

// paperIDs are the docs/spec/papers.md ids of the paper's default-size perplexity of each mixer (§8).
var paperIDs = map[string]string{
	decoder.MixerAttention: "protot_ppl_llama",
	decoder.MixerMamba:     "protot_ppl_mamba",
	decoder.MixerDeltaNet:  "protot_ppl_deltanet",
	decoder.MixerProtoT:    "protot_ppl_protot",
}

// ratioIDs are the docs/spec/papers.md ids of the paper's perplexity ratio of each mixer to LLaMA (derived there from
// the perplexities of paperIDs), the paper's side of the ratio rows.
var ratioIDs = map[string]string{
	decoder.MixerMamba:    "protot_ppl_ratio_mamba",
	decoder.MixerDeltaNet: "protot_ppl_ratio_deltanet",
	decoder.MixerProtoT:   "protot_ppl_ratio_protot",
}

// claimSpec is one perplexity row: which comparison it reads and what it tests.
type claimSpec struct {
	source       string // the corpus of the comparison
	init, lrMode string
	mixer        string // the mixer of a ratio row (over attention); "" for the ranking row
	variant      string // the comparison's name in the claim text
}

// claimSpecs lists the rows in scorecard order. On the synthetic corpus: the three ratios and the ranking under the
// spec's initialisation with each mixer's searched learning rate, then the ProtoT ratio and the ranking under
// GPT-2's initialisation (protocol v1's variant), then the ProtoT ratio with one learning rate for every mixer
// (docs/spec/protot.md §3's recipe). On the Brown corpus (protocol v2, docs/PROTOCOL.md): the same rows but GPT-2's.
var claimSpecs = []claimSpec{
	{lmdata.SourceSynthetic, decoder.InitPyTorch, LRTuned, decoder.MixerProtoT, "spec init, searched lr"},
	{lmdata.SourceSynthetic, decoder.InitPyTorch, LRTuned, decoder.MixerMamba, "spec init, searched lr"},
	{lmdata.SourceSynthetic, decoder.InitPyTorch, LRTuned, decoder.MixerDeltaNet, "spec init, searched lr"},
	{lmdata.SourceSynthetic, decoder.InitPyTorch, LRTuned, "", "spec init, searched lr"},
	{lmdata.SourceSynthetic, decoder.InitGPT2, LRTuned, decoder.MixerProtoT, "GPT-2 init (our variant), searched lr"},
	{lmdata.SourceSynthetic, decoder.InitGPT2, LRTuned, "", "GPT-2 init (our variant), searched lr"},
	{lmdata.SourceSynthetic, decoder.InitPyTorch, LRShared, decoder.MixerProtoT, "spec init, one lr for all (spec §3)"},
	{lmdata.SourceBrown, decoder.InitPyTorch, LRTuned, decoder.MixerProtoT, "Brown, spec init, searched lr"},
	{lmdata.SourceBrown, decoder.InitPyTorch, LRTuned, decoder.MixerMamba, "Brown, spec init, searched lr"},
	{lmdata.SourceBrown, decoder.InitPyTorch, LRTuned, decoder.MixerDeltaNet, "Brown, spec init, searched lr"},
	{lmdata.SourceBrown, decoder.InitPyTorch, LRTuned, "", "Brown, spec init, searched lr"},
	{lmdata.SourceBrown, decoder.InitPyTorch, LRShared, decoder.MixerProtoT, "Brown, spec init, one lr for all (spec §3)"},
}

// Claims returns the scorecard rows of the perplexity comparison (docs/spec/protot.md §8, protocol §7.1) computed
// from a stored result only: for each row of claimSpecs, the ratio of a mixer's test perplexity to attention's
// (LLaMA's) against the paper's ratio of its two numbers, or the paper's ranking of the four mixers. Ours is the
// mean ± s.e. over seeds of the per-seed ratio (the two models of a seed share the data split and batch order).
// A row is untestable without its comparison on its corpus's test data, with fewer than MinSeeds seeds or with a
// diverged seed. With r nil every row is returned with Ours empty.
func Claims(r *Result) []report.Claim {
	var out []report.Claim
	for _, cs := range claimSpecs {
		var c report.Claim
		if cs.mixer == "" {
			c = rankingClaim(cs)
		} else {
			c = ratioClaim(cs)
		}
		if r != nil {
			fill(&c, cs, r)
		}
		out = append(out, c)
	}
	return out
}

// paperValue returns the paper's perplexity of mixer, from docs/spec/papers.md.
func paperValue(mixer string) (float64, error) {
	p, err := docs.Paper(paperIDs[mixer])
	if err != nil {
		return 0, err
	}
	return p.Value, nil
}

// ratioClaim is the row of cs's mixer over attention, with its rule stated and Ours empty.
func ratioClaim(cs claimSpec) report.Claim {
	test := fmt.Sprintf("holds when |ours − paper| ≤ max(2·s.e., %g·paper), paper = papers.md %s (%s/%s)", RatioTol,
		ratioIDs[cs.mixer], paperIDs[cs.mixer], paperIDs[decoder.MixerAttention])
	return report.Claim{ID: ratioIDs[cs.mixer],
		Claim: fmt.Sprintf("%s/LLaMA perplexity ratio at equal parameters (%s)", mixerName(cs.mixer), cs.variant),
		Rule:  report.Rule{Kind: report.RuleHolds, Test: test}}
}

// rankingClaim is the ranking row, with its rule stated and Ours empty.
func rankingClaim(cs claimSpec) report.Claim {
	return report.Claim{ID: "protot_ppl_ranking", Claim: fmt.Sprintf("perplexity ranking of LLaMA, Mamba, DeltaNet "+
		"and ProtoT at equal parameters follows the paper's (%s)", cs.variant),
		Rule: report.Rule{Kind: report.RuleHolds, Test: fmt.Sprintf("holds when every pair of mixers whose paper "+
			"perplexities (papers.md protot_ppl_*) differ by more than %g%% is in the paper's order, the mean "+
			"per-seed log ratio of test perplexities more than 2 s.e. from 0; ours: the pairs that are", 100*TieTol)}}
}

// mixerName is the paper's name of a mixer.
func mixerName(mixer string) string {
	switch mixer {
	case decoder.MixerAttention:
		return "LLaMA"
	case decoder.MixerProtoT:
		return "ProtoT"
	case decoder.MixerDeltaNet:
		return "DeltaNet"
	case decoder.MixerMamba:
		return "Mamba"
	}
	return mixer
}

// untestable marks c untestable with the reason.
func untestable(c *report.Claim, why string) {
	c.Ours = report.Estimate{Value: math.NaN()}
	c.Untestable = why
}

// fill computes ours for the row cs from r, or marks it untestable.
func fill(c *report.Claim, cs claimSpec, r *Result) {
	cmp := r.Find(cs.source, cs.init, cs.lrMode)
	if cmp == nil {
		untestable(c, fmt.Sprintf("this result has no comparison on the %s corpus with init %s and lr %s "+
			"(`protolab run architecture --preset small` runs the protocol)", cs.source, cs.init, cs.lrMode))
		return
	}
	c.Method = method(cmp, r)
	mixers := []string{cs.mixer}
	if cs.mixer == "" {
		mixers = []string{decoder.MixerMamba, decoder.MixerDeltaNet, decoder.MixerProtoT}
	}
	perSeed := map[string][]float64{}
	for _, m := range append([]string{decoder.MixerAttention}, mixers...) {
		s := cmp.Score(m)
		switch {
		case s == nil || s.Test == nil:
			untestable(c, fmt.Sprintf("no test perplexity of %s in this comparison", m))
			return
		case s.Diverged > 0:
			untestable(c, fmt.Sprintf("%d of %d seeds of %s diverged", s.Diverged, s.Diverged+s.Seeds, m))
			return
		case s.Seeds < MinSeeds:
			untestable(c, fmt.Sprintf("needs ≥ %d training seeds; this run has %d", MinSeeds, s.Seeds))
			return
		}
		perSeed[m] = s.Test.Perplexities
	}
	if cs.mixer != "" {
		fillRatio(c, perSeed[cs.mixer], perSeed[decoder.MixerAttention], cs.mixer)
		return
	}
	fillRanking(c, perSeed)
}

// fillRatio sets ours to the mean ± s.e. of the per-seed ratio num/den and judges it against the paper's ratio.
func fillRatio(c *report.Claim, num, den []float64, mixer string) {
	ratios := make([]float64, len(num))
	for i := range num {
		ratios[i] = num[i] / den[i]
	}
	m, se := stats.MeanSE(ratios)
	c.Ours = report.Estimate{Value: m, SE: se, Seeds: len(ratios), Unit: "× LLaMA's test perplexity"}
	p, err := docs.Paper(ratioIDs[mixer])
	if err != nil {
		untestable(c, "the paper's perplexity ratio is missing from docs/spec/papers.md")
		return
	}
	paper := p.Value
	c.Rule.Holds = math.Abs(m-paper) <= math.Max(report.Z*se, RatioTol*paper)
}

// fillRanking counts the pairs of mixers the paper separates (by more than TieTol) whose per-seed log ratio of test
// perplexities has the paper's sign with a mean more than 2 s.e. from 0; the rule holds when every such pair does.
func fillRanking(c *report.Claim, perSeed map[string][]float64) {
	order := []string{decoder.MixerAttention, decoder.MixerMamba, decoder.MixerDeltaNet, decoder.MixerProtoT}
	paper := map[string]float64{}
	for _, m := range order {
		v, err := paperValue(m)
		if err != nil {
			untestable(c, "the paper's perplexities are missing from docs/spec/papers.md")
			return
		}
		paper[m] = v
	}
	judged, agree := 0, 0
	for i, a := range order {
		for _, b := range order[i+1:] {
			pa, pb := paper[a], paper[b]
			if math.Abs(pa-pb) <= TieTol*math.Min(pa, pb) {
				continue // a tie in the paper
			}
			judged++
			logs := make([]float64, len(perSeed[a]))
			for k := range logs {
				logs[k] = math.Log(perSeed[a][k] / perSeed[b][k])
			}
			m, se := stats.MeanSE(logs)
			if math.Signbit(m) == math.Signbit(math.Log(pa/pb)) && math.Abs(m) > report.Z*se {
				agree++
			}
		}
	}
	c.Ours = report.Estimate{Value: float64(agree), Seeds: len(perSeed[decoder.MixerAttention]),
		Unit: fmt.Sprintf("of %d pairs in the paper's order", judged)}
	c.Rule.Holds = agree == judged
}

// method states how the comparison was measured.
func method(cmp *Comparison, r *Result) string {
	s := cmp.Scores[0]
	docs := "fresh synthetic documents"
	if cmp.Source == lmdata.SourceBrown {
		docs = "the Brown test split"
	}
	m := fmt.Sprintf("test perplexity on %s (%d tokens per model) no choice read; D=%d, equal non-embedding "+
		"parameters, %d steps (%d tokens), init %s", docs, testTokens(cmp), cmp.Width, cmp.Steps, s.Tokens, cmp.Init)
	if cmp.LRMode == LRTuned {
		m += ", each mixer's lr searched on the validation split"
		for _, t := range r.Tuning {
			if t.Init == cmp.Init && t.Source == cmp.Source {
				m += fmt.Sprintf(" over %v", t.LRs)
				break
			}
		}
		m += " (chosen:"
		for _, sc := range cmp.Scores {
			m += fmt.Sprintf(" %s %g", sc.Mixer, sc.LR)
			for _, t := range r.Tuning {
				if t.Init == cmp.Init && t.Source == cmp.Source && t.Mixer == sc.Mixer && t.AtEdge {
					m += " at the grid's edge"
				}
			}
		}
		m += ")"
	} else {
		m += fmt.Sprintf(", lr %g for every mixer", s.LR)
	}
	m += fmt.Sprintf("; validation-loss ranking settled over the last half of training: %v; paper: L6 D256, "+
		"FineWeb-Edu", cmp.Settled)
	return m
}

// testTokens is the number of test tokens each model of the comparison was scored on.
func testTokens(cmp *Comparison) int {
	for _, s := range cmp.Scores {
		if s.Test != nil {
			return s.Test.Tokens
		}
	}
	return 0
}
