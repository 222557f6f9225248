package plot

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// optionOf returns the chart's echarts option as go-echarts renders it, decoded from JSON.
func optionOf(t *testing.T, c Chart) map[string]any {
	t.Helper()
	var o map[string]any
	require.NoError(t, json.Unmarshal([]byte(c.RenderSnippet().Option), &o), "option must be plain JSON")
	return o
}

// list returns option[key] as a list of objects (go-echarts writes axes and series as lists).
func list(t *testing.T, o map[string]any, key string) []map[string]any {
	t.Helper()
	raw, ok := o[key].([]any)
	require.True(t, ok, "option[%q] = %#v, want a list", key, o[key])
	out := make([]map[string]any, len(raw))
	for i, r := range raw {
		out[i] = r.(map[string]any)
	}
	return out
}

// points returns series["data"][k]["value"] for each k.
func points(t *testing.T, series map[string]any) [][]any {
	t.Helper()
	var out [][]any
	for _, d := range series["data"].([]any) {
		v, ok := d.(map[string]any)["value"].([]any)
		require.True(t, ok, "data item %#v has no list value", d)
		out = append(out, v)
	}
	return out
}

func TestLines_SeriesAxesAndBands(t *testing.T) {
	x := []float64{1, 2, 3, 5, 8}
	theory := []float64{1, 0.5, 0.33, 0.2, 0.125}
	sim := []float64{1.1, 0.45, math.NaN(), 0.22, 0.1}
	lo := []float64{0.9, 0.4, 0.3, 0.15, 0.08}
	hi := []float64{1.3, 0.5, 0.4, 0.3, 0.12}
	c := Lines("MSE vs depth", x, []Series{
		{Name: "theory", Y: theory},
		{Name: "simulation", Y: sim, Lo: lo, Hi: hi},
	}, AxisNames("depth", "MSE"), Subtitle("tree prior"))
	o := optionOf(t, c)

	title := o["title"].(map[string]any)
	require.Equal(t, "MSE vs depth", title["text"])
	require.Equal(t, "tree prior", title["subtext"])
	xa, ya := list(t, o, "xAxis")[0], list(t, o, "yAxis")[0]
	require.Equal(t, "value", xa["type"])
	require.Equal(t, "value", ya["type"])
	require.Equal(t, "depth", xa["name"])
	require.Equal(t, "MSE", ya["name"])

	series := list(t, o, "series")
	require.Len(t, series, 4, "two lines plus the two helper series of one band")
	for i, want := range []string{"theory", "simulation", "simulation", "simulation"} {
		require.Equal(t, want, series[i]["name"], "series %d", i)
		require.Equal(t, "line", series[i]["type"])
		require.Len(t, series[i]["data"], len(x), "series %d", i)
	}
	// The visible curves are [x, y]; NaN becomes echarts' missing marker.
	for j, p := range points(t, series[1]) {
		require.Equal(t, x[j], p[0])
		if math.IsNaN(sim[j]) {
			require.Equal(t, missing, p[1])
		} else {
			require.Equal(t, sim[j], p[1])
		}
	}
	// Band helpers: [lo, x] then [hi-lo, x], stacked, with y taken from dimension 0.
	lower, width := series[2], series[3]
	require.Equal(t, lower["stack"], width["stack"])
	require.NotEmpty(t, lower["stack"])
	for _, s := range []map[string]any{lower, width} {
		require.Equal(t, map[string]any{"x": 1.0, "y": 0.0}, s["encode"])
		require.Equal(t, true, s["silent"])
		require.Equal(t, map[string]any{"show": false}, s["tooltip"])
	}
	require.Nil(t, series[1]["silent"], "the visible line must keep its tooltip")
	require.NotNil(t, width["areaStyle"])
	require.Nil(t, lower["areaStyle"])
	lp, wp := points(t, lower), points(t, width)
	for j := range x {
		require.Equal(t, x[j], lp[j][1])
		require.Equal(t, lo[j], lp[j][0])
		require.InDelta(t, hi[j]-lo[j], wp[j][0].(float64), 1e-12*(1+math.Abs(hi[j])))
	}
	// The band has the colour of its line.
	lineColor := series[1]["itemStyle"].(map[string]any)["color"]
	require.Equal(t, lineColor, width["areaStyle"].(map[string]any)["color"])
	require.NotEqual(t, series[0]["itemStyle"].(map[string]any)["color"], lineColor)
}

func TestLines_LogAxesDropAndGapNonPositive(t *testing.T) {
	x := []float64{0, 1, 10, 100}
	y := []float64{500, -1, 2, 3}
	c := Lines("log", x, []Series{{Name: "a", Y: y, Lo: []float64{1, 1, 0, 1}, Hi: []float64{900, 9, 3, 4}}}, LogX(), LogY())
	o := optionOf(t, c)
	require.Equal(t, "log", list(t, o, "xAxis")[0]["type"])
	require.Equal(t, "log", list(t, o, "yAxis")[0]["type"])
	series := list(t, o, "series")
	// x = 0 cannot sit on a log axis: the point is dropped from the line and from both band series.
	for _, s := range series {
		require.Len(t, s["data"], 3)
	}
	p := points(t, series[0])
	require.Equal(t, []any{1.0, missing}, p[0], "y ≤ 0 is a gap on a log axis")
	require.Equal(t, []any{10.0, 2.0}, p[1])
	// lo = 0 at x = 10: no band there.
	require.Equal(t, missing, points(t, series[1])[1][0])
	require.Equal(t, missing, points(t, series[2])[1][0])
}

func TestLines_PerSeriesXAndPanics(t *testing.T) {
	c := Lines("own x", nil, []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{3, 4}}, {Name: "b", X: []float64{5}, Y: []float64{6}}})
	series := list(t, optionOf(t, c), "series")
	require.Equal(t, []any{5.0, 6.0}, points(t, series[1])[0])

	require.Panics(t, func() { Lines("bad", []float64{1, 2}, []Series{{Name: "a", Y: []float64{1}}}) })
	require.Panics(t, func() { Lines("bad", []float64{1}, []Series{{Name: "a", Y: []float64{1}, Lo: []float64{0}}}) })
	require.Panics(t, func() {
		Lines("bad", []float64{1}, []Series{{Name: "a", Y: []float64{1}, Lo: []float64{0}, Hi: []float64{1, 2}}})
	})
}

func TestBars_GroupsAndCategories(t *testing.T) {
	cats := []string{"ProtoT", "LLaMA", "DeltaNet"}
	groups := []BarGroup{{Name: "train", Values: []float64{3.1, 290, 3.3}}, {Name: "valid", Values: []float64{3.4, 320, math.Inf(1)}}}
	o := optionOf(t, Bars("perplexity", cats, groups, LogY(), AxisNames("model", "ppl")))
	require.Equal(t, "perplexity", o["title"].(map[string]any)["text"])
	xa := list(t, o, "xAxis")[0]
	require.Equal(t, "category", xa["type"])
	require.Equal(t, []any{"ProtoT", "LLaMA", "DeltaNet"}, xa["data"])
	require.Equal(t, 0.0, xa["axisLabel"].(map[string]any)["interval"], "every category label is shown (a number, not a string)")
	require.Equal(t, "log", list(t, o, "yAxis")[0]["type"])
	series := list(t, o, "series")
	require.Len(t, series, len(groups))
	for i, g := range groups {
		require.Equal(t, g.Name, series[i]["name"])
		require.Equal(t, "bar", series[i]["type"])
		data := series[i]["data"].([]any)
		require.Len(t, data, len(cats))
		for j, v := range g.Values {
			got := data[j].(map[string]any)["value"]
			if math.IsInf(v, 0) {
				require.Equal(t, missing, got)
			} else {
				require.Equal(t, v, got)
			}
		}
	}
	require.Panics(t, func() { Bars("bad", cats, []BarGroup{{Name: "a", Values: []float64{1}}}) })
}

func TestHeatmap_CategoryAxesCellsAndScale(t *testing.T) {
	xl := []string{"gender", "place", "topic", "number"}
	yl := []string{"p0", "p1", "p2"}
	values := [][]float64{{1, 0.5, -0.2, 0}, {0.1, math.NaN(), 0.3, 0.9}, {-1.5, 0.2, 0.4, 0.6}}
	o := optionOf(t, Heatmap("prototype × concept", xl, yl, values, AxisNames("concept", "prototype")))
	xa, ya := list(t, o, "xAxis")[0], list(t, o, "yAxis")[0]
	require.Equal(t, "category", xa["type"])
	require.Equal(t, "category", ya["type"])
	require.Equal(t, []any{"gender", "place", "topic", "number"}, xa["data"], "x categories (HeatMap.SetXAxis is ignored upstream)")
	require.Equal(t, []any{"p0", "p1", "p2"}, ya["data"])
	require.Equal(t, true, ya["inverse"], "row 0 at the top")

	series := list(t, o, "series")
	require.Len(t, series, 1)
	require.Equal(t, "heatmap", series[0]["type"])
	cells := points(t, series[0])
	require.Len(t, cells, len(xl)*len(yl)-1, "the NaN cell is left out")
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cells {
		j, i := int(c[0].(float64)), int(c[1].(float64))
		require.Equal(t, values[i][j], c[2], "cell (%s, %s)", xl[j], yl[i])
		lo, hi = math.Min(lo, values[i][j]), math.Max(hi, values[i][j])
	}
	vm := list(t, o, "visualMap")[0]
	require.InDelta(t, lo, vm["min"], 1e-6)
	require.InDelta(t, hi, vm["max"], 1e-6)

	vm = list(t, optionOf(t, Heatmap("d", xl, yl, values, Diverging())), "visualMap")[0]
	require.InDelta(t, -1.5, vm["min"], 1e-6, "diverging range is ±max|v|")
	require.InDelta(t, 1.5, vm["max"], 1e-6)

	vm = list(t, optionOf(t, Heatmap("c", []string{"a"}, []string{"b"}, [][]float64{{2}})), "visualMap")[0]
	require.Greater(t, vm["max"].(float64), vm["min"].(float64), "a constant matrix still gets a non-empty range")
	vm = list(t, optionOf(t, Heatmap("z", []string{"a", "b"}, []string{"c"}, [][]float64{{-1, 0}})), "visualMap")[0]
	require.NotNil(t, vm["max"], "a zero max would be dropped (omitempty) and echarts would default to 200")
	require.InDelta(t, 0, vm["max"], 1e-30)

	require.Panics(t, func() { Heatmap("bad", xl, yl, values[:2]) })
	require.Panics(t, func() { Heatmap("bad", xl[:3], yl, values) })
}

func TestScatter_GroupsLabelsAndLogAxes(t *testing.T) {
	g := []Points{
		{Name: "nouns", X: []float64{1, 10, -3}, Y: []float64{2, 200, 5}, Labels: []string{"cat", "dog", "neg"}},
		{Name: "verbs", X: []float64{100}, Y: []float64{math.NaN()}},
	}
	o := optionOf(t, Scatter("embedding", g, LogX(), LogY()))
	require.Equal(t, "log", list(t, o, "xAxis")[0]["type"])
	require.Equal(t, "log", list(t, o, "yAxis")[0]["type"])
	series := list(t, o, "series")
	require.Len(t, series, 2)
	require.Equal(t, "scatter", series[0]["type"])
	data := series[0]["data"].([]any)
	require.Len(t, data, 2, "x = -3 cannot sit on a log axis")
	require.Equal(t, "dog", data[1].(map[string]any)["name"])
	require.Equal(t, []any{10.0, 200.0}, data[1].(map[string]any)["value"])
	require.Empty(t, series[1]["data"], "a NaN point is dropped")
	require.Panics(t, func() { Scatter("bad", []Points{{Name: "a", X: []float64{1}, Y: nil}}) })
}

func TestOptions_SizeAndRenderer(t *testing.T) {
	c := Lines("s", []float64{1}, []Series{{Name: "a", Y: []float64{1}}}, Size(640, 320), Canvas())
	f := renderFragment(c)
	w, h := f.size()
	require.Equal(t, [2]int{640, 320}, [2]int{w, h})
	require.Contains(t, f.script, `renderer: "canvas"`)
	f = renderFragment(Lines("s", []float64{1}, []Series{{Name: "a", Y: []float64{1}}}))
	require.Contains(t, f.script, `renderer: "svg"`, "SVG is the default renderer")
	w, h = f.size()
	require.Equal(t, [2]int{DefaultWidth, DefaultHeight}, [2]int{w, h})
}

// Every builder draws a plain legend (never paged) only when it has more than one entry, names its axes in
// the middle of each axis, and gives the grid room for the wrapped legend rows.
func TestLayout_PlainLegendMiddleNamesAndGridRoom(t *testing.T) {
	var many []Series
	for i := range 9 {
		many = append(many, Series{Name: fmt.Sprintf("series %d with a long name", i), Y: []float64{1, 2}})
	}
	few := Lines("few", []float64{1, 2}, many[:2], AxisNames("x (s)", "y (m)"))
	lots := Lines("many", []float64{1, 2}, many, AxisNames("x (s)", "y (m)"))
	one := Bars("one", []string{"a"}, []BarGroup{{Name: "g", Values: []float64{1}}}, AxisNames("c", "v (ms)"))
	for _, c := range []Chart{few, lots, one,
		Scatter("s", []Points{{Name: "a", X: []float64{1}, Y: []float64{2}}}, AxisNames("x", "y")),
		Heatmap("h", []string{"a"}, []string{"b"}, [][]float64{{1}}, AxisNames("x", "y"))} {
		o := optionOf(t, c)
		legend := o["legend"].(map[string]any)
		require.Equal(t, "plain", legend["type"])
		for _, key := range []string{"xAxis", "yAxis"} {
			a := list(t, o, key)[0]
			require.Equal(t, "middle", a["nameLocation"], key)
			require.Greater(t, a["nameGap"].(float64), 10.0, key)
		}
		require.Equal(t, true, list(t, o, "grid")[0]["containLabel"])
	}
	require.Equal(t, false, optionOf(t, one)["legend"].(map[string]any)["show"], "one series needs no legend")
	bottom := func(c Chart) float64 { return list(t, optionOf(t, c), "grid")[0]["bottom"].(float64) }
	require.Greater(t, bottom(lots), bottom(few)+legendRowH, "nine long names take more rows than two")
	var many40 []Series
	for i := range 40 {
		many40 = append(many40, Series{Name: fmt.Sprintf("series %d with a long name", i), Y: []float64{1, 2}})
	}
	_, h := renderFragment(Lines("forty", []float64{1, 2}, many40)).size()
	require.Greater(t, h, DefaultHeight+100, "a long legend makes the chart taller instead of squeezing the plot")
	_, h = renderFragment(Lines("forty", []float64{1, 2}, many40, Size(800, 450))).size()
	require.Equal(t, 450, h, "unless the size is given")
}

// LogY over less than MinLogSpan gives a linear axis that spans the data; over more, a log axis with minor
// ticks.
func TestLayout_LogAxisOnlyOverTwoDecades(t *testing.T) {
	narrow := optionOf(t, Lines("loss", []float64{1, 2, 3}, []Series{{Name: "a", Y: []float64{5.2, 3.1, 2.4}}}, LogY()))
	ya := list(t, narrow, "yAxis")[0]
	require.Equal(t, "value", ya["type"])
	require.Equal(t, true, ya["scale"], "zoomed on the data, not from 0")
	wide := optionOf(t, Lines("loss", []float64{1, 2, 3}, []Series{{Name: "a", Y: []float64{520, 3.1, 2.4}}}, LogY()))
	ya = list(t, wide, "yAxis")[0]
	require.Equal(t, "log", ya["type"])
	require.Equal(t, map[string]any{"show": true}, ya["minorTick"])
}

// A group with Right is drawn against a second, named value axis on the right.
func TestBars_RightAxis(t *testing.T) {
	o := optionOf(t, Bars("two units", []string{"a", "b"}, []BarGroup{{Name: "share (%)", Values: []float64{1, 2}},
		{Name: "half-life (tokens)", Values: []float64{100, 2000}, Right: true}}, RightAxis("half-life (tokens)")))
	ya := list(t, o, "yAxis")
	require.Len(t, ya, 2)
	require.Equal(t, "right", ya[1]["position"])
	require.Equal(t, "half-life (tokens)", ya[1]["name"])
	require.Equal(t, "middle", ya[1]["nameLocation"])
	series := list(t, o, "series")
	require.Nil(t, series[0]["yAxisIndex"])
	require.Equal(t, 1.0, series[1]["yAxisIndex"])
}

// ZoomY lets a bar chart's value axis start near the data, so a 0.19% difference is visible.
func TestBars_ZoomY(t *testing.T) {
	g := []BarGroup{{Name: "PRISM", Values: []float64{31.25}}, {Name: "dense", Values: []float64{31.31}}}
	require.Nil(t, list(t, optionOf(t, Bars("p", []string{"ppl"}, g)), "yAxis")[0]["scale"], "bars start at 0 by default")
	require.Equal(t, true, list(t, optionOf(t, Bars("p", []string{"ppl"}, g, ZoomY())), "yAxis")[0]["scale"])
}

// A heatmap's height follows its rows (at least HeatmapRowHeight pixels each), its colour bar carries the label,
// and an explicit Size wins.
func TestHeatmap_SizeFromRowsAndColourBarLabel(t *testing.T) {
	rows := make([]string, 8)
	values := make([][]float64, 8)
	for i := range rows {
		rows[i], values[i] = fmt.Sprintf("p%d", i), []float64{float64(i), 1}
	}
	c := Heatmap("h", []string{"a", "b"}, rows, values, ColorBar("ΔMSE (nats²)"))
	_, h := renderFragment(c).size()
	require.GreaterOrEqual(t, float64(h), 8*HeatmapRowHeight+70, "eight rows of %v px besides the title", HeatmapRowHeight)
	vm := list(t, optionOf(t, c), "visualMap")[0]
	require.Equal(t, []any{"ΔMSE (nats²)", ""}, vm["text"])
	vm = list(t, optionOf(t, Heatmap("h", []string{"a"}, []string{"b"}, [][]float64{{1}})), "visualMap")[0]
	require.Equal(t, []any{"value", ""}, vm["text"], "a heatmap without ColorBar is still labelled")
	w, h := renderFragment(Heatmap("h", []string{"a", "b"}, rows, values, Size(500, 300))).size()
	require.Equal(t, [2]int{500, 300}, [2]int{w, h})
}

// Dashed marks the predicted member of a measured/predicted pair.
func TestLines_DashedSeries(t *testing.T) {
	o := optionOf(t, Lines("p", []float64{1, 2}, []Series{{Name: "measured", Y: []float64{1, 2}},
		{Name: "predicted", Y: []float64{1, 2}, Dashed: true}}))
	series := list(t, o, "series")
	require.Nil(t, series[0]["lineStyle"].(map[string]any)["type"])
	require.Equal(t, "dashed", series[1]["lineStyle"].(map[string]any)["type"])
	require.NotEqual(t, series[0]["symbol"], series[1]["symbol"])
}
