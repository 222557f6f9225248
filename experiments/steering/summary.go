package steering

import (
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/protolab/protolab/workbench/stats"
)

// Level is the coverage of the study's intervals.
const Level = 0.95

// Interval is a mean over training seeds (one value per model) with its standard error and the Level Student-t
// interval, mean ± t_{n−1}·s.e.; with one model the interval is the mean itself and the s.e. 0.
type Interval struct {
	Mean float64 `json:"mean"`
	SE   float64 `json:"se"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	N    int     `json:"n"`
}

// tInterval returns the Level t-interval of the mean of xs (one value per independent model).
func tInterval(xs []float64) Interval {
	switch len(xs) {
	case 0:
		return Interval{}
	case 1:
		return Interval{Mean: xs[0], Lo: xs[0], Hi: xs[0], N: 1}
	}
	m, se := stats.MeanSE(xs)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(1 - (1-Level)/2)
	return Interval{Mean: m, SE: se, Lo: m - t*se, Hi: m + t*se, N: len(xs)}
}

// TaskSummary is one controller on one task over the models (each model's value the mean over its splits).
type TaskSummary struct {
	Task   string   `json:"task"`
	Chance float64  `json:"chance"`
	Before Interval `json:"before"`
	After  Interval `json:"after"`
	Gain   Interval `json:"gain"`
}

// Summary is one controller over the models: held-out accuracy averaged over tasks and splits, before and after,
// and the gain (after − before, as a fraction; the scorecard shows points), each an interval over training seeds.
// VsPrototype is the prototype controller's gain minus this one's, paired by model (0 for the prototype itself).
type Summary struct {
	Controller    string        `json:"controller"`
	Before        Interval      `json:"before"`
	After         Interval      `json:"after"`
	Gain          Interval      `json:"gain"`
	VsPrototype   Interval      `json:"vs_prototype"`
	ActiveWeights float64       `json:"active_weights"` // mean number of non-zero gains per fit
	Tasks         []TaskSummary `json:"tasks"`
}

// summarise reduces the models' runs to one Summary per controller: each model contributes the mean over its split
// seeds (splits of one model share the model, so they are not independent), and the intervals run over models.
func summarise(models []ModelRun, controllers []string) []Summary {
	perModel := func(c string, f func(cr *ControllerRun) float64) []float64 {
		out := make([]float64, len(models))
		for i := range models {
			for s := range models[i].Splits {
				out[i] += f(models[i].Controller(s, c)) / float64(len(models[i].Splits))
			}
		}
		return out
	}
	gain := func(cr *ControllerRun) float64 { return cr.MeanAfter - cr.MeanBefore }
	var proto []float64
	if len(models) > 0 && models[0].Controller(0, ControllerPrototype) != nil {
		proto = perModel(ControllerPrototype, gain)
	}
	var out []Summary
	for _, c := range controllers {
		g := perModel(c, gain)
		s := Summary{Controller: c, Gain: tInterval(g),
			Before: tInterval(perModel(c, func(cr *ControllerRun) float64 { return cr.MeanBefore })),
			After:  tInterval(perModel(c, func(cr *ControllerRun) float64 { return cr.MeanAfter }))}
		if proto != nil {
			d := make([]float64, len(g))
			for i := range g {
				d[i] = proto[i] - g[i]
			}
			s.VsPrototype = tInterval(d)
		}
		fits := 0
		for i := range models {
			for sp := range models[i].Splits {
				for _, t := range models[i].Controller(sp, c).Tasks {
					s.ActiveWeights += float64(t.ActiveWeights)
					fits++
				}
			}
		}
		if fits > 0 {
			s.ActiveWeights /= float64(fits)
		}
		if len(models) > 0 {
			for ti, t := range models[0].Controller(0, c).Tasks {
				task := func(f func(t *TaskResult) float64) []float64 {
					return perModel(c, func(cr *ControllerRun) float64 { return f(&cr.Tasks[ti]) })
				}
				s.Tasks = append(s.Tasks, TaskSummary{Task: t.Task,
					Chance: stats.Mean(task(func(t *TaskResult) float64 { return t.Chance })),
					Before: tInterval(task(func(t *TaskResult) float64 { return t.Before })),
					After:  tInterval(task(func(t *TaskResult) float64 { return t.After })),
					Gain:   tInterval(task(func(t *TaskResult) float64 { return t.After - t.Before }))})
			}
		}
		out = append(out, s)
	}
	return out
}
