package plot

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// requireBrowser skips the test when Chromium or the echarts library is missing.
func requireBrowser(t *testing.T) {
	t.Helper()
	requireEcharts(t)
	if _, err := ChromiumPath(); err != nil {
		t.Skipf("needs Chromium for browser rendering (`make setup-chromium` installs it): %v", err)
	}
}

func TestExport_PNGIsNonBlank(t *testing.T) {
	requireBrowser(t)
	path := filepath.Join(t.TempDir(), "fig.png")
	require.NoError(t, Export(sampleChart(), path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	bounds := img.Bounds()
	require.Equal(t, int(DefaultWidth*PNGScale), bounds.Dx(), "the chart element at the device scale")
	require.Equal(t, int(DefaultHeight*PNGScale), bounds.Dy())

	// Count pixels that differ from the white background, and those in the colour of each series.
	var ink, first, second int
	near := func(r, g, b uint32, hex string) bool {
		var cr, cg, cb uint32
		for i, p := range []*uint32{&cr, &cg, &cb} {
			*p = uint32(hexNibble(hex[1+2*i])<<4 | hexNibble(hex[2+2*i]))
		}
		d := math.Abs(float64(r>>8)-float64(cr)) + math.Abs(float64(g>>8)-float64(cg)) + math.Abs(float64(b>>8)-float64(cb))
		return d < 30
	}
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 < 245 || g>>8 < 245 || b>>8 < 245 {
				ink++
			}
			if near(r, g, b, Palette[0]) {
				first++
			}
			if near(r, g, b, Palette[1]) {
				second++
			}
		}
	}
	total := bounds.Dx() * bounds.Dy()
	t.Logf("%d×%d PNG: %d non-background pixels (%.1f%%), %d in series colour 0, %d in series colour 1",
		bounds.Dx(), bounds.Dy(), ink, 100*float64(ink)/float64(total), first, second)
	require.Greater(t, ink, total/50, "at least 2% of the pixels are drawn")
	require.Greater(t, first, 500, "the first line is drawn")
	require.Greater(t, second, 500, "the second line is drawn")
}

func hexNibble(c byte) uint32 {
	switch {
	case c >= '0' && c <= '9':
		return uint32(c - '0')
	case c >= 'a' && c <= 'f':
		return uint32(c-'a') + 10
	default:
		return uint32(c-'A') + 10
	}
}

func TestExport_SVGHasPaths(t *testing.T) {
	requireBrowser(t)
	path := filepath.Join(t.TempDir(), "fig.svg")
	require.NoError(t, Export(sampleChart(), path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	svg := string(b)
	require.True(t, strings.HasPrefix(strings.TrimSpace(svg), "<svg"), svg[:min(len(svg), 200)])
	require.Contains(t, svg, `xmlns="http://www.w3.org/2000/svg"`)
	paths := strings.Count(svg, "<path")
	t.Logf("SVG: %d bytes, %d <path> elements", len(svg), paths)
	require.Greater(t, paths, 10, "axes, grid lines, two curves and a band")
	require.Contains(t, svg, `fill-opacity="0.2"`, "the error band")
}

// TestExportedHTML_RendersOfflineUnderAMD opens an exported page in Chromium with every network request
// sent to a closed proxy and an AMD loader (a stand-in for RequireJS in Jupyter's HTML export) defined
// before the library. It checks that the chart is drawn, that window.echarts is echarts 5.4.3, that no
// http(s) request was made, and that the error band is stacked on y: its top is drawn at (x, Hi).
func TestExportedHTML_RendersOfflineUnderAMD(t *testing.T) {
	requireBrowser(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "fig.html")
	x := []float64{1, 3, 10, 30, 100}
	hi := []float64{2, 1.5, 1.2, 1.1, 1.05}
	c := Lines("band", x, []Series{{Name: "m", Y: []float64{1.5, 1.2, 1.0, 0.9, 0.85}, Lo: []float64{1, 0.9, 0.8, 0.7, 0.65}, Hi: hi}}, LogX())
	require.NoError(t, Export(c, path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	amd := `<script>window.define = function(){ window.__amdCalled = true; }; window.define.amd = {};</script>`
	html := strings.Replace(string(b), "<head>", "<head>\n"+amd, 1)
	require.NoError(t, os.WriteFile(path, []byte(html), 0o644))
	id := regexp.MustCompile(`id="(plot_[0-9a-f]+)"`).FindStringSubmatch(html)[1]

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bctx, stop, err := newBrowser(ctx,
		chromedp.Flag("proxy-server", "http://127.0.0.1:9"), // a closed port: nothing leaves the machine
		chromedp.Flag("proxy-bypass-list", "<-loopback>"))
	require.NoError(t, err)
	defer stop()

	var mu sync.Mutex
	var requests []string
	require.NoError(t, chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}))
	_, err = chromedp.Call(bctx, network.Enable, network.EnableParams{})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(fileURL(path))))

	drawn, err := chromedp.Run(bctx, chromedp.Poll[bool](
		`!!document.querySelector("#`+id+` svg path, #`+id+` canvas")`, chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err, "the chart never appeared in its div")
	require.True(t, drawn)
	version, err := chromedp.Run(bctx, chromedp.Evaluate[string](`window.echarts ? echarts.version : ""`))
	require.NoError(t, err)
	require.Equal(t, "5.4.3", version)
	amdCalled, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`!!window.__amdCalled`))
	require.NoError(t, err)
	require.False(t, amdCalled, "the wrapped bundle must not call an AMD define")

	// Series 2 is the band's top (hi−lo stacked on lo). Where echarts placed its points must be where
	// (x, hi) maps to on the axes; stacking x instead of y would shift them sideways.
	want := make([][2]float64, len(x))
	for i := range x {
		want[i] = [2]float64{x[i], hi[i]}
	}
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	layout, err := chromedp.Run(bctx, chromedp.Evaluate[map[string][]float64](`(function(){
		var c = echarts.getInstanceByDom(document.getElementById("`+id+`"));
		var pts = c.getModel().getSeriesByIndex(2).getData().getLayout("points");
		var want = [];
		`+string(wantJSON)+`.forEach(function(p){ want.push.apply(want, c.convertToPixel({xAxisIndex: 0, yAxisIndex: 0}, p)); });
		return {got: Array.from(pts), want: want};
	})()`))
	require.NoError(t, err)
	require.Len(t, layout["got"], 2*len(x))
	for i, w := range layout["want"] {
		require.InDelta(t, w, layout["got"][i], 0.5, "band top, point %d coordinate %d (pixels)", i/2, i%2)
	}

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, requests, "the page load itself is recorded")
	for _, u := range requests {
		require.False(t, strings.HasPrefix(u, "http:") || strings.HasPrefix(u, "https:"), "network request to %s", u)
	}
}

// ExportAll writes the four formats from one rendering: the HTML page, a PNG of the chart's size at PNGScale, an
// SVG, and a one-page vector PDF the size of the chart plus the page margin (1 CSS px = 0.75 pt).
func TestExportAll_HTMLPNGSVGPDF(t *testing.T) {
	requireBrowser(t)
	base := filepath.Join(t.TempDir(), "figs", "fig")
	paths, err := ExportAll(sampleChart(), base)
	require.NoError(t, err)
	require.Equal(t, []string{base + ".html", base + ".png", base + ".svg", base + ".pdf"}, paths)
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return b
	}
	require.Contains(t, string(read(paths[0])), "<!DOCTYPE html>")
	img, err := png.Decode(bytes.NewReader(read(paths[1])))
	require.NoError(t, err)
	require.Equal(t, int(DefaultWidth*PNGScale), img.Bounds().Dx())
	require.True(t, strings.HasPrefix(string(read(paths[2])), "<svg"))
	pdf := string(read(paths[3]))
	require.True(t, strings.HasPrefix(pdf, "%PDF-"), pdf[:min(len(pdf), 20)])
	require.Equal(t, 1, len(regexp.MustCompile(`/Type\s*/Page[^s]`).FindAllString(pdf, -1)), "one page")
	m := regexp.MustCompile(`/MediaBox\s*\[\s*0 0 ([0-9.]+) ([0-9.]+)\s*\]`).FindStringSubmatch(pdf)
	require.NotNil(t, m, "the page has a MediaBox")
	for i, want := range []float64{0.75 * (DefaultWidth + 32), 0.75 * (DefaultHeight + 32)} {
		got, err := strconv.ParseFloat(m[1+i], 64)
		require.NoError(t, err)
		require.InDelta(t, want, got, 1, "page size in points (Chromium rounds it)")
	}
	require.NoError(t, Export(sampleChart(), base+"-alone.pdf"), "Export writes a PDF too")
}

// ExportFigures writes every figure in every format under FigurePath, in order, each figure its own rendering
// (two different charts give different PNGs); a bad name or a nil chart is refused before anything is written.
func TestExportFigures_AllFormatsInOrder(t *testing.T) {
	requireBrowser(t)
	out := t.TempDir()
	t.Setenv(OutEnv, out)
	other := Bars("other", []string{"a", "b"}, []BarGroup{{Name: "g", Values: []float64{1, 3}}})
	paths, err := ExportFigures(Figure{Name: "first", Chart: sampleChart()}, Figure{Name: "second", Chart: other})
	require.NoError(t, err)
	var want []string
	for _, name := range []string{"first", "second"} {
		for _, ext := range ExportFormats {
			want = append(want, filepath.Join(out, "figures", name+ext))
		}
	}
	require.Equal(t, want, paths)
	for _, p := range paths {
		info, err := os.Stat(p)
		require.NoError(t, err)
		require.Positive(t, info.Size(), p)
	}
	a, err := os.ReadFile(paths[1])
	require.NoError(t, err)
	b, err := os.ReadFile(paths[5])
	require.NoError(t, err)
	require.NotEqual(t, a, b, "each figure is rendered, not the first one again")
}

func TestExportFigures_RefusesBadFigures(t *testing.T) {
	out := t.TempDir()
	t.Setenv(OutEnv, out)
	c := sampleChart()
	for _, tc := range []struct {
		figs []Figure
		want string
	}{
		{[]Figure{{Name: "", Chart: c}}, "plain file name"},
		{[]Figure{{Name: "sub/fig", Chart: c}}, "plain file name"},
		{[]Figure{{Name: "..", Chart: c}}, "plain file name"},
		{[]Figure{{Name: "a", Chart: c}, {Name: "a", Chart: c}}, `two figures are called "a"`},
		{[]Figure{{Name: "a"}}, `figure "a" has no chart`},
	} {
		_, err := ExportFigures(tc.figs...)
		require.ErrorContains(t, err, tc.want)
	}
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing written")
}

// NamePart makes a corpus name or a data source's file path a part of a figure name that CheckFigures accepts:
// letters lowered, digits kept, everything else '_'.
func TestNamePart(t *testing.T) {
	for in, want := range map[string]string{"brown": "brown", "Brown": "brown", "/data/My.txt": "_data_my_txt",
		"wordnet-3.1": "wordnet_3_1", "": "", "é": "_"} {
		require.Equal(t, want, NamePart(in), in)
		if want != "" {
			require.NoError(t, CheckFigures([]Figure{{Name: "fig_" + NamePart(in), Chart: sampleChart()}}))
		}
	}
}

// ExportFiguresTo writes only the formats asked for into the folder given (the shipped figures: SVG), the same
// bytes when the same charts are exported again (so a regenerated figure is a diff only when its data changed); an
// unknown format is refused before anything is written.
func TestExportFiguresTo_SVGOnlyAndStable(t *testing.T) {
	dir := t.TempDir()
	_, err := ExportFiguresTo(dir, []string{".svg", ".jpg"}, Figure{Name: "a", Chart: sampleChart()})
	require.ErrorContains(t, err, `format ".jpg"`)
	requireBrowser(t)
	other := Bars("other", []string{"a", "b"}, []BarGroup{{Name: "g", Values: []float64{1, 3}}})
	figs := []Figure{{Name: "first", Chart: sampleChart()}, {Name: "second", Chart: other}}
	paths, err := ExportFiguresTo(dir, []string{".svg"}, figs...)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "first.svg"), filepath.Join(dir, "second.svg")}, paths)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "SVG only")
	first, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	require.Contains(t, string(first), "<svg")
	_, err = ExportFiguresTo(dir, []string{".svg"}, figs...)
	require.NoError(t, err)
	again, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	require.Equal(t, string(first), string(again), "the same chart, the same SVG")
}

// TestExport_LargeHeatmapDrawsEveryCell exports a heatmap with more cells than echarts' progressive threshold
// (3,000 for heatmaps). echarts draws such a series in chunks over later animation frames; the export must draw
// every cell before it reads the SVG, whatever the machine's load (a busy machine once shipped a figure that lacked
// its last chunk).
func TestExport_LargeHeatmapDrawsEveryCell(t *testing.T) {
	requireBrowser(t)
	const nx, ny = 100, 60
	xs, ys := make([]string, nx), make([]string, ny)
	for i := range xs {
		xs[i] = strconv.Itoa(i)
	}
	values := make([][]float64, ny)
	for i := range ys {
		ys[i] = strconv.Itoa(i)
		values[i] = make([]float64, nx)
		for j := range values[i] {
			values[i][j] = float64((i*nx + j) % 97)
		}
	}
	path := filepath.Join(t.TempDir(), "heat.svg")
	require.NoError(t, Export(Heatmap("cells", xs, ys, values), path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	// Rectangles are closed paths "M…l w 0l0 h l−w 0Z": one per cell, and one split-area band per category of each
	// axis (Heatmap shades alternate rows and columns).
	rects := regexp.MustCompile(`<path d="M[0-9.]+ [0-9.]+l[0-9.]+ 0l0 [0-9.]+l-[0-9.]+ 0Z" fill="rgb`).FindAll(b, -1)
	require.Len(t, rects, nx*ny+nx+ny, "every cell of the heatmap is drawn, once")
}
