package suppression

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/workbench/plot"
)

// RateChart is the suppression figure (docs/spec/prism.md §10): per mode (none, zero, mask), the concept's share of
// generated words and the fraction of samples that mention it; the subtitle gives |Ω| and the perplexity change on
// text without the concept.
func RateChart(res *Result) *charts.Bar {
	var cats []string
	var words, samples []float64
	sub := fmt.Sprintf("%s=%s, |Ω| = %d prototypes; perplexity on other text:", res.Config.Concept, res.Config.Value,
		len(res.Omega))
	for _, md := range res.Modes {
		cats = append(cats, md.Mode)
		words = append(words, md.ConceptRate)
		samples = append(samples, md.AnyRate)
		if md.Mode != ModeNone {
			sub += fmt.Sprintf(" %s %+.2f%%,", md.Mode, 100*md.OtherChange)
		}
	}
	return plot.Bars("Concept suppression: keyword rate of generations", cats, []plot.BarGroup{
		{Name: "keyword share of words", Values: words},
		{Name: "samples with a keyword", Values: samples},
	}, plot.AxisNames("suppression", "rate"), plot.Subtitle(sub[:len(sub)-1]))
}

// PerplexityChart shows, per mode, the perplexity on validation text without the concept (which suppression should
// leave alone), on text with it, and of the generations under the unsuppressed model.
func PerplexityChart(res *Result) *charts.Bar {
	var cats []string
	var other, concept, judge []float64
	for _, md := range res.Modes {
		cats = append(cats, md.Mode)
		other = append(other, md.OtherPerplexity)
		concept = append(concept, md.ConceptPerplexity)
		judge = append(judge, md.JudgePerplexity)
	}
	return plot.Bars("Concept suppression: perplexity", cats, []plot.BarGroup{
		{Name: "text without the concept", Values: other},
		{Name: "text with the concept", Values: concept},
		{Name: "generations (unsuppressed judge)", Values: judge},
	}, plot.AxisNames("suppression", "perplexity"), plot.Subtitle(res.Run))
}

// TradeoffChart places each result (e.g. one per rule or min_hit_rate) as one point per suppressing mode: the
// perplexity change on text without the concept (%) against the cut of the concept's rate in generations (%). The
// spec §10 goal is the top-left corner; the labels give rule, threshold and |Ω|.
func TradeoffChart(results []*Result) *charts.Scatter {
	var groups []plot.Points
	for _, mode := range []string{ModeZero, ModeMask} {
		g := plot.Points{Name: mode}
		for _, r := range results {
			md := r.Mode(mode)
			if md == nil {
				continue
			}
			g.X = append(g.X, 100*md.OtherChange)
			g.Y = append(g.Y, 100*md.Reduction)
			g.Labels = append(g.Labels, fmt.Sprintf("%s ≥ %.2f, |Ω| = %d", r.Config.Rule, r.Config.MinHitRate,
				len(r.Omega)))
		}
		groups = append(groups, g)
	}
	return plot.Scatter("Concept suppression: cut in generations vs perplexity on other text", groups,
		plot.AxisNames("perplexity change on other text (%)", "cut of the concept rate (%)"))
}
