package plot

import (
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// Default chart size in CSS pixels; change per chart with [Size].
const (
	DefaultWidth  = 800
	DefaultHeight = 450
)

// Palette is the series colour cycle, assigned explicitly so that a series and its error band share a colour:
// echarts' default palette, then six more distinct colours, so that a figure with up to fifteen series (the
// tree-prior figure has twelve) never gives two of them one colour.
var Palette = []string{
	"#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de",
	"#3ba272", "#fc8452", "#9a60b4", "#ea7ccc",
	"#8c564b", "#7f7f7f", "#bcbd22", "#1f3d7a", "#17becf", "#a50f15",
}

// Sequential (viridis) and diverging (blue-white-red) colour ramps for heatmaps.
var (
	sequentialRamp = []string{"#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"}
	divergingRamp  = []string{"#2166ac", "#67a9cf", "#f7f7f7", "#ef8a62", "#b2182b"}
)

// Option changes how a builder draws a chart. Options that do not apply to a chart type are ignored.
type Option func(*settings)

type settings struct {
	subtitle     string
	xName, yName string
	logX, logY   bool
	width        int
	height       int
	renderer     string
	colorRange   *[2]float64
	diverging    bool
	noAnimation  bool
	sized        bool   // Size was given: builders keep it instead of deriving one (heatmaps)
	colorName    string // the colour bar's label, with its unit (heatmaps)
	zoomY        bool   // the value axis of a bar chart spans the data, not 0
	rightName    string // the name of a bar chart's right value axis
}

func newSettings(options []Option) settings {
	s := settings{width: DefaultWidth, height: DefaultHeight, renderer: "svg"}
	for _, o := range options {
		if o != nil {
			o(&s)
		}
	}
	return s
}

// Subtitle sets the text under the title.
func Subtitle(text string) Option { return func(s *settings) { s.subtitle = text } }

// AxisNames sets the x and y axis names ("" leaves an axis unnamed).
func AxisNames(x, y string) Option {
	return func(s *settings) { s.xName, s.yName = x, y }
}

// LogX makes the x axis logarithmic (Lines, Scatter) when the positive data span at least MinLogSpan; points
// with x ≤ 0 are then dropped. Over a narrower span the axis is linear and spans the data, because a log axis
// over less than two decades labels at most two ticks and hides the differences.
func LogX() Option { return func(s *settings) { s.logX = true } }

// LogY makes the y axis logarithmic (Lines, Scatter, Bars) when the positive data span at least MinLogSpan;
// values ≤ 0 then become gaps. Over a narrower span the axis is linear and spans the data (see LogX).
func LogY() Option { return func(s *settings) { s.logY = true } }

// MinLogSpan is the smallest ratio max/min of the positive data for which LogX and LogY draw a log axis.
const MinLogSpan = 100.0

// ColorBar labels a heatmap's colour bar: the quantity and its unit, e.g. "ΔMSE (nats²)". Without it the bar
// is labelled "value".
func ColorBar(label string) Option { return func(s *settings) { s.colorName = label } }

// RightAxis names the right value axis of a bar chart, against which the groups with BarGroup.Right are drawn:
// a quantity in another unit than the left axis's, e.g. "half-life (tokens)" beside "mass share (%)".
func RightAxis(name string) Option { return func(s *settings) { s.rightName = name } }

// ZoomY makes the value axis of a bar chart span the data instead of starting at 0 (bars then start at the
// axis minimum): use it when the differences between bars are the point and are small against the values.
func ZoomY() Option { return func(s *settings) { s.zoomY = true } }

// Size sets the chart size in CSS pixels; non-positive values keep the default.
func Size(width, height int) Option {
	return func(s *settings) {
		if width > 0 {
			s.width = width
			s.sized = true
		}
		if height > 0 {
			s.height = height
			s.sized = true
		}
	}
}

// Canvas renders with echarts' canvas renderer instead of the default SVG renderer (faster for charts with
// many thousands of elements; SVG stays crisp in saved notebooks).
func Canvas() Option { return func(s *settings) { s.renderer = "canvas" } }

// ColorRange fixes the value range of a heatmap's colour scale (default: the data's finite min and max).
func ColorRange(lo, hi float64) Option {
	return func(s *settings) { s.colorRange = &[2]float64{lo, hi} }
}

// Diverging colours a heatmap with a blue-white-red ramp centred on zero (range ±max|v| unless ColorRange
// is given); use it for signed quantities such as effects or correlations.
func Diverging() Option { return func(s *settings) { s.diverging = true } }

// noAnimation turns echarts' animation off (live charts re-render often).
func noAnimation() Option { return func(s *settings) { s.noAnimation = true } }

// globalOptions returns the options every builder applies: size, renderer, title, tooltip trigger, legend
// and the plot grid (a zero grid means the default margins).
func (s settings) globalOptions(title, trigger string, legend bool, grid opts.Grid) []charts.GlobalOpts {
	if grid == (opts.Grid{}) {
		// Room for the title at the top and the legend and x axis name at the bottom.
		grid = opts.Grid{Top: "70", Bottom: "70", Left: "50", Right: "40", ContainLabel: opts.Bool(true)}
	}
	g := []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{
			Width:    fmt.Sprintf("%dpx", s.width),
			Height:   fmt.Sprintf("%dpx", s.height),
			Renderer: s.renderer,
		}),
		charts.WithTitleOpts(opts.Title{Title: title, Subtitle: s.subtitle}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: trigger}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(legend), Bottom: "4", Type: "plain"}),
		charts.WithGridOpts(grid),
	}
	if s.noAnimation {
		g = append(g, charts.WithAnimation(false))
	}
	return g
}

// logSpan reports whether a log axis suits values: their positive part spans at least MinLogSpan.
func logSpan(values ...[]float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, vs := range values {
		for _, v := range vs {
			if v > 0 && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	return hi >= lo && hi/lo >= MinLogSpan
}

// valueAxisType returns "log" or "value".
func valueAxisType(log bool) string {
	if log {
		return "log"
	}
	return "value"
}

// missing is echarts' marker for an absent value.
const missing = "-"

// cell returns v, or the missing marker when v is not finite or not positive on a log axis.
func cell(v float64, log bool) any {
	if math.IsNaN(v) || math.IsInf(v, 0) || (log && v <= 0) {
		return missing
	}
	return v
}

// usable reports whether v can be placed on an axis (finite, and positive on a log axis).
func usable(v float64, log bool) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!log || v > 0)
}

// color returns the palette colour of series i.
func color(i int) string { return Palette[i%len(Palette)] }
