package plot

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pkg/errors"
)

// Rendering is what headless Chromium drew for one chart with echarts' SVG renderer: the canvas size, every
// text element's box (CSS pixels, relative to the chart's top-left corner) and the parts of the final option
// that a reader depends on.
type Rendering struct {
	Title          string
	Width, Height  float64
	LegendType     string // the legend's type ("plain", "scroll"), "" when no legend is shown
	AxisNames      []string
	SeriesPoints   []int    // the number of data items of each series
	ColorBarLabels []string // for each visualMap, the text shown at its ends, joined
	ColorBarTexts  []string // every non-empty text shown at a visualMap's ends
	// Grid is the plot area (the first grid's rectangle; zero when the chart has none). ColorBars are the
	// drawn colour bars (each visualMap's view, its bar, handles and value labels).
	Grid      Box
	ColorBars []Box
	Texts     []RenderedText
}

// Box is a rectangle in CSS pixels relative to the chart's top-left corner.
type Box struct{ X, Y, W, H float64 }

// overlaps reports whether two boxes intersect by more than tol pixels in both directions (an empty box never
// does).
func (b Box) overlaps(u Box, tol float64) bool {
	if b.W <= 0 || b.H <= 0 || u.W <= 0 || u.H <= 0 {
		return false
	}
	return b.X+b.W-tol > u.X && u.X+u.W-tol > b.X && b.Y+b.H-tol > u.Y && u.Y+u.H-tol > b.Y
}

// RenderedText is one drawn text element and its bounding box.
type RenderedText struct {
	Text       string
	X, Y, W, H float64
	Rotated    bool // drawn at an angle: its box is the axis-aligned hull, so it is not tested for overlaps
}

// inside reports whether the box lies within a w×h canvas, with tol pixels of slack.
func (t RenderedText) inside(w, h, tol float64) bool {
	return t.X >= -tol && t.Y >= -tol && t.X+t.W <= w+tol && t.Y+t.H <= h+tol
}

// overlaps reports whether two boxes intersect by more than tol pixels in both directions.
func (t RenderedText) overlaps(u RenderedText, tol float64) bool {
	return t.X+t.W-tol > u.X && u.X+u.W-tol > t.X && t.Y+t.H-tol > u.Y && u.Y+u.H-tol > t.Y
}

// Problems lists what makes the rendering unfit for a paper: a paging legend, text outside the canvas, an
// axis name that is truncated or overlaps other text, an empty series, a colour bar without a label, and
// text elements drawn over one another.
func (r Rendering) Problems() []string {
	var p []string
	if r.LegendType == "scroll" {
		p = append(p, "the legend pages (type scroll)")
	}
	for _, t := range r.Texts {
		if !t.inside(r.Width, r.Height, 1) {
			p = append(p, fmt.Sprintf("text %q at (%.0f,%.0f) size %.0f×%.0f leaves the %.0f×%.0f canvas",
				t.Text, t.X, t.Y, t.W, t.H, r.Width, r.Height))
		}
	}
	for _, name := range r.AxisNames {
		lines := strings.Split(name, "\n") // a wrapped name is drawn line by line
		for _, line := range lines {
			i := r.text(line)
			if i < 0 {
				p = append(p, fmt.Sprintf("axis name %q is not drawn in full (truncated or missing)", line))
				continue
			}
			for j, u := range r.Texts {
				if j != i && r.Texts[i].overlaps(u, 1) && !slices.Contains(lines, u.Text) {
					p = append(p, fmt.Sprintf("axis name %q overlaps text %q", line, u.Text))
				}
			}
		}
	}
	for i, n := range r.SeriesPoints {
		if n == 0 {
			p = append(p, fmt.Sprintf("series %d has no data", i))
		}
	}
	for i, l := range r.ColorBarLabels {
		if strings.TrimSpace(l) == "" {
			p = append(p, fmt.Sprintf("colour bar %d has no label", i))
		}
	}
	for _, t := range r.Texts {
		if slices.Contains(r.ColorBarTexts, t.Text) && (Box{t.X, t.Y, t.W, t.H}).overlaps(r.Grid, 1) {
			p = append(p, fmt.Sprintf("colour bar label %q is drawn over the plot area", t.Text))
		}
	}
	for i, c := range r.ColorBars {
		if c.overlaps(r.Grid, 1) {
			p = append(p, fmt.Sprintf("colour bar %d is drawn over the plot area", i))
		}
	}
	for i, t := range r.Texts {
		for _, u := range r.Texts[i+1:] {
			if t.Text != "" && u.Text != "" && !t.Rotated && !u.Rotated && t.overlaps(u, 2) {
				p = append(p, fmt.Sprintf("text %q overlaps text %q", t.Text, u.Text))
			}
		}
	}
	return p
}

// text returns the index of the drawn text equal to s, or -1.
func (r Rendering) text(s string) int {
	for i, t := range r.Texts {
		if t.Text == s {
			return i
		}
	}
	return -1
}

// inspectScript collects a Rendering from the chart re-created by exportScript with the SVG renderer.
const inspectScript = `(function(){
  var el = document.querySelector(".item");
  var c = echarts.getInstanceByDom(el);
  var o = c.getOption();
  var box = el.getBoundingClientRect();
  var r = {Title: (o.title && o.title[0] && o.title[0].text) || "", Width: box.width, Height: box.height,
    LegendType: "", AxisNames: [], SeriesPoints: [], ColorBarLabels: [], ColorBarTexts: [], Grid: {X: 0, Y: 0, W: 0, H: 0},
    ColorBars: [], Texts: []};
  var g = c.getModel().getComponent("grid");
  if (g && g.coordinateSystem) { var gr = g.coordinateSystem.getRect(); r.Grid = {X: gr.x, Y: gr.y, W: gr.width, H: gr.height}; }
  (c._componentsViews || []).forEach(function(v){
    if (v && v.type && v.type.indexOf("visualMap") === 0 && v.group) {
      var b = v.group.getBoundingRect(); var m = v.group.transform;
      var x = b.x + (m ? m[4] : 0), y = b.y + (m ? m[5] : 0);
      r.ColorBars.push({X: x, Y: y, W: b.width, H: b.height});
    }
  });
  (o.legend || []).forEach(function(l){ if (l.show !== false) { r.LegendType = l.type || "plain"; } });
  ["xAxis", "yAxis"].forEach(function(k){ (o[k] || []).forEach(function(a){ if (a.name) { r.AxisNames.push(a.name); } }); });
  (o.series || []).forEach(function(s){ r.SeriesPoints.push((s.data || []).length); });
  (o.visualMap || []).forEach(function(v){
    r.ColorBarLabels.push((v.text || []).join(" "));
    (v.text || []).forEach(function(t){ if (t) { r.ColorBarTexts.push(t); } });
  });
  el.querySelectorAll("svg text").forEach(function(t){
    var b = t.getBoundingClientRect();
    if (b.width === 0 && b.height === 0) { return; }
    var s = t.textContent;
    if (t.parentNode && t.parentNode.tagName === "text") { return; }
    var m = t.transform.baseVal.consolidate();
    var rot = !!m && (Math.abs(m.matrix.b) > 1e-6 || Math.abs(m.matrix.c) > 1e-6);
    r.Texts.push({Text: s, X: b.left - box.left, Y: b.top - box.top, W: b.width, H: b.height, Rotated: rot});
  });
  return JSON.stringify(r);
})()`

// Inspect renders each chart in one headless Chromium (SVG renderer, no animation) and returns what was
// drawn. It needs Chromium and the echarts library (see ChromiumPath, EchartsPath).
func Inspect(ctx context.Context, cs ...Chart) ([]Rendering, error) {
	js, err := EchartsJS()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "protolab-inspect-")
	if err != nil {
		return nil, errors.Wrap(err, "plot.Inspect: creating a temporary folder")
	}
	defer os.RemoveAll(dir)
	bctx, cancel, err := newBrowser(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	out := make([]Rendering, 0, len(cs))
	for i, c := range cs {
		f := renderFragment(c)
		path := filepath.Join(dir, fmt.Sprintf("chart%d.html", i))
		if err := os.WriteFile(path, page(f, js, exportScript(f.id, "svg")), 0o644); err != nil {
			return nil, errors.Wrapf(err, "plot.Inspect: writing %s", path)
		}
		w, h := f.size()
		if err := chromedp.Do(bctx, chromedp.EmulateViewport(int64(w+64), int64(h+64)),
			chromedp.Navigate(fileURL(path))); err != nil {
			return nil, errors.Wrapf(err, "plot.Inspect: loading chart %d (%q)", i, f.title)
		}
		state, err := chromedp.Run(bctx, chromedp.Poll[string](
			`window.__protolab && (window.__protolab.error || (window.__protolab.ready && "ok"))`,
			chromedp.WithPollingTimeout(30*time.Second)))
		if err != nil || state != "ok" {
			return nil, errors.Errorf("plot.Inspect: chart %d (%q) did not render: %v %s", i, f.title, err, state)
		}
		raw, err := chromedp.Run(bctx, chromedp.Evaluate[string](inspectScript))
		if err != nil {
			return nil, errors.Wrapf(err, "plot.Inspect: reading chart %d (%q)", i, f.title)
		}
		var r Rendering
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return nil, errors.Wrapf(err, "plot.Inspect: decoding chart %d (%q)", i, f.title)
		}
		out = append(out, r)
	}
	return out, nil
}

// BrowserAvailable returns nil when Inspect can run: Chromium and the echarts library are installed.
func BrowserAvailable() error {
	if _, err := EchartsPath(); err != nil {
		return err
	}
	_, err := ChromiumPath()
	return err
}

// CheckRendered renders the charts with Inspect and returns an error listing every chart's Problems, or nil.
func CheckRendered(ctx context.Context, cs ...Chart) error {
	rs, err := Inspect(ctx, cs...)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, r := range rs {
		if p := r.Problems(); len(p) > 0 {
			fmt.Fprintf(&b, "\nchart %q (%.0f×%.0f):\n  %s", r.Title, r.Width, r.Height, strings.Join(p, "\n  "))
		}
	}
	if b.Len() > 0 {
		return errors.New("plot: figures unfit for a paper:" + b.String())
	}
	return nil
}
