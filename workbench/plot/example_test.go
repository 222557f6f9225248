package plot_test

import (
	"encoding/json"
	"fmt"

	"github.com/protolab/protolab/workbench/plot"
)

// ExampleLines builds a chart with an error band around the simulation and inspects its option. Both axes
// ask for log scale; x spans three decades and gets one, the MSE spans less than MinLogSpan and gets a linear
// axis zoomed on the data.
// In a notebook, plot.Display(chart) shows it; plot.Export(chart, "fig.png") saves it.
func ExampleLines() {
	depth := []float64{1, 10, 100, 1000}
	chart := plot.Lines("MSE vs depth", depth, []plot.Series{
		{Name: "theory", Y: []float64{1, 0.5, 0.25, 0.125}},
		{Name: "simulation", Y: []float64{1.1, 0.45, 0.27, 0.12},
			Lo: []float64{0.9, 0.4, 0.2, 0.1}, Hi: []float64{1.3, 0.5, 0.3, 0.15}},
	}, plot.LogX(), plot.LogY(), plot.AxisNames("depth", "MSE"))

	var option struct {
		XAxis  []struct{ Type string } `json:"xAxis"`
		YAxis  []struct{ Type string } `json:"yAxis"`
		Series []struct{ Name, ID string }
	}
	if err := json.Unmarshal([]byte(chart.RenderSnippet().Option), &option); err != nil {
		panic(err)
	}
	fmt.Println("x axis:", option.XAxis[0].Type)
	fmt.Println("y axis:", option.YAxis[0].Type)
	for _, s := range option.Series {
		fmt.Printf("%s %q\n", s.Name, s.ID)
	}
	// Output:
	// x axis: log
	// y axis: value
	// theory ""
	// simulation ""
	// simulation "band-1-lo"
	// simulation "band-1-hi"
}
