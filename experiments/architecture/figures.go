package architecture

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/models/classify"
	"github.com/protolab/protolab/models/generation"
	"github.com/protolab/protolab/workbench/plot"
)

// siCount formats a parameter count: 98.3k, 1.25M.
func siCount(n int) string {
	switch x := float64(n); {
	case x >= 1e6:
		return fmt.Sprintf("%.3gM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.3gk", x/1e3)
	}
	return fmt.Sprint(n)
}

// PerplexityChart draws the perplexity of each mixer of a comparison as bars, labelled with the mixer's
// non-embedding parameter count: on the test corpus (mean, ± s.e. in the label with several seeds) when it was
// measured, else on the validation split; the subtitle gives the corpus, init, learning rates, width, steps and
// seeds. A nil comparison gives an empty chart that says so.
func PerplexityChart(c *Comparison) *charts.Bar {
	if c == nil {
		return plot.Bars("Perplexity at equal parameter count", nil, nil,
			plot.Subtitle("no comparison on this corpus in this result"))
	}
	var cats []string
	vals := make([]float64, len(c.Scores))
	seeds, what := 0, "validation"
	for i, s := range c.Scores {
		label := fmt.Sprintf("%s (%s)", s.Mixer, siCount(s.Match.Achieved))
		v, se := s.Perplexity, s.PerplexitySE
		if s.Test != nil {
			v, se, what = s.Test.Perplexity, s.Test.PerplexitySE, "test"
		}
		if s.Seeds == 0 {
			v = math.NaN()
		}
		if s.Seeds > 1 {
			label += fmt.Sprintf(" ±%.2f", se)
		}
		cats = append(cats, label)
		vals[i] = v
		seeds = max(seeds, s.Seeds)
	}
	sub := fmt.Sprintf("%s corpus, %s perplexity, init %s, lr %s, width %d, %d steps, %d seed(s); labels: "+
		"non-embedding parameters", sourceLabel(c.Source), what, c.Init, c.LRMode, c.Width, c.Steps, seeds)
	return plot.Bars("Perplexity at equal parameter count", cats,
		[]plot.BarGroup{{Name: what + " perplexity", Values: vals}}, plot.Subtitle(sub),
		plot.AxisNames("mixer", "perplexity"))
}

// CurvesChart plots each mixer's validation loss against training tokens in one comparison (log x; bands ± 2 s.e.
// over seeds), the curves whose order Comparison.Ranking follows; the subtitle says whether the ranking settled.
func CurvesChart(c *Comparison) *charts.Line {
	if c == nil {
		return plot.Lines("Validation loss against training tokens", nil, nil,
			plot.Subtitle("no comparison on this corpus in this result"))
	}
	var ser []plot.Series
	for _, s := range c.Scores {
		x := plot.Series{Name: s.Mixer}
		bands := s.Seeds > 1
		for _, p := range s.Curve {
			x.X, x.Y = append(x.X, float64(p.Tokens)), append(x.Y, p.Loss)
			x.Lo, x.Hi = append(x.Lo, p.Loss-2*p.LossSE), append(x.Hi, p.Loss+2*p.LossSE)
		}
		if !bands {
			x.Lo, x.Hi = nil, nil
		}
		ser = append(ser, x)
	}
	return plot.Lines("Validation loss against training tokens", nil, ser, plot.LogX(),
		plot.AxisNames("training tokens", "validation loss (nats/token)"),
		plot.Subtitle(fmt.Sprintf("%s corpus, init %s, lr %s; ranking settled over the last half: %v",
			sourceLabel(c.Source), c.Init, c.LRMode, c.Settled)))
}

// TuningChart plots the learning-rate search: each (init, mixer)'s final validation loss against the grid's
// learning rate (log x); a diverged run is a gap. An empty chart says when the result has no search.
func TuningChart(r *Result) *charts.Line {
	var ser []plot.Series
	for _, t := range r.Tuning {
		x := plot.Series{Name: t.Mixer + " (" + t.Init + ")", X: t.LRs}
		for i, l := range t.Losses {
			if t.Diverged[i] {
				l = math.NaN()
			}
			x.Y = append(x.Y, l)
		}
		ser = append(ser, x)
	}
	sub := "one run per learning rate with the first seed; loss on the validation split"
	if len(ser) == 0 {
		sub = "no learning-rate search in this result (every mixer trained at train.lr)"
	}
	return plot.Lines("Learning-rate search", nil, ser, plot.LogX(),
		plot.AxisNames("learning rate", "validation loss (nats/token)"), plot.Subtitle(sub))
}

// sourceLabel shortens a data source for titles.
func sourceLabel(src string) string {
	if strings.ContainsAny(src, "/.") {
		return filepath.Base(src)
	}
	return src
}

// scalingSeries returns one series per mixer of the sweep's scores selected by keep, with x from xOf and the
// validation loss as y, and ± 2 s.e. bands when there are several seeds.
func scalingSeries(s *Sweep, keep func(Score) bool, xOf func(Score) float64) []plot.Series {
	var out []plot.Series
	for _, m := range s.Mixers() {
		ser := plot.Series{Name: m}
		bands := false
		for _, x := range s.Scores {
			if x.Mixer != m || !keep(x) {
				continue
			}
			ser.X = append(ser.X, xOf(x))
			ser.Y = append(ser.Y, x.Loss)
			ser.Lo = append(ser.Lo, x.Loss-2*x.LossSE)
			ser.Hi = append(ser.Hi, x.Loss+2*x.LossSE)
			bands = bands || x.Seeds > 1
		}
		if !bands {
			ser.Lo, ser.Hi = nil, nil
		}
		out = append(out, ser)
	}
	return out
}

// noSweep is the empty chart of a result without a sweep.
func noSweep(title string) *charts.Line {
	return plot.Lines(title, nil, nil, plot.Subtitle("no sweep in this result (the protocol preset has none; "+
		"CurvesChart shows the loss against training tokens)"))
}

// TokensChart plots the validation loss against the training tokens (log x), one curve per mixer, at the given
// sweep width (0: the largest); bands are ± 2 s.e. over seeds. A nil sweep gives an empty chart that says so.
func TokensChart(s *Sweep, width int) *charts.Line {
	if s == nil || len(s.Widths) == 0 {
		return noSweep("Scaling with training tokens")
	}
	if width == 0 {
		width = s.Widths[len(s.Widths)-1]
	}
	ser := scalingSeries(s, func(x Score) bool { return x.Width == width },
		func(x Score) float64 { return float64(x.Tokens) })
	return plot.Lines(fmt.Sprintf("Scaling with training tokens (width %d)", width), nil, ser, plot.LogX(),
		plot.AxisNames("training tokens", "validation loss (nats/token)"),
		plot.Subtitle(sourceLabel(s.Source)+" corpus; equal non-embedding parameters per width"))
}

// WidthChart plots the validation loss against the non-embedding parameter count (log x), one curve per mixer,
// at the given number of steps (0: the largest); bands are ± 2 s.e. over seeds. A nil sweep gives an empty chart
// that says so.
func WidthChart(s *Sweep, steps int) *charts.Line {
	if s == nil || len(s.Steps) == 0 {
		return noSweep("Scaling with width")
	}
	if steps == 0 {
		steps = s.Steps[len(s.Steps)-1]
	}
	ser := scalingSeries(s, func(x Score) bool { return x.Steps == steps },
		func(x Score) float64 { return float64(x.Match.Achieved) })
	return plot.Lines(fmt.Sprintf("Scaling with width (%d steps)", steps), nil, ser, plot.LogX(),
		plot.AxisNames("non-embedding parameters", "validation loss (nats/token)"),
		plot.Subtitle(fmt.Sprintf("%s corpus; widths %v", sourceLabel(s.Source), s.Widths)))
}

// GenerationChart draws the n-gram measures of every generation row (each mixer and the reference text) as
// grouped bars: distinct-1, -2, -3 and seq-rep-n.
func GenerationChart(g *generation.Result) *charts.Bar {
	var cats []string
	for _, n := range generation.DistinctNs {
		cats = append(cats, fmt.Sprintf("distinct-%d", n))
	}
	repN := 0
	if len(g.Rows) > 0 {
		repN = g.Rows[0].RepetitionN
	}
	cats = append(cats, fmt.Sprintf("rep-%d", repN))
	var groups []plot.BarGroup
	for _, r := range g.Rows {
		groups = append(groups, plot.BarGroup{Name: r.Name, Values: append(append([]float64{}, r.Distinct...),
			r.Repetition)})
	}
	return plot.Bars("Sample diversity and repetition", cats, groups, plot.AxisNames("measure", "fraction"),
		plot.Subtitle("word n-grams of the continuations; reference: held-out text"))
}

// JudgeChart draws the perplexity of each row's continuations under the judge (the primary comparison's model
// of lowest validation loss).
func JudgeChart(g *generation.Result) *charts.Bar {
	var cats []string
	var vals []float64
	for _, r := range g.Rows {
		cats = append(cats, r.Name)
		v := r.JudgePerplexity
		if r.JudgeTokens == 0 {
			v = math.NaN()
		}
		vals = append(vals, v)
	}
	return plot.Bars("Perplexity of the samples under the best model", cats,
		[]plot.BarGroup{{Name: "judge perplexity", Values: vals}}, plot.AxisNames("samples of", "perplexity"),
		plot.Subtitle("judge: "+g.Judge))
}

// ClassifyChart draws the test accuracy of every fine-tuned model on every task, next to the majority-class
// baseline.
func ClassifyChart(r *classify.Report) *charts.Bar {
	var cats []string
	maj := plot.BarGroup{Name: "majority class"}
	for _, t := range r.Tasks {
		cats = append(cats, fmt.Sprintf("%s (%d classes)", t.Name, len(t.Classes)))
		maj.Values = append(maj.Values, t.Majority)
	}
	var groups []plot.BarGroup
	for _, res := range r.Results {
		i := len(groups) - 1
		if i < 0 || groups[i].Name != res.Mixer {
			groups = append(groups, plot.BarGroup{Name: res.Mixer, Values: nanSlice(len(cats))})
			i++
		}
		for k, t := range r.Tasks {
			if t.Name == res.Task {
				groups[i].Values[k] = res.Accuracy
			}
		}
	}
	pool, head := classify.PoolMean, "all weights"
	if len(r.Results) > 0 {
		pool = r.Results[0].Pool
		if r.Results[0].HeadOnly {
			head = "head only"
		}
	}
	return plot.Bars("Downstream classification: test accuracy", cats, append(groups, maj),
		plot.AxisNames("task", "test accuracy (fraction)"),
		plot.Subtitle(fmt.Sprintf("%s pooling, fine-tuning %s", pool, head)))
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// Figures are the figures notebooks/10_protot_architecture.ipynb shows from r, named for plot.ExportFigures: the
// perplexity bars of every comparison (named by corpus, init policy and learning-rate mode), the learning-rate search,
// the loss curves of the synthetic comparison, the sweep's scaling curves when r has a sweep, and the generation and
// classification bars when r has them.
func Figures(r *Result) []plot.Figure {
	var figs []plot.Figure
	for _, c := range r.Compare {
		name := fmt.Sprintf("architecture_perplexity_%s_%s_%s", c.Source, c.Init, c.LRMode)
		figs = append(figs, plot.Figure{Name: name, Chart: PerplexityChart(c)})
	}
	if len(r.Tuning) > 0 {
		figs = append(figs, plot.Figure{Name: "architecture_lr_search", Chart: TuningChart(r)})
	}
	if c := r.Comparison("synthetic"); c != nil {
		figs = append(figs, plot.Figure{Name: "architecture_curves", Chart: CurvesChart(c)})
	}
	if r.Sweep != nil && len(r.Sweep.Widths) > 0 && len(r.Sweep.Steps) > 0 {
		figs = append(figs, plot.Figure{Name: "architecture_scaling_tokens", Chart: TokensChart(r.Sweep, 0)},
			plot.Figure{Name: "architecture_scaling_width", Chart: WidthChart(r.Sweep, 0)})
	}
	if r.Generation != nil && len(r.Generation.Rows) > 0 {
		figs = append(figs, plot.Figure{Name: "architecture_generation", Chart: GenerationChart(r.Generation)},
			plot.Figure{Name: "architecture_judge", Chart: JudgeChart(r.Generation)})
	}
	if r.Classify != nil && len(r.Classify.Tasks) > 0 {
		figs = append(figs, plot.Figure{Name: "architecture_classify", Chart: ClassifyChart(r.Classify)})
	}
	return figs
}
