package plot

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pkg/errors"
)

// ExportTimeout bounds one PNG or SVG export, browser start included.
var ExportTimeout = 90 * time.Second

// PNGScale is the device pixel ratio of PNG exports (2 gives sharp figures at the chart's CSS size).
var PNGScale = 2.0

// Export writes c to path, in the format its extension names: .html (standalone page with the echarts
// library inlined; opens offline), .png (screenshot of the chart rendered by headless Chromium) or .svg
// (the chart rendered by echarts' SVG renderer in headless Chromium). The file is written atomically.
func Export(c Chart, path string) error {
	f := renderFragment(c)
	js, err := EchartsJS()
	if err != nil {
		return err
	}
	var data []byte
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".html", ".htm":
		data = page(f, js, "")
	case ".png", ".svg":
		ctx, cancel := context.WithTimeout(context.Background(), ExportTimeout)
		defer cancel()
		data, err = renderInBrowser(ctx, f, js, ext[1:])
		if err != nil {
			return errors.WithMessagef(err, "plot.Export %s", path)
		}
	default:
		return errors.Errorf("plot.Export: unsupported extension %q in %s (want .html, .png or .svg)", ext, path)
	}
	return writeAtomic(path, data)
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

// exportScript re-creates the chart without animation, with the given renderer and a white background,
// and publishes the outcome as window.__protolab = {ready, error, svg()}.
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

// renderInBrowser loads the fragment's standalone page in headless Chromium and returns a PNG screenshot
// of the chart (format "png") or its SVG (format "svg").
func renderInBrowser(ctx context.Context, f fragment, js []byte, format string) ([]byte, error) {
	if f.id == "" {
		return nil, errors.New("plot: chart element has no id")
	}
	renderer := "canvas"
	if format == "svg" {
		renderer = "svg"
	}
	dir, err := os.MkdirTemp("", "protolab-export-")
	if err != nil {
		return nil, errors.Wrap(err, "plot: creating a temporary folder")
	}
	defer os.RemoveAll(dir)
	pagePath := filepath.Join(dir, "chart.html")
	if err := os.WriteFile(pagePath, page(f, js, exportScript(f.id, renderer)), 0o644); err != nil {
		return nil, errors.Wrapf(err, "plot: writing %s", pagePath)
	}

	bctx, cancel, err := newBrowser(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	w, h := f.size()
	if w <= 0 || h <= 0 {
		w, h = DefaultWidth, DefaultHeight
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
	if format == "svg" {
		svg, err := chromedp.Run(bctx, chromedp.Evaluate[string](`window.__protolab.svg()`))
		if err != nil {
			return nil, errors.Wrap(err, "plot: reading the SVG from Chromium")
		}
		if !strings.Contains(svg, "<svg") {
			return nil, errors.New("plot: Chromium returned no <svg> element for the chart")
		}
		return []byte(svg), nil
	}
	png, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.ID(f.id)))
	if err != nil {
		return nil, errors.Wrap(err, "plot: taking the chart screenshot in Chromium")
	}
	return png, nil
}

// fileURL returns the file:// URL of an absolute path.
func fileURL(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}
