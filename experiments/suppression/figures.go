package suppression

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/workbench/plot"
)

// RateChart is the suppression figure (docs/spec/prism.md §10) of the first corpus: per mode (none, zero, mask) and
// model, the concept's share of generated words and the fraction of samples that mention it (means over training
// seeds); the subtitle gives |Ω| and the perplexity change on text without the concept. CorpusRateChart draws it
// for another corpus.
func RateChart(res *Result) *charts.Bar { return CorpusRateChart(res, &res.CorpusResult) }

// CorpusRateChart is RateChart of c, the part of res on one corpus; the title names the corpus unless it is the
// synthetic one.
func CorpusRateChart(res *Result, c *CorpusResult) *charts.Bar {
	var groups []plot.BarGroup
	sub := conceptOf(res, c) + ";"
	for _, s := range c.Summaries {
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
	return plot.Bars("Concept suppression: keyword rate of generations"+corpusTitle(c), Modes, groups,
		plot.AxisNames("suppression", "rate"), plot.Subtitle(sub[:len(sub)-1]))
}

// PerplexityChart shows, for the first corpus, per mode and model (means over training seeds), the perplexity on
// validation text without the concept (which suppression should leave alone), on text with it, and of the
// generations under the unsuppressed model. CorpusPerplexityChart draws it for another corpus.
func PerplexityChart(res *Result) *charts.Bar { return CorpusPerplexityChart(&res.CorpusResult) }

// CorpusPerplexityChart is PerplexityChart of one corpus's result c; the title names the corpus unless it is the
// synthetic one.
func CorpusPerplexityChart(c *CorpusResult) *charts.Bar {
	var groups []plot.BarGroup
	for _, s := range c.Summaries {
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
	return plot.Bars("Concept suppression: perplexity"+corpusTitle(c), Modes, groups,
		plot.AxisNames("suppression", "perplexity"))
}

// conceptOf names the concept of c: its Concept, or the settings' concept=value for a result stored before v2.
func conceptOf(res *Result, c *CorpusResult) string {
	if c.Concept != "" {
		return c.Concept
	}
	return res.Config.Concept + "=" + res.Config.Value
}

// corpusTitle is "" for the synthetic corpus and " (<corpus> corpus)" for another.
func corpusTitle(c *CorpusResult) string {
	if isSynthetic(c.CorpusName()) {
		return ""
	}
	return " (" + c.CorpusName() + " corpus)"
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
// rate in generations and the perplexity change under suppression on the first corpus, then the same for every
// further corpus (named "_<corpus>"). (The selection rules' trade-off needs several results: TradeoffChart.)
func Figures(res *Result) []plot.Figure {
	figs := []plot.Figure{
		{Name: "suppression_rate", Chart: RateChart(res)},
		{Name: "suppression_perplexity", Chart: PerplexityChart(res)},
	}
	for i := range res.Others {
		c := &res.Others[i]
		suffix := "_" + plot.NamePart(c.CorpusName())
		figs = append(figs, plot.Figure{Name: "suppression_rate" + suffix, Chart: CorpusRateChart(res, c)},
			plot.Figure{Name: "suppression_perplexity" + suffix, Chart: CorpusPerplexityChart(c)})
	}
	return figs
}
