package architecture

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/run"
)

// FromEnv returns the preset named by $PROTOLAB_PRESET (tiny|small|paper; default small), as notebooks use it.
func FromEnv() (Config, error) { return Preset(run.PresetName()) }

// WordNetAvailable reports whether the "wordnet" data source can be loaded and, if not, why. When neither
// $PROTOLAB_WORDNET nor the current folder's module finds the database, it also looks under $PROTOLAB_ROOT (the
// repository a notebook runs from) and, when found there, sets $PROTOLAB_WORDNET so the data source uses it.
func WordNetAvailable() (bool, string) {
	_, err := wordnet.Dir()
	if err == nil {
		return true, ""
	}
	if root := os.Getenv("PROTOLAB_ROOT"); root != "" && os.Getenv(wordnet.EnvDir) == "" {
		dir := filepath.Join(root, wordnet.DefaultSubdir)
		if _, statErr := os.Stat(filepath.Join(dir, "data.noun")); statErr == nil {
			if os.Setenv(wordnet.EnvDir, dir) == nil {
				return true, ""
			}
		}
	}
	return false, err.Error() + " (`make wordnet` installs it; `make run` and `make test` run it)"
}

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

// PerplexityChart draws the validation perplexity of each mixer of a comparison as bars, labelled with the
// mixer's non-embedding parameter count; the subtitle gives the corpus, width, steps and seeds (± s.e. in the
// tooltip names when there are several seeds).
func PerplexityChart(c *Comparison) *charts.Bar {
	var cats []string
	vals := make([]float64, len(c.Scores))
	seeds := 0
	for i, s := range c.Scores {
		label := fmt.Sprintf("%s (%s)", s.Mixer, siCount(s.Match.Achieved))
		if s.Seeds > 1 {
			label += fmt.Sprintf(" ±%.2f", s.PerplexitySE)
		}
		cats = append(cats, label)
		vals[i] = s.Perplexity
		seeds = s.Seeds
	}
	sub := fmt.Sprintf("%s corpus, width %d, %d steps, %d seed(s); labels: non-embedding parameters",
		sourceLabel(c.Source), c.Width, c.Steps, seeds)
	return plot.Bars("Validation perplexity at equal parameter count", cats,
		[]plot.BarGroup{{Name: "perplexity", Values: vals}}, plot.Subtitle(sub), plot.AxisNames("mixer", "perplexity"))
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

// TokensChart plots the validation loss against the training tokens (log x), one curve per mixer, at the given
// sweep width (0: the largest); bands are ± 2 s.e. over seeds.
func TokensChart(s *Sweep, width int) *charts.Line {
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
// at the given number of steps (0: the largest); bands are ± 2 s.e. over seeds.
func WidthChart(s *Sweep, steps int) *charts.Line {
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
func GenerationChart(g *Generation) *charts.Bar {
	var cats []string
	for _, n := range DistinctNs {
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

// JudgeChart draws the perplexity of each row's continuations under the judge (the best model of the sweep).
func JudgeChart(g *Generation) *charts.Bar {
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
func ClassifyChart(r *ClassifyReport) *charts.Bar {
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
	pool, head := PoolMean, "all weights"
	if len(r.Results) > 0 {
		pool = r.Results[0].Pool
		if r.Results[0].HeadOnly {
			head = "head only"
		}
	}
	return plot.Bars("Downstream classification: test accuracy", cats, append(groups, maj),
		plot.AxisNames("task", "accuracy"), plot.Subtitle(fmt.Sprintf("%s pooling, fine-tuning %s", pool, head)))
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}
