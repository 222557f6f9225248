package robustness

import (
	"fmt"
	"math"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/plot"
)

// Metrics accepted by MetricBars (doc.go, "Measures").
const (
	MetricJS       = "js"
	MetricOverlap  = "overlap"
	MetricSpearman = "spearman"
	MetricTop1     = "top1"
)

// corpusOrEmpty returns the corpus result of source, or an empty one (so builders draw an empty chart).
func corpusOrEmpty(res *Result, source string) *CorpusResult {
	if c := res.Corpus(source); c != nil {
		return c
	}
	return &CorpusResult{Source: source}
}

// MetricBars compares ProtoT and LLaMA on one metric (MetricJS, MetricOverlap, MetricSpearman, MetricTop1) per
// perturbation kind: the mean over the pairs of the kind.
func MetricBars(res *Result, source, metric string) *charts.Bar {
	c := corpusOrEmpty(res, source)
	var groups []plot.BarGroup
	for _, m := range c.Comparisons {
		g := plot.BarGroup{Name: pair.MixerName(m.Mixer)}
		for _, k := range c.Kinds {
			v := math.NaN()
			if s := c.Stats(m.Mixer, k); s != nil {
				v = map[string]float64{MetricJS: s.JS.Mean, MetricOverlap: s.Overlap.Mean,
					MetricSpearman: s.Spearman.Mean, MetricTop1: s.Top1.Mean}[metric]
			}
			g.Values = append(g.Values, v)
		}
		groups = append(groups, g)
	}
	title := map[string]string{MetricJS: "JS divergence of next-token distributions (↓ robust)",
		MetricOverlap: "Top-k overlap (↑ robust)", MetricSpearman: "Spearman on the top-k union (↑ robust)",
		MetricTop1: "Top-1 agreement (↑ robust)"}[metric]
	return plot.Bars(fmt.Sprintf("%s (%s)", title, source), c.Kinds, groups, plot.AxisNames("perturbation", metric))
}

// RoutingChangeBars shows, per perturbation kind, the JS divergence of ProtoT's position-averaged π (and ρ) of
// each layer between original and perturbed prompts.
func RoutingChangeBars(res *Result, source string) *charts.Bar {
	c := corpusOrEmpty(res, source)
	var groups []plot.BarGroup
	for _, m := range c.Comparisons {
		if m.Mixer != decoder.MixerProtoT || len(m.ByKind) == 0 {
			continue
		}
		for l := range m.ByKind[0].RoutingJS {
			w, rd := plot.BarGroup{Name: fmt.Sprintf("layer %d π", l)}, plot.BarGroup{Name: fmt.Sprintf("layer %d ρ", l)}
			for _, s := range m.ByKind {
				w.Values = append(w.Values, s.RoutingJS[l].Mean)
				rd.Values = append(rd.Values, s.RoutingJSRead[l].Mean)
			}
			groups = append(groups, w, rd)
		}
	}
	return plot.Bars(fmt.Sprintf("Routing change under perturbation, ProtoT (%s)", source), c.Kinds, groups,
		plot.AxisNames("perturbation", "JS of position-averaged routing"))
}

// StatsTable lists every statistic with its standard deviation, and one example pair per kind.
func StatsTable(res *Result, source string) *plot.Table {
	c := corpusOrEmpty(res, source)
	t := &plot.Table{Title: fmt.Sprintf("Robustness (%s)", source), Header: []string{"model", "perturbation", "pairs",
		"JS", "top-k overlap", "Spearman", "top-1 agreement"}}
	ms := naming.MeanSD.String
	for _, m := range c.Comparisons {
		for _, s := range m.ByKind {
			t.Rows = append(t.Rows, []string{pair.MixerName(m.Mixer), s.Kind, fmt.Sprint(s.Pairs), ms(s.JS),
				ms(s.Overlap), ms(s.Spearman), ms(s.Top1)})
		}
	}
	var ex []string
	for _, p := range c.Examples {
		ex = append(ex, fmt.Sprintf("%s: %q → %q", p.Kind, p.Original, p.Perturbed))
	}
	t.Note = strings.Join(ex, "; ")
	return t
}

// ModelsTable lists the trained models of every corpus: parameters, FFN width, validation perplexity, training time.
func ModelsTable(res *Result) *plot.Table {
	return pair.ModelsTableOf(res.Corpora, func(c *CorpusResult) (string, []pair.Summary) { return c.Source, c.Models })
}

// Figures are the figures notebooks/11_protot_interpretability.ipynb shows from res, named for
// plot.ExportFigures: for each corpus, the bars of the JS divergence, top-k overlap and Spearman correlation, and
// the routing-change bars.
func Figures(res *Result) []plot.Figure {
	var figs []plot.Figure
	for _, c := range res.Corpora {
		for _, m := range []string{MetricJS, MetricOverlap, MetricSpearman} {
			figs = append(figs, plot.Figure{Name: "robustness_" + c.Source + "_" + m, Chart: MetricBars(res, c.Source, m)})
		}
		figs = append(figs, plot.Figure{Name: "robustness_" + c.Source + "_routing_change",
			Chart: RoutingChangeBars(res, c.Source)})
	}
	return figs
}
