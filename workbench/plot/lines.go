package plot

import (
	"math"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/pkg/errors"
)

// maxSymbols is the number of points up to which line series show a marker at each point.
const maxSymbols = 40

// Series is one curve of a line chart.
type Series struct {
	Name string    // legend and tooltip name
	X    []float64 // x values; nil means the x passed to Lines
	Y    []float64 // y values, len(Y) == len(x)
	// Lo and Hi, when both non-nil, are the lower and upper edges of an error band (e.g. mean ± 2·stderr),
	// each of length len(Y). Points where either is non-finite (or ≤ 0 on a log y axis) have no band.
	Lo, Hi []float64
	// Dashed draws the curve dashed with hollow markers: use it for the predicted (theory) member of a
	// measured/predicted pair, so the pair differs in style as well as colour.
	Dashed bool
}

// Lines returns a line chart of the series against numeric x (a value axis, or log with LogX) with
// optional error bands. x is shared by the series that leave Series.X nil; it may be nil when every
// series has its own X. Non-finite y (or y ≤ 0 with LogY) leave gaps; points whose x is unusable are
// dropped. Lines panics when a series' lengths disagree or when it has only one of Lo and Hi.
func Lines(title string, x []float64, series []Series, options ...Option) *charts.Line {
	s := newSettings(options)
	var xs, ys [][]float64
	for _, ser := range series {
		xs = append(xs, x, ser.X)
		ys = append(ys, ser.Y, ser.Lo, ser.Hi)
	}
	s.logX = s.logX && logSpan(xs...)
	s.logY = s.logY && logSpan(ys...)
	var all []string
	for _, ser := range series {
		all = append(all, ser.Name)
	}
	s.fitLegend(all)
	line := charts.NewLine()
	line.SetGlobalOptions(s.globalOptions(title, "axis", len(series) > 1, opts.Grid{})...)
	line.SetGlobalOptions(
		charts.WithXAxisOpts(opts.XAxis{
			Type: valueAxisType(s.logX), Name: s.xName, NameLocation: "middle", NameGap: 28,
			Min: "dataMin", Max: "dataMax",
		}),
		charts.WithYAxisOpts(opts.YAxis{Type: valueAxisType(s.logY), Name: s.yName, Scale: opts.Bool(true)}),
	)
	hasBands := false
	var names []string
	for i, ser := range series {
		xs := ser.X
		if xs == nil {
			xs = x
		}
		if err := checkSeries(ser, xs); err != nil {
			panic(errors.Wrapf(err, "plot.Lines(%q)", title))
		}
		c := color(i)
		addLine(line, ser, xs, c, s)
		names = append(names, ser.Name)
		if ser.Lo != nil {
			addBand(line, i, ser, xs, c, s)
			hasBands = true
		}
	}
	lo, hi := dataRange(s.logY, ys...)
	fr := frame{xLabelH: 22, yLabelW: valueLabelWidth(lo, hi, s.logY)}
	if len(series) > 1 {
		fr.legend = legendNames(names)
	}
	fns := []func(map[string]any){s.layoutPatch(title, fr)}
	if hasBands {
		fns = append(fns, quietBands)
	}
	line.Accept(patcher{fns: fns})
	return line
}

// checkSeries returns an error describing the first length mismatch of ser against xs.
func checkSeries(ser Series, xs []float64) error {
	switch {
	case len(ser.Y) != len(xs):
		return errors.Errorf("series %q: len(Y)=%d, len(x)=%d", ser.Name, len(ser.Y), len(xs))
	case (ser.Lo == nil) != (ser.Hi == nil):
		return errors.Errorf("series %q: Lo and Hi must both be set or both be nil", ser.Name)
	case ser.Lo != nil && (len(ser.Lo) != len(xs) || len(ser.Hi) != len(xs)):
		return errors.Errorf("series %q: len(Lo)=%d, len(Hi)=%d, len(x)=%d", ser.Name, len(ser.Lo), len(ser.Hi), len(xs))
	}
	return nil
}

// addLine adds the visible curve: points [x, y], dashed when ser.Dashed.
func addLine(line *charts.Line, ser Series, xs []float64, c string, s settings) {
	ys := ser.Y
	data := make([]opts.LineData, 0, len(xs))
	for j, xv := range xs {
		if !usable(xv, s.logX) {
			continue
		}
		data = append(data, opts.LineData{Value: []any{xv, cell(ys[j], s.logY)}})
	}
	style, symbol := opts.LineStyle{Color: c, Width: 2}, "circle"
	if ser.Dashed {
		style, symbol = opts.LineStyle{Color: c, Width: 1.5, Type: "dashed"}, "triangle"
	}
	line.AddSeries(ser.Name, data,
		charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(len(data) <= maxSymbols), Symbol: symbol}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: c}),
		charts.WithLineStyleOpts(style),
	)
}

// addBand adds the two stacked series of an error band: the lower edge (invisible), then hi−lo with a
// filled area. Points are stored as [y, x] with encode {x: 1, y: 0} so that echarts stacks y (see doc.go).
func addBand(line *charts.Line, i int, ser Series, xs []float64, c string, s settings) {
	lower := make([]opts.LineData, 0, len(xs))
	width := make([]opts.LineData, 0, len(xs))
	for j, xv := range xs {
		if !usable(xv, s.logX) {
			continue
		}
		lo, hi := math.Min(ser.Lo[j], ser.Hi[j]), math.Max(ser.Lo[j], ser.Hi[j])
		if !usable(lo, s.logY) || !usable(hi, s.logY) {
			lower = append(lower, opts.LineData{Value: []any{missing, xv}})
			width = append(width, opts.LineData{Value: []any{missing, xv}})
			continue
		}
		lower = append(lower, opts.LineData{Value: []any{lo, xv}})
		width = append(width, opts.LineData{Value: []any{hi - lo, xv}})
	}
	stack := bandIDPrefix + strconv.Itoa(i)
	common := []charts.SeriesOpts{
		charts.WithLineChartOpts(opts.LineChart{Stack: stack, ShowSymbol: opts.Bool(false), Symbol: "none"}),
		charts.WithEncodeOpts(opts.Encode{X: 1, Y: 0}),
		charts.WithLineStyleOpts(opts.LineStyle{Color: c, Opacity: opts.Float(0)}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: c}),
	}
	line.AddSeries(ser.Name, lower, append(common, charts.WithSeriesId(stack+"-lo"))...)
	line.AddSeries(ser.Name, width, append(common,
		charts.WithSeriesId(stack+"-hi"),
		charts.WithAreaStyleOpts(opts.AreaStyle{Color: c, Opacity: opts.Float(0.2)}))...)
}
