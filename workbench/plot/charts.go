package plot

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/pkg/errors"
)

// BarGroup is one bar series: one value per category.
type BarGroup struct {
	Name   string
	Values []float64 // len(Values) == len(categories); non-finite values leave no bar
	// Right draws the group against a second value axis on the right (named by RightAxis): for a quantity in
	// another unit, which must not share the left axis.
	Right bool
}

// Bars returns a grouped bar chart: for each category one bar per group, side by side. With LogY the value
// axis is logarithmic and values ≤ 0 leave no bar. Bars panics when a group's length differs from
// len(categories).
func Bars(title string, categories []string, groups []BarGroup, options ...Option) *charts.Bar {
	s := newSettings(options)
	var values [][]float64
	for _, g := range groups {
		values = append(values, g.Values)
	}
	s.logY = s.logY && logSpan(values...)
	var all []string
	for _, g := range groups {
		all = append(all, g.Name)
	}
	s.fitLegend(all)
	bar := charts.NewBar()
	bar.SetGlobalOptions(s.globalOptions(title, "axis", len(groups) > 1, opts.Grid{})...)
	xAxis := opts.XAxis{Type: "category", Name: s.xName, NameLocation: "middle", NameGap: 28}
	// Many categories, or labels wider than their category's slot, would run into each other: they are drawn
	// at an angle.
	rotate := 0.0
	slot := (float64(s.width) - barFrameW) / float64(max(1, len(categories)))
	if w, _ := categoryLabelSize(categories, 0); len(categories) > 8 || w > slot-categoryGap {
		rotate = 30
		xAxis.AxisLabel = &opts.AxisLabel{Rotate: rotate}
	}
	yAxis := opts.YAxis{Type: valueAxisType(s.logY), Name: s.yName}
	if s.zoomY {
		yAxis.Scale = opts.Bool(true)
	}
	bar.SetGlobalOptions(charts.WithXAxisOpts(xAxis), charts.WithYAxisOpts(yAxis))
	var left, right [][]float64
	for _, g := range groups {
		if g.Right {
			right = append(right, g.Values)
		} else {
			left = append(left, g.Values)
		}
	}
	if right != nil {
		yAxis.Name, yAxis.Position = s.rightName, "right"
		bar.ExtendYAxis(yAxis)
	}
	bar.SetXAxis(categories) // Bar.Validate copies these into the x axis.
	var names []string
	for i, g := range groups {
		if len(g.Values) != len(categories) {
			panic(errors.Errorf("plot.Bars(%q): group %q has %d values for %d categories",
				title, g.Name, len(g.Values), len(categories)))
		}
		data := make([]opts.BarData, len(g.Values))
		for j, v := range g.Values {
			data[j] = opts.BarData{Value: cell(v, s.logY)}
		}
		axis := 0
		if g.Right {
			axis = 1
		}
		bar.AddSeries(g.Name, data, charts.WithItemStyleOpts(opts.ItemStyle{Color: color(i)}),
			charts.WithBarChartOpts(opts.BarChart{YAxisIndex: axis}))
		names = append(names, g.Name)
	}
	labelW := func(values [][]float64) float64 {
		lo, hi := dataRange(s.logY, values...)
		if !s.zoomY && !s.logY {
			lo, hi = math.Min(lo, 0), math.Max(hi, 0)
		}
		return valueLabelWidth(lo, hi, s.logY)
	}
	_, labelH := categoryLabelSize(categories, rotate)
	fr := frame{xLabelH: labelH, yLabelW: labelW(left)}
	if right != nil {
		fr.rightLabelW = labelW(right)
	}
	if len(groups) > 1 {
		fr.legend = legendNames(names)
	}
	bar.Accept(patcher{fns: []func(map[string]any){allAxisLabels("xAxis"), s.layoutPatch(title, fr)}})
	return bar
}

// barFrameW is a bar chart's canvas width outside its plot area (axis labels, names and margins), as estimated
// for the room of each category's label; categoryGap the space kept between two neighbouring labels.
const (
	barFrameW   = 110.0
	categoryGap = 8.0
)

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

	rotate := 0.0
	if len(xLabels) > 8 {
		rotate = 45
	}
	yLabelW, _ := categoryLabelSize(yLabels, 0)
	_, xLabelH := categoryLabelSize(xLabels, rotate)
	dec := significantDecimals(lo, hi)
	fr := frame{xLabelH: xLabelH, yLabelW: yLabelW + 4, colorName: s.colorName, colorDecimals: dec,
		colorLabelW: charW * float64(max(len(strconv.FormatFloat(lo, 'f', dec, 64)), len(strconv.FormatFloat(hi, 'f', dec, 64))))}
	if fr.colorName == "" {
		fr.colorName = "value"
	}
	if !s.sized {
		s.width, s.height = heatmapSize(title, len(xLabels), len(yLabels), fr, s)
	}
	hm := charts.NewHeatMap()
	hm.SetGlobalOptions(s.globalOptions(title, "item", false, opts.Grid{})...)
	xAxis := opts.XAxis{Type: "category", Data: xLabels, Name: s.xName, NameLocation: "middle", NameGap: 28,
		SplitArea: &opts.SplitArea{Show: opts.Bool(true)}}
	if rotate > 0 {
		xAxis.AxisLabel = &opts.AxisLabel{Rotate: rotate}
	}
	// HeatMap.SetXAxis is ignored by go-echarts v2.6.7 (HeatMap.Validate never copies it), so both axes
	// get their categories here.
	hm.SetGlobalOptions(
		charts.WithXAxisOpts(xAxis),
		// Inverse puts row 0 on top.
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: yLabels, Name: s.yName,
			Inverse:   opts.Bool(true),
			SplitArea: &opts.SplitArea{Show: opts.Bool(true)}}),
		charts.WithVisualMapOpts(opts.VisualMap{
			Type: "continuous", Calculable: opts.Bool(true), Min: float32(lo), Max: float32(hi),
			InRange: &opts.VisualMapInRange{Color: ramp},
			Right:   "10", Top: "middle",
		}),
	)
	hm.AddSeries(title, data)
	hm.Accept(patcher{fns: []func(map[string]any){allAxisLabels("xAxis"), allAxisLabels("yAxis"),
		s.layoutPatch(title, fr)}})
	return hm
}

// Minimum cell size, in pixels, of a heatmap whose size is derived from its rows and columns: a row fits one label
// line.
const (
	HeatmapRowHeight = 24.0
	heatmapColW      = 22.0
)

// heatmapSize returns a canvas size that gives each of the rows × cols cells at least HeatmapRowHeight ×
// heatmapColW pixels besides the title, labels, axis names and colour bar; the width is at least DefaultWidth.
func heatmapSize(title string, cols, rows int, fr frame, s settings) (int, int) {
	s.width = DefaultWidth
	b := s.layout(title, fr)
	need := b.left + fr.yLabelW + 8 + float64(cols)*heatmapColW + b.right
	if need > float64(s.width) {
		s.width = int(math.Ceil(need))
		b = s.layout(title, fr)
	}
	// Tall enough for the rows and for the y axis name on one line.
	plotH := math.Max(float64(rows)*HeatmapRowHeight, float64(utf8.RuneCountInString(s.yName))*charW+10)
	h := b.top + plotH + fr.xLabelH + 8 + b.bottom
	return s.width, int(math.Ceil(math.Max(h, 240)))
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
	var xs, ys [][]float64
	for _, g := range groups {
		xs, ys = append(xs, g.X), append(ys, g.Y)
	}
	s.logX, s.logY = s.logX && logSpan(xs...), s.logY && logSpan(ys...)
	var all []string
	for _, g := range groups {
		all = append(all, g.Name)
	}
	s.fitLegend(all)
	sc := charts.NewScatter()
	sc.SetGlobalOptions(s.globalOptions(title, "item", len(groups) > 1, opts.Grid{})...)
	sc.SetGlobalOptions(
		charts.WithXAxisOpts(opts.XAxis{Type: valueAxisType(s.logX), Name: s.xName, NameLocation: "middle",
			NameGap: 28, Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(opts.YAxis{Type: valueAxisType(s.logY), Name: s.yName, Scale: opts.Bool(true)}),
	)
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	lo, hi := dataRange(s.logY, ys...)
	fr := frame{xLabelH: 22, yLabelW: valueLabelWidth(lo, hi, s.logY)}
	if len(groups) > 1 {
		fr.legend = legendNames(names)
	}
	sc.Accept(patcher{fns: []func(map[string]any){s.layoutPatch(title, fr)}})
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
