package baseline

import (
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/run"
)

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

// Figures are the figures notebooks/00_quickstart.ipynb exports from r, named for plot.ExportFigures: the loss
// curves and the validation perplexity of its model.
func Figures(r *Result) []plot.Figure {
	return []plot.Figure{{Name: "quickstart_loss", Chart: LossCurves(r.Model.History)},
		{Name: "quickstart_perplexity", Chart: PerplexityCurve(r.Model.History)}}
}

// Live is a live training plot: training loss every logged step, validation loss at every evaluation.
type Live struct{ plot *plot.Live }

// NewLive returns a live loss plot; pass its Option to LoadOrRun and call Done when it returns.
func NewLive() *Live {
	return &Live{plot: plot.NewLivePlot("Baseline LM: loss (live)", []string{"train loss", "validation loss"},
		plot.AxisNames("step", "nats/token"), plot.LogY())}
}

// Option returns the run option that feeds the plot with the training and validation losses.
func (l *Live) Option() run.Option {
	return run.OnMetric(func(m run.Metric) {
		switch m.Name {
		case run.MetricTrainLoss:
			l.plot.Update(float64(m.Step), m.Value, math.NaN())
		case run.MetricValLoss:
			l.plot.Update(float64(m.Step), math.NaN(), m.Value)
		}
	})
}

// Done replaces the live output with the final static chart.
func (l *Live) Done() error { return l.plot.Done() }
