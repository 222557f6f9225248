package plot

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text metrics of echarts' default fonts, in CSS pixels: the average advance of a character, and line heights.
// They are estimates; the browser test checks that what they lay out stays inside the canvas.
const (
	charW       = 7.0  // 12 px labels, legend entries, subtitles and axis names
	titleCharW  = 10.5 // 18 px bold titles
	titleLineH  = 24.0
	labelLineH  = 16.0
	legendRowH  = 24.0 // 14 px item plus the 10 px gap
	legendIcon  = 25.0 + 5 + 10
	colorBarW   = 20.0 // echarts' default itemWidth of a continuous visualMap
	colorBarPad = 10.0
	// colorBarGap is the space between the bar and its end values (echarts' textGap plus the handle's label
	// offset); colorBarHandle how far a drag handle reaches out of the bar.
	colorBarGap    = 24.0
	colorBarHandle = 8.0
)

// frame is what surrounds a chart's plot area; layout turns it into the grid, legend, title and axis-name
// placement that keeps every element inside the canvas.
type frame struct {
	legend  []string // distinct legend entries; nil when the chart has no legend
	xLabelH float64  // height of the x tick labels
	yLabelW float64  // width of the y tick labels
	// rightLabelW is the width of the tick labels of a second value axis on the right; 0 when there is none.
	rightLabelW float64
	colorName   string // the colour bar's label; "" when the chart has no colour bar
	// colorDecimals is the number of decimals of the colour bar's end values: three significant digits;
	// colorLabelW the width of those values, drawn beside the bar.
	colorDecimals int
	colorLabelW   float64
}

// box is the computed layout of a chart of a given size.
type box struct {
	title, subtitle          string // wrapped to the canvas width
	yName, rightName         string // wrapped to the plot height
	top, bottom, left, right float64
	legendH                  float64
	colorBarRight            float64 // the colour bar's distance from the right edge
}

// layout computes where everything goes on a width×height canvas.
func (s settings) layout(title string, fr frame) box {
	w := float64(s.width)
	b := box{
		title:    wrap(title, int((w-40)/titleCharW)),
		subtitle: wrap(s.subtitle, int((w-40)/charW)),
	}
	b.top = 12 + lines(b.title)*titleLineH + lines(b.subtitle)*labelLineH + 14
	b.legendH = legendRows(fr.legend, w-40) * legendRowH
	b.bottom = b.legendH + 10
	if s.xName != "" {
		b.bottom += 28
	}
	b.left = 12
	if s.yName != "" {
		// The name's outer edge is left + (actual − estimated label width) + 20: this much overestimate fits.
		// A name longer than the plot is tall wraps, each further line needing room further left.
		b.left = 36
		plotH := float64(s.height) - b.top - b.bottom - fr.xLabelH
		b.yName = wrap(s.yName, int(math.Max(plotH-10, 60)/charW))
		b.left += (lines(b.yName) - 1) * labelLineH
	}
	b.right = 30
	if fr.rightLabelW > 0 && s.rightName != "" {
		b.right = 36 // room for the right axis's name, as on the left
		b.rightName = wrap(s.rightName, int(math.Max(float64(s.height)-b.top-b.bottom-fr.xLabelH-10, 60)/charW))
		b.right += (lines(b.rightName) - 1) * labelLineH
	}
	if fr.colorName != "" {
		// The colour bar component is, from left to right, the bar (with its drag handles) and the end values;
		// its right edge sits colorBarRight from the canvas edge. The label is centred over the bar. Both the
		// bar and the label stay clear of the plot area, and the label inside the canvas.
		textW := float64(utf8.RuneCountInString(fr.colorName)) * charW
		values := fr.colorLabelW + colorBarGap
		b.colorBarRight = math.Max(colorBarPad, textW/2+4-values-colorBarW/2)
		center := b.colorBarRight + values + colorBarW/2
		b.right = center + math.Max(colorBarW/2+colorBarHandle, textW/2) + 16
	}
	return b
}

// lines returns the number of lines of text ("" has none).
func lines(text string) float64 {
	if text == "" {
		return 0
	}
	return float64(strings.Count(text, "\n") + 1)
}

// wrap breaks text at spaces into lines of at most n characters (a longer word keeps its own line).
func wrap(text string, n int) string {
	if n < 10 {
		n = 10
	}
	var out []string
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			switch {
			case line == "":
				line = word
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= n:
				line += " " + word
			default:
				out = append(out, line)
				line = word
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// legendRows is the number of rows a plain, wrapping legend of these entries takes in the given width.
func legendRows(names []string, width float64) float64 {
	if len(names) == 0 {
		return 0
	}
	rows, x := 1.0, 0.0
	for _, n := range names {
		item := legendIcon + float64(utf8.RuneCountInString(n))*charW
		if x > 0 && x+item > width {
			rows++
			x = 0
		}
		x += item
	}
	return rows
}

// fitLegend makes a chart whose size was not given taller by the legend rows beyond two, so that a long legend
// does not squeeze the plot.
func (s *settings) fitLegend(names []string) {
	if s.sized || len(names) < 2 {
		return
	}
	if rows := legendRows(legendNames(names), float64(s.width)-40); rows > 2 {
		s.height += int((rows - 2) * legendRowH)
	}
}

// legendNames returns the distinct names in order (band helper series share their curve's name).
func legendNames(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// layoutPatch returns the configuration patch that applies the layout: a plain legend that wraps at the
// bottom, the grid sized for title, legend and axis names, axis names centred along their axes outside the
// tick labels, minor ticks on log axes, and the colour bar's label.
func (s settings) layoutPatch(title string, fr frame) func(map[string]any) {
	return func(option map[string]any) {
		b := s.layout(title, fr)
		if t := asMap(option["title"]); t != nil {
			t["text"], t["subtext"] = b.title, b.subtitle
			// Line heights that match the layout's estimates (echarts' default overlaps wrapped lines' glyphs).
			t["textStyle"] = map[string]any{"lineHeight": titleLineH}
			t["subtextStyle"] = map[string]any{"lineHeight": labelLineH}
			option["title"] = t
		}
		option["legend"] = map[string]any{
			"show": len(fr.legend) > 0, "type": "plain", "orient": "horizontal",
			"left": "center", "bottom": 4, "width": float64(s.width) - 40,
		}
		option["grid"] = []map[string]any{{
			"top": b.top, "bottom": b.bottom, "left": b.left, "right": b.right, "containLabel": true,
		}}
		for _, key := range []string{"xAxis", "yAxis"} {
			axes := asMaps(option[key])
			for i, a := range axes {
				if key == "yAxis" && i == 1 {
					a["splitLine"] = map[string]any{"show": false} // the left axis's grid lines are the chart's
					if a["name"] != "" && a["name"] != nil {
						a["nameLocation"], a["nameGap"], a["name"] = "middle", fr.rightLabelW+10, b.rightName
						a["nameTextStyle"] = map[string]any{"lineHeight": labelLineH}
					}
					continue
				}
				if name, _ := a["name"].(string); name != "" {
					a["nameLocation"] = "middle"
					if key == "xAxis" {
						a["nameGap"] = fr.xLabelH + 14
						a["name"] = wrap(name, int((float64(s.width)-b.left-b.right)/charW))
					} else {
						a["nameGap"] = fr.yLabelW + 10
						a["name"] = b.yName
						// Wrapped lines a line height apart (echarts' default, the font size, overlaps them).
						a["nameTextStyle"] = map[string]any{"lineHeight": labelLineH}
					}
				}
				if key == "xAxis" {
					// 4 px further down than echarts' default, so the first x label never touches the
					// lowest y label at the corner.
					label := asMap(a["axisLabel"])
					if label == nil {
						label = map[string]any{}
					}
					label["margin"] = 12
					a["axisLabel"] = label
				}
				if a["type"] == "log" {
					a["minorTick"] = map[string]any{"show": true}
					a["minorSplitLine"] = map[string]any{"show": true, "lineStyle": map[string]any{"opacity": 0.4}}
				}
			}
			if axes != nil {
				option[key] = axes
			}
		}
		if fr.colorName != "" {
			for _, vm := range asMaps(option["visualMap"]) {
				vm["text"] = []string{fr.colorName, ""}
				vm["right"] = b.colorBarRight
				vm["align"] = "left"
				vm["textGap"] = 12
				vm["precision"] = fr.colorDecimals
				option["visualMap"] = []map[string]any{vm}
				break
			}
		}
	}
}

// asMap converts a go-echarts option value into a generic map through JSON, or returns nil.
func asMap(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	ms := asMaps([]any{v})
	if len(ms) != 1 {
		return nil
	}
	return ms[0]
}

// categoryLabelSize returns the width of the widest label and the height the labels take on a horizontal axis
// rotated by deg degrees.
func categoryLabelSize(labels []string, deg float64) (w, h float64) {
	n := 0
	for _, l := range labels {
		n = max(n, utf8.RuneCountInString(l))
	}
	w = float64(n) * charW
	rad := deg * math.Pi / 180
	return w, w*math.Sin(rad) + 14*math.Cos(rad) + 4
}

// valueLabelWidth estimates the width of the tick labels of a value axis over [lo, hi] (a log axis labels
// powers of ten), as echarts formats them (thousands separators, the decimals of the tick step).
func valueLabelWidth(lo, hi float64, log bool) float64 {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) || hi < lo {
		return 3 * charW
	}
	chars := 1
	if log {
		for k := math.Floor(math.Log10(lo)); k <= math.Ceil(math.Log10(hi)); k++ {
			chars = max(chars, len(numberLabel(math.Pow(10, k), max(0, int(-k)))))
		}
		return float64(chars)*charW + 4
	}
	span := hi - lo
	if span == 0 {
		span = math.Max(math.Abs(hi), 1)
	}
	// echarts' tick step (numberUtil.nice with rounding): span/5 rounded to 1, 2, 3, 5 or 10 times a power of ten.
	exp := math.Pow(10, math.Floor(math.Log10(span/5)))
	step := exp * 10
	for _, c := range []struct{ below, m float64 }{{1.5, 1}, {2.5, 2}, {4, 3}, {7, 5}} {
		if span/5/exp < c.below {
			step = exp * c.m
			break
		}
	}
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	for _, v := range []float64{lo - step, hi + step} {
		chars = max(chars, len(numberLabel(v, decimals)))
	}
	return float64(chars+1) * charW // one character to spare: the layout tolerates an overestimate
}

// numberLabel formats v as echarts labels a tick: fixed decimals and thousands separators.
func numberLabel(v float64, decimals int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', decimals, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

// significantDecimals returns the decimals that show three significant digits of the larger of |lo| and |hi|.
func significantDecimals(lo, hi float64) int {
	m := math.Max(math.Abs(lo), math.Abs(hi))
	if m == 0 || math.IsInf(m, 0) || math.IsNaN(m) {
		return 0
	}
	return min(12, max(0, 2-int(math.Floor(math.Log10(m)))))
}

// dataRange returns the finite min and max of the values (positive only when log), or (+Inf, -Inf).
func dataRange(log bool, values ...[]float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, vs := range values {
		for _, v := range vs {
			if usable(v, log) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	return lo, hi
}
