package plot

import (
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/pkg/errors"
)

// BarGroup is one bar series: one value per category.
type BarGroup struct {
	Name   string
	Values []float64 // len(Values) == len(categories); non-finite values leave no bar
}

// Bars returns a grouped bar chart: for each category one bar per group, side by side. With LogY the value
// axis is logarithmic and values ≤ 0 leave no bar. Bars panics when a group's length differs from
// len(categories).
func Bars(title string, categories []string, groups []BarGroup, options ...Option) *charts.Bar {
	s := newSettings(options)
	bar := charts.NewBar()
	bar.SetGlobalOptions(s.globalOptions(title, "axis", len(groups) > 1, opts.Grid{})...)
	xAxis := opts.XAxis{Type: "category", Name: s.xName, NameLocation: "middle", NameGap: 28}
	if len(categories) > 8 {
		xAxis.NameGap = 50
		xAxis.AxisLabel = &opts.AxisLabel{Rotate: 30}
	}
	bar.SetGlobalOptions(
		charts.WithXAxisOpts(xAxis),
		charts.WithYAxisOpts(opts.YAxis{Type: valueAxisType(s.logY), Name: s.yName}),
	)
	bar.SetXAxis(categories) // Bar.Validate copies these into the x axis.
	for i, g := range groups {
		if len(g.Values) != len(categories) {
			panic(errors.Errorf("plot.Bars(%q): group %q has %d values for %d categories",
				title, g.Name, len(g.Values), len(categories)))
		}
		data := make([]opts.BarData, len(g.Values))
		for j, v := range g.Values {
			data[j] = opts.BarData{Value: cell(v, s.logY)}
		}
		bar.AddSeries(g.Name, data, charts.WithItemStyleOpts(opts.ItemStyle{Color: color(i)}))
	}
	bar.Accept(patcher{fns: []func(map[string]any){allAxisLabels("xAxis")}})
	return bar
}

// Heatmap returns a heatmap of values with labelled category axes: values[i][j] is the cell in row
// yLabels[i] and column xLabels[j]; row 0 is drawn at the top, as in a printed matrix. Non-finite cells are
// left blank. The colour scale spans the finite data range (ColorRange fixes it; Diverging centres a
// blue-white-red ramp on zero). Heatmap panics when the shape of values does not match the labels.
func Heatmap(title string, xLabels, yLabels []string, values [][]float64, options ...Option) *charts.HeatMap {
	s := newSettings(options)
	if len(values) != len(yLabels) {
		panic(errors.Errorf("plot.Heatmap(%q): %d rows for %d y labels", title, len(values), len(yLabels)))
	}
	data := make([]opts.HeatMapData, 0, len(xLabels)*len(yLabels))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, row := range values {
		if len(row) != len(xLabels) {
			panic(errors.Errorf("plot.Heatmap(%q): row %d has %d values for %d x labels", title, i, len(row), len(xLabels)))
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
			data = append(data, opts.HeatMapData{Value: [3]any{j, i, v}})
		}
	}
	lo, hi, ramp := colorScale(lo, hi, s)

	hm := charts.NewHeatMap()
	hm.SetGlobalOptions(s.globalOptions(title, "item", false,
		opts.Grid{Top: "70", Bottom: "60", Left: "50", Right: "110", ContainLabel: opts.Bool(true)})...)
	xAxis := opts.XAxis{Type: "category", Data: xLabels, Name: s.xName, NameLocation: "middle", NameGap: 28,
		SplitArea: &opts.SplitArea{Show: opts.Bool(true)}}
	if len(xLabels) > 8 {
		xAxis.NameGap = 50
		xAxis.AxisLabel = &opts.AxisLabel{Rotate: 45}
	}
	// HeatMap.SetXAxis is ignored by go-echarts v2.6.7 (HeatMap.Validate never copies it), so both axes
	// get their categories here.
	hm.SetGlobalOptions(
		charts.WithXAxisOpts(xAxis),
		// Inverse puts row 0 on top; the name then goes to the axis start, which is the top.
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: yLabels, Name: s.yName, NameLocation: "start",
			Inverse:   opts.Bool(true),
			SplitArea: &opts.SplitArea{Show: opts.Bool(true)}}),
		charts.WithVisualMapOpts(opts.VisualMap{
			Type: "continuous", Calculable: opts.Bool(true), Min: float32(lo), Max: float32(hi),
			InRange: &opts.VisualMapInRange{Color: ramp},
			Right:   "10", Top: "middle",
		}),
	)
	hm.AddSeries(title, data)
	hm.Accept(patcher{fns: []func(map[string]any){allAxisLabels("xAxis"), allAxisLabels("yAxis")}})
	return hm
}

// colorScale returns the colour range and ramp of a heatmap whose finite data span [lo, hi].
func colorScale(lo, hi float64, s settings) (float64, float64, []string) {
	ramp := sequentialRamp
	if s.diverging {
		ramp = divergingRamp
		m := math.Max(math.Abs(lo), math.Abs(hi))
		lo, hi = -m, m
	}
	if s.colorRange != nil {
		lo, hi = s.colorRange[0], s.colorRange[1]
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) { // no finite data
		lo, hi = 0, 1
	}
	if hi <= lo {
		lo, hi = lo-0.5, lo+0.5
	}
	// go-echarts drops a zero max (omitempty) and echarts then uses its default max of 200.
	if float32(hi) == 0 {
		hi = math.SmallestNonzeroFloat32
	}
	return lo, hi, ramp
}

// Points is one scatter series.
type Points struct {
	Name   string
	X, Y   []float64 // equal lengths
	Labels []string  // optional per-point names shown in the tooltip; nil or len(X)
}

// Scatter returns a scatter chart of the point groups on numeric axes (log with LogX / LogY). Points with a
// non-finite coordinate (or ≤ 0 on a log axis) are dropped. Scatter panics when a group's lengths disagree.
func Scatter(title string, groups []Points, options ...Option) *charts.Scatter {
	s := newSettings(options)
	sc := charts.NewScatter()
	sc.SetGlobalOptions(s.globalOptions(title, "item", len(groups) > 1, opts.Grid{})...)
	sc.SetGlobalOptions(
		charts.WithXAxisOpts(opts.XAxis{Type: valueAxisType(s.logX), Name: s.xName, NameLocation: "middle",
			NameGap: 28, Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(opts.YAxis{Type: valueAxisType(s.logY), Name: s.yName, Scale: opts.Bool(true)}),
	)
	for i, g := range groups {
		if len(g.X) != len(g.Y) || (g.Labels != nil && len(g.Labels) != len(g.X)) {
			panic(errors.Errorf("plot.Scatter(%q): group %q has len(X)=%d, len(Y)=%d, len(Labels)=%d",
				title, g.Name, len(g.X), len(g.Y), len(g.Labels)))
		}
		data := make([]opts.ScatterData, 0, len(g.X))
		for j := range g.X {
			if !usable(g.X[j], s.logX) || !usable(g.Y[j], s.logY) {
				continue
			}
			d := opts.ScatterData{Value: []any{g.X[j], g.Y[j]}}
			if g.Labels != nil {
				d.Name = g.Labels[j]
			}
			data = append(data, d)
		}
		sc.AddSeries(g.Name, data,
			charts.WithScatterChartOpts(opts.ScatterChart{SymbolSize: 8}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: color(i), Opacity: opts.Float(0.8)}))
	}
	return sc
}
