package lm

import (
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/run"
)

// FromEnv returns the preset named by $PROTOLAB_PRESET (tiny|small|paper; default small), as notebooks use it.
func FromEnv() (Config, error) { return Preset(run.PresetName()) }

// LossCurves plots the training loss of every logged step and the validation loss of every evaluation against the
// step, with a log-scaled y axis (nats per token).
func LossCurves(h *fit.History) *charts.Line {
	train := plot.Series{Name: "train loss"}
	for _, m := range h.Steps {
		train.X = append(train.X, float64(m.Step))
		train.Y = append(train.Y, m.Loss)
	}
	val := plot.Series{Name: "validation loss"}
	for _, e := range h.Evals {
		val.X = append(val.X, float64(e.Step))
		val.Y = append(val.Y, e.Loss)
	}
	return plot.Lines("Baseline LM: loss", nil, []plot.Series{train, val},
		plot.AxisNames("step", "nats/token"), plot.LogY())
}

// PerplexityCurve plots the validation perplexity against the step.
func PerplexityCurve(h *fit.History) *charts.Line {
	s := plot.Series{Name: "validation perplexity"}
	for _, e := range h.Evals {
		s.X = append(s.X, float64(e.Step))
		s.Y = append(s.Y, e.Perplexity)
	}
	return plot.Lines("Baseline LM: validation perplexity", nil, []plot.Series{s},
		plot.AxisNames("step", "perplexity"), plot.LogY())
}

// Live is a live training plot: training loss every logged step, validation loss at every evaluation.
type Live struct{ plot *plot.Live }

// NewLive returns a live loss plot; pass its Options to Run and call Done when Run returns.
func NewLive() *Live {
	return &Live{plot: plot.NewLivePlot("Baseline LM: loss (live)", []string{"train loss", "validation loss"},
		plot.AxisNames("step", "nats/token"), plot.LogY())}
}

// Options returns the Run options that feed the plot.
func (l *Live) Options() []Option {
	return []Option{
		OnStep(func(step int, m fit.Metrics) { l.plot.Update(float64(step), m.Loss, math.NaN()) }),
		OnEval(func(step int, e fit.EvalMetrics) { l.plot.Update(float64(step), math.NaN(), e.Loss) }),
	}
}

// Done replaces the live output with the final static chart.
func (l *Live) Done() error { return l.plot.Done() }
