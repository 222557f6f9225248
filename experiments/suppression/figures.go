package suppression

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/workbench/plot"
)

// RateChart is the suppression figure (docs/spec/prism.md §10): per mode (none, zero, mask) and model, the concept's
// share of generated words and the fraction of samples that mention it (means over training seeds); the subtitle
// gives |Ω| and the perplexity change on text without the concept.
func RateChart(res *Result) *charts.Bar {
	var groups []plot.BarGroup
	sub := fmt.Sprintf("%s=%s;", res.Config.Concept, res.Config.Value)
	for _, s := range res.Summaries {
		words := plot.BarGroup{Name: "keyword share of words, " + s.Label}
		samples := plot.BarGroup{Name: "samples with a keyword, " + s.Label}
		sub += fmt.Sprintf(" %s (K = %d, %d seeds): |Ω| = %.1f, other-text perplexity", s.Label, s.K, len(s.Seeds),
			s.Omega.Mean)
		for _, md := range s.Modes {
			words.Values = append(words.Values, md.ConceptRate.Mean)
			samples.Values = append(samples.Values, md.AnyRate.Mean)
			if md.Mode != ModeNone {
				sub += fmt.Sprintf(" %s %+.2f%%", md.Mode, 100*md.OtherChange.Mean)
			}
		}
		sub += ";"
		groups = append(groups, words, samples)
	}
	return plot.Bars("Concept suppression: keyword rate of generations", Modes, groups,
		plot.AxisNames("suppression", "rate"), plot.Subtitle(sub[:len(sub)-1]))
}

// PerplexityChart shows, per mode and model (means over training seeds), the perplexity on validation text without
// the concept (which suppression should leave alone), on text with it, and of the generations under the
// unsuppressed model.
func PerplexityChart(res *Result) *charts.Bar {
	var groups []plot.BarGroup
	for _, s := range res.Summaries {
		other := plot.BarGroup{Name: "text without the concept, " + s.Label}
		concept := plot.BarGroup{Name: "text with the concept, " + s.Label}
		judge := plot.BarGroup{Name: "generations (unsuppressed judge), " + s.Label}
		for _, md := range s.Modes {
			other.Values = append(other.Values, md.OtherPerplexity.Mean)
			concept.Values = append(concept.Values, md.ConceptPerplexity.Mean)
			judge.Values = append(judge.Values, md.JudgePerplexity.Mean)
		}
		groups = append(groups, other, concept, judge)
	}
	return plot.Bars("Concept suppression: perplexity", Modes, groups, plot.AxisNames("suppression", "perplexity"))
}

// TradeoffChart places each result (e.g. one per rule or min_hit_rate) as one point per suppressing mode and model:
// the perplexity change on text without the concept (%) against the cut of the concept's rate in generations (%),
// means over training seeds. The spec §10 goal is the top-left corner; the labels give rule, threshold and |Ω|.
func TradeoffChart(results []*Result) *charts.Scatter {
	var groups []plot.Points
	for _, mode := range []string{ModeZero, ModeMask} {
		g := plot.Points{Name: mode}
		for _, r := range results {
			for _, s := range r.Summaries {
				md := s.Mode(mode)
				if md == nil {
					continue
				}
				g.X = append(g.X, 100*md.OtherChange.Mean)
				g.Y = append(g.Y, 100*md.Reduction.Mean)
				g.Labels = append(g.Labels, fmt.Sprintf("%s ≥ %.2f, %s, |Ω| = %.1f", r.Config.Rule,
					r.Config.MinHitRate, s.Label, s.Omega.Mean))
			}
		}
		groups = append(groups, g)
	}
	return plot.Scatter("Concept suppression: cut in generations vs perplexity on other text", groups,
		plot.AxisNames("perplexity change on other text (%)", "cut of the concept rate (%)"))
}

// Figures are the figures notebooks/20_prism.ipynb shows from res, named for plot.ExportFigures: the concept's
// rate in generations and the perplexity change under suppression. (The selection rules' trade-off needs several
// results: TradeoffChart.)
func Figures(res *Result) []plot.Figure {
	return []plot.Figure{
		{Name: "suppression_rate", Chart: RateChart(res)},
		{Name: "suppression_perplexity", Chart: PerplexityChart(res)},
	}
}
