package plot

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/pkg/errors"
)

// ExportTimeout bounds one PNG, SVG or PDF export (or one ExportAll), browser start included.
var ExportTimeout = 90 * time.Second

// PNGScale is the device pixel ratio of PNG exports (2 gives sharp figures at the chart's CSS size).
var PNGScale = 2.0

// Export writes c to path, in the format its extension names: .html (standalone page with the echarts
// library inlined; opens offline), .png (screenshot of the chart rendered by headless Chromium), .svg (the
// chart rendered by echarts' SVG renderer in headless Chromium) or .pdf (Chromium's print of the SVG
// rendering: vector, one page the size of the chart). The file is written atomically.
func Export(c Chart, path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".html", ".htm", ".png", ".svg", ".pdf":
	default:
		return errors.Errorf("plot.Export: unsupported extension %q in %s (want .html, .png, .svg or .pdf)", ext, path)
	}
	_, err := export(c, []string{path})
	return err
}

// ExportFormats are the extensions ExportAll writes.
var ExportFormats = []string{".html", ".png", ".svg", ".pdf"}

// ExportAll writes c as base.html, base.png, base.svg and base.pdf (see Export), rendering once in one
// Chromium, and returns the paths written.
func ExportAll(c Chart, base string) ([]string, error) {
	return export(c, formatPaths(base))
}

// formatPaths returns base with each extension of ExportFormats.
func formatPaths(base string) []string {
	paths := make([]string, len(ExportFormats))
	for i, ext := range ExportFormats {
		paths[i] = base + ext
	}
	return paths
}

// export writes c to each path in the format of its extension, starting Chromium once when a path needs it.
func export(c Chart, paths []string) ([]string, error) {
	if len(browserFormats(paths)) == 0 {
		return exportIn(nil, c, paths)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ExportTimeout)
	defer cancel()
	bctx, stop, err := newBrowser(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	return exportIn(bctx, c, paths)
}

// browserFormats returns the formats among the paths' extensions that need Chromium ("png", "svg", "pdf").
func browserFormats(paths []string) []string {
	var formats []string
	for _, p := range paths {
		if ext := strings.ToLower(filepath.Ext(p)); ext == ".png" || ext == ".svg" || ext == ".pdf" {
			formats = append(formats, ext[1:])
		}
	}
	return formats
}

// exportIn writes c to each path in the format of its extension, rendering in the browser tab bctx (nil when
// every path is HTML).
func exportIn(bctx context.Context, c Chart, paths []string) ([]string, error) {
	f := renderFragment(c)
	js, err := EchartsJS()
	if err != nil {
		return nil, err
	}
	var drawn map[string][]byte
	if formats := browserFormats(paths); len(formats) > 0 {
		if drawn, err = renderFormatsIn(bctx, f, js, formats); err != nil {
			return nil, errors.WithMessagef(err, "plot.Export %s", strings.Join(paths, ", "))
		}
	}
	for _, p := range paths {
		data := page(f, js, "")
		if ext := strings.ToLower(filepath.Ext(p)); ext != ".html" && ext != ".htm" {
			data = drawn[ext[1:]]
		}
		if err := writeAtomic(p, data); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// Figure is a chart and the name it is exported under: a plain file name without extension, unique among the
// figures of one ExportFigures call.
type Figure struct {
	Name  string
	Chart Chart
}

// NamePart returns s made fit to be part of a figure's name, as a study names a figure after a corpus or a data
// source (which may be a file's path): lower-case ASCII letters and digits are kept, upper-case letters lowered and
// every other rune replaced by '_'.
func NamePart(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '_'
	}, s)
}

// CheckFigures returns an error naming the first figure with an empty, duplicate or path-like name, or a nil
// chart: what ExportFigures refuses.
func CheckFigures(figs []Figure) error {
	seen := map[string]bool{}
	for i, fig := range figs {
		switch {
		case fig.Name == "" || fig.Name != filepath.Base(fig.Name) || strings.HasPrefix(fig.Name, "."):
			return errors.Errorf("plot.ExportFigures: figure %d has name %q; want a plain file name without "+
				"folders or extension", i, fig.Name)
		case seen[fig.Name]:
			return errors.Errorf("plot.ExportFigures: two figures are called %q; give each a distinct name", fig.Name)
		case fig.Chart == nil:
			return errors.Errorf("plot.ExportFigures: figure %q has no chart", fig.Name)
		}
		seen[fig.Name] = true
	}
	return nil
}

// Charts returns the charts of figs, in order (for CheckRendered).
func Charts(figs []Figure) []Chart {
	out := make([]Chart, len(figs))
	for i, f := range figs {
		out[i] = f.Chart
	}
	return out
}

// ExportFigures writes every figure as FigurePath(Name) with each extension of ExportFormats (HTML, PNG, SVG and
// PDF, see Export), rendering them one after the other in one Chromium, and returns the paths written in order.
// ExportTimeout bounds each figure. On an error the figures before the failing one are written and returned. A figure with an empty, duplicate or path-like name, or a nil chart, is
// refused before anything is written.
func ExportFigures(figs ...Figure) ([]string, error) {
	return exportFigures(FigurePath, ExportFormats, figs)
}

// ExportFiguresTo is ExportFigures into the folder dir (dir/Name) in the formats exts names (a subset of
// ExportFormats; `protolab figures` writes the shipped results' figures as SVG only: small, text, diffable).
func ExportFiguresTo(dir string, exts []string, figs ...Figure) ([]string, error) {
	for _, ext := range exts {
		if !slices.Contains(ExportFormats, ext) {
			return nil, errors.Errorf("plot.ExportFiguresTo: format %q, want some of %v", ext, ExportFormats)
		}
	}
	return exportFigures(func(name string) string { return filepath.Join(dir, name) }, exts, figs)
}

// exportFigures writes every figure as base(Name) with each extension of exts, in one Chromium.
func exportFigures(base func(name string) string, exts []string, figs []Figure) ([]string, error) {
	if err := CheckFigures(figs); err != nil {
		return nil, err
	}
	if len(figs) == 0 {
		return nil, nil
	}
	// The browser lives as long as its context: the whole export, at most ExportTimeout per figure and one more
	// for the start. It starts here, on the browser's own context; each figure's shorter deadline is a context
	// derived from it, whose end must not stop the browser.
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(figs)+1)*ExportTimeout)
	defer cancel()
	bctx, stop, err := newBrowser(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := chromedp.Do(bctx); err != nil {
		return nil, errors.Wrap(err, "plot.ExportFigures: starting Chromium")
	}
	var written []string
	for _, fig := range figs {
		paths := make([]string, len(exts))
		for i, ext := range exts {
			paths[i] = base(fig.Name) + ext
		}
		ctx, cancel := context.WithTimeout(bctx, ExportTimeout)
		_, err := exportIn(ctx, fig.Chart, paths)
		cancel()
		if err != nil {
			return written, errors.WithMessagef(err, "figure %q", fig.Name)
		}
		written = append(written, paths...)
	}
	return written, nil
}

// chromiumFallback is where Debian's chromium package installs the browser.
var chromiumFallback = "/usr/bin/chromium"

// ChromiumPath returns the Chromium executable: `chromium` on PATH, else /usr/bin/chromium.
func ChromiumPath() (string, error) {
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	if isFile(chromiumFallback) {
		return chromiumFallback, nil
	}
	return "", errors.Errorf("plot: Chromium not found (no `chromium` on PATH, no %s); PNG and SVG export need "+
		"it: run `make setup-chromium`, or as root `apt-get install -y --no-install-recommends chromium`",
		chromiumFallback)
}

// newBrowser starts headless Chromium with a fresh profile and returns a chromedp context for one tab. The
// cancel function stops the browser and removes the profile.
func newBrowser(parent context.Context, extra ...chromedp.ExecAllocatorOption) (context.Context, context.CancelFunc, error) {
	exe, err := ChromiumPath()
	if err != nil {
		return nil, nil, err
	}
	profile, err := os.MkdirTemp("", "protolab-chromium-")
	if err != nil {
		return nil, nil, errors.Wrap(err, "plot: creating a Chromium profile folder")
	}
	options := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		// Without these, Chromium keeps trying to reach Google's services, which a closed network refuses.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	if os.Geteuid() == 0 {
		options = append(options, chromedp.NoSandbox) // Chromium refuses to start sandboxed as root
	}
	options = append(options, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(parent, options...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	cancel := func() {
		cancelTab()
		cancelAlloc()
		// Chromium's children may still write into the profile for a moment after it stops.
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return ctx, cancel, nil
}

// exportScript re-creates the chart with the given renderer and a white background, without animation and without
// progressive rendering (echarts draws a series above its progressive threshold in chunks over later frames, so a
// busy machine could read the SVG before the last chunk), and publishes the outcome as
// window.__protolab = {ready, error, svg()}.
func exportScript(id, renderer string) string {
	return `<script type="text/javascript">(function(){
  var st = window.__protolab = {ready: false, error: ""};
  try {
    var el = document.getElementById("` + id + `");
    var old = el && window.echarts && echarts.getInstanceByDom(el);
    if (!old) { throw new Error("the chart was not initialised (echarts missing or chart script failed)"); }
    var opt = old.getOption();
    old.dispose();
    opt.animation = false;
    (opt.series || []).forEach(function(s) { s.progressive = 0; });
    if (!opt.backgroundColor || opt.backgroundColor === "transparent") { opt.backgroundColor = "#ffffff"; }
    var c = echarts.init(el, null, {renderer: "` + renderer + `"});
    c.setOption(opt); // echarts flushes synchronously, so the chart is drawn when this returns
    st.svg = function() {
      if (c.renderToSVGString) { return c.renderToSVGString(); }
      var s = el.querySelector("svg");
      return s ? s.outerHTML : "";
    };
    st.ready = true;
  } catch (e) {
    st.error = String((e && e.stack) || e);
  }
})();</script>`
}

// renderInBrowser loads the fragment's standalone page in headless Chromium and returns one format: a PNG
// screenshot of the chart ("png"), its SVG ("svg") or a one-page PDF ("pdf").
func renderInBrowser(ctx context.Context, f fragment, js []byte, format string) ([]byte, error) {
	out, err := renderFormats(ctx, f, js, []string{format})
	if err != nil {
		return nil, err
	}
	return out[format], nil
}

// renderFormats loads the fragment's standalone page once in a new headless Chromium, with echarts' SVG renderer,
// and returns each requested format ("png", "svg", "pdf").
func renderFormats(ctx context.Context, f fragment, js []byte, formats []string) (map[string][]byte, error) {
	bctx, cancel, err := newBrowser(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	return renderFormatsIn(bctx, f, js, formats)
}

// renderFormatsIn is renderFormats in the browser tab bctx (see newBrowser).
func renderFormatsIn(bctx context.Context, f fragment, js []byte, formats []string) (map[string][]byte, error) {
	if f.id == "" {
		return nil, errors.New("plot: chart element has no id")
	}
	dir, err := os.MkdirTemp("", "protolab-export-")
	if err != nil {
		return nil, errors.Wrap(err, "plot: creating a temporary folder")
	}
	defer os.RemoveAll(dir)
	w, h := f.size()
	if w <= 0 || h <= 0 {
		w, h = DefaultWidth, DefaultHeight
	}
	// The printed page is the chart and the page's 16 px margin around it.
	pageCSS := fmt.Sprintf("<style>@page { size: %dpx %dpx; margin: 0; }</style>", w+32, h+32)
	pagePath := filepath.Join(dir, "chart.html")
	if err := os.WriteFile(pagePath, page(f, js, pageCSS+exportScript(f.id, "svg")), 0o644); err != nil {
		return nil, errors.Wrapf(err, "plot: writing %s", pagePath)
	}
	err = chromedp.Do(bctx,
		chromedp.EmulateViewport(int64(w+64), int64(h+64), chromedp.EmulateScale(PNGScale)),
		chromedp.Navigate(fileURL(pagePath)),
	)
	if err != nil {
		return nil, errors.Wrap(err, "plot: loading the chart page in Chromium")
	}
	state, err := chromedp.Run(bctx, chromedp.Poll[string](
		`window.__protolab && (window.__protolab.error || (window.__protolab.ready && "ok"))`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		return nil, errors.Wrap(err, "plot: waiting for the chart to render in Chromium")
	}
	if state != "ok" {
		return nil, errors.Errorf("plot: the chart failed to render in Chromium: %s", state)
	}
	out := map[string][]byte{}
	for _, format := range formats {
		switch format {
		case "svg":
			svg, err := chromedp.Run(bctx, chromedp.Evaluate[string](`window.__protolab.svg()`))
			if err != nil {
				return nil, errors.Wrap(err, "plot: reading the SVG from Chromium")
			}
			if !strings.Contains(svg, "<svg") {
				return nil, errors.New("plot: Chromium returned no <svg> element for the chart")
			}
			out[format] = []byte(svg)
		case "png":
			png, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.ID(f.id)))
			if err != nil {
				return nil, errors.Wrap(err, "plot: taking the chart screenshot in Chromium")
			}
			out[format] = png
		case "pdf":
			yes, zero := true, 0.0
			pdf, err := chromedp.Call(bctx, cdppage.PrintToPDF, cdppage.PrintToPDFParams{
				PrintBackground: &yes, PreferCSSPageSize: &yes, PageRanges: "1",
				MarginTop: &zero, MarginBottom: &zero, MarginLeft: &zero, MarginRight: &zero,
			})
			if err != nil {
				return nil, errors.Wrap(err, "plot: printing the chart to PDF in Chromium")
			}
			out[format] = pdf.Data
		default:
			return nil, errors.Errorf("plot: unknown export format %q", format)
		}
	}
	return out, nil
}

// fileURL returns the file:// URL of an absolute path.
func fileURL(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}
