package steering

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/workbench/plot"
)

// AccuracyChart is the controller figure (docs/spec/prism.md §9): held-out accuracy per task (and the mean) of the
// frozen model and of the model with its sparse prototype controller, with chance level; the subtitle gives the
// number of non-zero gains per task.
func AccuracyChart(res *Result) *charts.Bar {
	var cats []string
	var before, after, chance []float64
	sub := "non-zero gains:"
	for _, ts := range res.Tasks {
		cats = append(cats, ts.Task)
		before = append(before, ts.Before)
		after = append(after, ts.After)
		chance = append(chance, ts.Chance)
		sub += fmt.Sprintf(" %s %d/%d,", ts.Task, ts.ActiveWeights, ts.Support)
	}
	meanChance := 0.0
	for _, c := range chance {
		meanChance += c / float64(len(chance))
	}
	cats = append(cats, "mean")
	before = append(before, res.MeanBefore)
	after = append(after, res.MeanAfter)
	chance = append(chance, meanChance)
	return plot.Bars("Sparse prototype controller: held-out accuracy", cats, []plot.BarGroup{
		{Name: "frozen model", Values: before},
		{Name: "with controller", Values: after},
		{Name: "chance", Values: chance},
	}, plot.AxisNames("task", "held-out accuracy"), plot.Subtitle(sub[:len(sub)-1]+" ("+res.Run+")"))
}
