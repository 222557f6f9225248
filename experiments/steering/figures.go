package steering

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/workbench/plot"
)

// AccuracyChart is the controller figure (docs/spec/prism.md §9): held-out accuracy per task (and the mean) of the
// frozen PRISM model, of the model with each controller, of the frozen dense baseline when the "sae" controller
// steers it, and chance; means over training seeds and splits. The subtitle gives each controller's mean gain with
// its interval over training seeds.
func AccuracyChart(res *Result) *charts.Bar {
	if len(res.Summaries) == 0 {
		return plot.Bars("Sparse controllers: held-out accuracy", nil, nil)
	}
	first := res.Summaries[0]
	var cats []string
	for _, t := range first.Tasks {
		cats = append(cats, t.Task)
	}
	cats = append(cats, "mean")
	column := func(s Summary, f func(t TaskSummary) float64, mean float64) []float64 {
		var v []float64
		for _, t := range s.Tasks {
			v = append(v, f(t))
		}
		return append(v, mean)
	}
	before := func(t TaskSummary) float64 { return t.Before.Mean }
	groups := []plot.BarGroup{{Name: "frozen PRISM model", Values: column(first, before, first.Before.Mean)}}
	sub := fmt.Sprintf("mean gain in points, %.0f%% interval over %d training seeds:", 100*Level, first.Gain.N)
	for _, s := range res.Summaries {
		if s.Controller == ControllerSAE {
			groups = append(groups, plot.BarGroup{Name: "frozen dense model", Values: column(s, before, s.Before.Mean)})
		}
		groups = append(groups, plot.BarGroup{Name: "with " + s.Controller + " controller",
			Values: column(s, func(t TaskSummary) float64 { return t.After.Mean }, s.After.Mean)})
		sub += fmt.Sprintf(" %s %+.1f [%+.1f, %+.1f],", s.Controller, 100*s.Gain.Mean, 100*s.Gain.Lo, 100*s.Gain.Hi)
	}
	chance := column(first, func(t TaskSummary) float64 { return t.Chance }, 0)
	for _, c := range chance[:len(chance)-1] {
		chance[len(chance)-1] += c / float64(len(chance)-1)
	}
	groups = append(groups, plot.BarGroup{Name: "chance", Values: chance})
	return plot.Bars("Sparse controllers: held-out accuracy", cats, groups,
		plot.AxisNames("task", "held-out accuracy"), plot.Subtitle(sub[:len(sub)-1]))
}

// GainChart shows each controller's held-out accuracy gain in points, per task and averaged over tasks (means over
// training seeds and splits); the subtitle gives the interval of each average.
func GainChart(res *Result) *charts.Bar {
	var cats []string
	if len(res.Summaries) > 0 {
		for _, t := range res.Summaries[0].Tasks {
			cats = append(cats, t.Task)
		}
	}
	cats = append(cats, "mean")
	var groups []plot.BarGroup
	sub := fmt.Sprintf("%.0f%% intervals of the mean gain:", 100*Level)
	for _, s := range res.Summaries {
		g := plot.BarGroup{Name: s.Controller}
		for _, t := range s.Tasks {
			g.Values = append(g.Values, 100*t.Gain.Mean)
		}
		g.Values = append(g.Values, 100*s.Gain.Mean)
		groups = append(groups, g)
		sub += fmt.Sprintf(" %s [%+.1f, %+.1f],", s.Controller, 100*s.Gain.Lo, 100*s.Gain.Hi)
	}
	return plot.Bars("Sparse controllers: held-out accuracy gain", cats, groups,
		plot.AxisNames("task", "gain (points)"), plot.Subtitle(sub[:len(sub)-1]))
}

// Figures are the figures notebooks/20_prism.ipynb shows from res, named for plot.ExportFigures: held-out
// accuracy and the gain of each controller.
func Figures(res *Result) []plot.Figure {
	return []plot.Figure{
		{Name: "steering_accuracy", Chart: AccuracyChart(res)},
		{Name: "steering_gain", Chart: GainChart(res)},
	}
}
