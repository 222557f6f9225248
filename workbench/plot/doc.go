// Package plot builds go-echarts charts from plain Go data and shows or exports them offline.
//
// Builders (data first, each returns the go-echarts chart so callers can tweak it further):
//
//   - [Lines]: multi-series line chart on numeric x, optional error bands (Series.Lo/Hi), log axes.
//   - [Bars]: grouped bar chart over string categories.
//   - [Heatmap]: matrix of values with labelled category axes; values[i][j] is row yLabels[i], column xLabels[j],
//     row 0 drawn at the top.
//   - [Scatter]: point clouds on numeric axes, optional per-point labels.
//   - [Table]: a titled table of strings (an HTML table, no script) that Display shows like a chart; its String
//     method renders aligned text for reports.
//
// All builders take [Option] values ([Subtitle], [AxisNames], [LogX], [LogY], [Size], [Canvas], [ColorRange],
// [Diverging], [ColorBar], [ZoomY]); options that do not apply to a chart type are ignored.
//
// Layout, the same for every builder (layout.go): the legend is plain (it wraps onto more rows, never pages)
// and sits at the bottom; the grid leaves room for the wrapped title and subtitle, the legend rows and the axis
// names, which are centred along their axes outside the tick labels (sizes estimated from the data and labels;
// [Inspect] measures what Chromium drew and the tests check it). LogX and LogY give a log axis, with minor ticks,
// only when the data span at least [MinLogSpan]; narrower data get a linear axis zoomed on the data. A heatmap's
// size follows its rows and columns unless Size is given, and its colour bar carries the [ColorBar] label
// (quantity and unit). [Series].Dashed draws the predicted member of a measured/predicted pair dashed. Non-finite values (and values ≤ 0 on a
// log axis) become gaps ("-" in the echarts option) rather than breaking the JSON. Length mismatches between
// x and y data are programming errors and panic.
//
// Error bands are drawn as two stacked, invisible line series (lower bound, then hi−lo with a filled area),
// named like their main series so the legend toggles line and band together. echarts 5.4.3 stacks a value/log
// x axis on the first numeric dimension, which would be x; the band series therefore store their points as
// [y, x] with encode {x: 1, y: 0}, which makes y the stacked dimension. The band series carry
// tooltip.show=false and silent=true, added by a configuration visitor, so tooltips list only real values.
//
// Showing and exporting (the echarts library is never fetched from a CDN):
//
//   - [Display]: inside GoNB (gonbui.IsNotebook) emits the echarts library once per kernel (GoNB runs each
//     cell as a new process; the first chart's cell leaves a marker in the kernel's $GONB_TMP_DIR, and
//     [ShowLibrary] sends it again on request) and then the chart with gonbui.DisplayHTML; outside a notebook writes a standalone
//     HTML file under $PROTOLAB_OUT (or os.TempDir()/protolab-figures) and prints its path.
//   - [Export]: .html (standalone, JS inlined), .png, .svg and .pdf (headless Chromium via chromedp; the PDF is
//     Chromium's print of the SVG rendering, one page the chart's size). [ExportAll] writes all four from one
//     rendering.
//   - [Inspect] and [CheckRendered]: render charts in headless Chromium and list what makes a figure unfit for a
//     paper (paging legend, text outside the canvas or overprinted, truncated axis name, empty series, colour bar
//     without a label); the figure tests of the studies call CheckRendered.
//   - [Live]: a training curve that re-renders in place (gonbui.UpdateHTML, throttled) and leaves a static chart
//     when Done. Its Record method has the signature of a training callback, func(step int, metrics
//     map[string]float64), so the trainer needs no import of this package.
//
// The echarts library (echarts.min.js 5.4.3, the version go-echarts v2.6.7 targets) is installed by
// `make setup` into assets/echarts/ and found through $PROTOLAB_ASSETS or by walking up from the working
// directory (or this package's source directory) to the protolab module root. It is wrapped so that it
// defines window.echarts even when RequireJS is on the page (Jupyter's classic HTML export), where the UMD
// header would otherwise call an anonymous define() and fail.
//
// Only this package imports github.com/janpfeifer/gonb/gonbui.
package plot
