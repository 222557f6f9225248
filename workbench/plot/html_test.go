package plot

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// sampleChart is a small chart with a band, used by the display and export tests.
func sampleChart() Chart {
	x := []float64{1, 2, 4, 8, 16}
	y := []float64{1, 0.6, 0.4, 0.3, 0.25}
	lo := []float64{0.8, 0.5, 0.3, 0.2, 0.2}
	hi := []float64{1.2, 0.7, 0.5, 0.4, 0.3}
	return Lines("loss vs width", x, []Series{
		{Name: "theory", Y: []float64{0.9, 0.5, 0.35, 0.28, 0.24}},
		{Name: "simulation", Y: y, Lo: lo, Hi: hi},
	}, LogX(), LogY(), AxisNames("width", "loss"))
}

// fakeAssets points $PROTOLAB_ASSETS at a folder whose echarts.min.js is the given text.
func fakeAssets(t *testing.T, js string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "echarts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "echarts", "echarts.min.js"), []byte(js), 0o644))
	t.Setenv(AssetsEnv, dir)
}

// requireEcharts skips the test when the real echarts library is not installed.
func requireEcharts(t *testing.T) []byte {
	t.Helper()
	js, err := EchartsJS()
	if err != nil {
		t.Skipf("echarts assets not installed (`make setup-echarts` installs them; `make test` runs it first): %v", err)
	}
	return js
}

func TestRenderFragment_FreshIDAndScopedScript(t *testing.T) {
	c := sampleChart()
	a, b := renderFragment(c), renderFragment(c)
	require.NotEqual(t, a.id, b.id, "each render gets its own DOM id")
	require.Contains(t, a.element, `id="`+a.id+`"`)
	require.Contains(t, a.script, `getElementById('`+a.id+`')`)
	require.True(t, strings.HasPrefix(a.script, `<script type="text/javascript">(function(){`), a.script[:80])
	require.True(t, strings.HasSuffix(a.script, "})();</script>"))
	require.Equal(t, 1, strings.Count(a.script, "<script"))
	require.Contains(t, a.script, "setOption(")
	require.Equal(t, "loss vs width", a.title)
	require.Equal(t, figureName(a), figureName(b), "the file name depends on the chart, not on the DOM id")
}

func TestFigureName(t *testing.T) {
	f := fragment{title: "Loss vs. Depth (tree prior, L=4)", option: "{}"}
	require.Regexp(t, `^loss-vs-depth-tree-prior-l-4-[0-9a-f]{8}$`, figureName(f))
	g := f
	g.option = `{"a":1}`
	require.NotEqual(t, figureName(f), figureName(g))
	require.Regexp(t, `^chart-[0-9a-f]{8}$`, figureName(fragment{title: "—", option: "{}"}))
}

func TestEchartsPath_EnvAndMissing(t *testing.T) {
	fakeAssets(t, "window.echarts={};")
	p, err := EchartsPath()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(os.Getenv(AssetsEnv), "echarts", "echarts.min.js"), p)
	js, err := EchartsJS()
	require.NoError(t, err)
	require.Equal(t, "window.echarts={};", string(js))

	t.Setenv(AssetsEnv, t.TempDir())
	_, err = EchartsPath()
	require.Error(t, err)
	require.Contains(t, err.Error(), "make setup")
	require.Contains(t, err.Error(), AssetsEnv)
}

func TestModuleRoot_SkipsOtherModules(t *testing.T) {
	root := t.TempDir()
	inner := filepath.Join(root, "notebooks", "gonb_tmp", "deeper")
	require.NoError(t, os.MkdirAll(inner, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("// root\nmodule github.com/protolab/protolab // c\n\ngo 1.26\n"), 0o644))
	// A GoNB cell's temporary module sits between the start folder and the protolab root.
	require.NoError(t, os.WriteFile(filepath.Join(root, "notebooks", "gonb_tmp", "go.mod"), []byte("module gonb_1234\n"), 0o644))
	got, ok := moduleRoot(inner)
	require.True(t, ok)
	require.Equal(t, root, got)
	_, ok = moduleRoot(filepath.Join(root, "..")) // above the root: none
	require.False(t, ok)
}

func TestLibraryScript_WrapsForRequireJS(t *testing.T) {
	s := libraryScript([]byte("/*BUNDLE*/"))
	require.Regexp(t, regexp.MustCompile(`^<script[^>]*>if \(typeof window.echarts === "undefined"\) \{\(function\(\)\{var define=undefined,exports=undefined,module=undefined;\n/\*BUNDLE\*/\n\}\).call\(window\);\}</script>$`), s)
}

func TestDisplay_OutsideNotebookWritesHTMLFile(t *testing.T) {
	fakeAssets(t, "/*fake echarts*/")
	out := t.TempDir()
	t.Setenv(OutEnv, out)
	require.False(t, nb.active(), "tests do not run inside GoNB")

	c := sampleChart()
	require.NoError(t, Display(c))
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Len(t, entries, 1, "one file, no temporary files left")
	name := entries[0].Name()
	require.Regexp(t, `^loss-vs-width-[0-9a-f]{8}\.html$`, name)
	b, err := os.ReadFile(filepath.Join(out, name))
	require.NoError(t, err)
	html := string(b)
	require.True(t, strings.HasPrefix(html, "<!DOCTYPE html>"))
	require.Contains(t, html, "/*fake echarts*/")
	require.Contains(t, html, `"simulation"`)
	require.Contains(t, html, "<title>loss vs width</title>")

	require.NoError(t, Display(c))
	entries, _ = os.ReadDir(out)
	require.Len(t, entries, 1, "the same chart overwrites its file")
}

func TestFigureDir_Default(t *testing.T) {
	t.Setenv(OutEnv, "")
	require.Equal(t, filepath.Join(os.TempDir(), "protolab-figures"), FigureDir())
}

// fakeNotebook records what would be sent to GoNB.
type fakeNotebook struct {
	mu       sync.Mutex
	displays []string
	updates  [][2]string
	syncs    int
}

func (f *fakeNotebook) active() bool { return true }
func (f *fakeNotebook) displayHTML(html string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.displays = append(f.displays, html)
}
func (f *fakeNotebook) updateHTML(id, html string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, [2]string{id, html})
}
func (f *fakeNotebook) sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncs++
	return nil
}
func (f *fakeNotebook) uniqueID() string { return "u1" }

func (f *fakeNotebook) snapshot() (displays []string, updates [][2]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.displays...), append([][2]string(nil), f.updates...)
}

// inNotebook makes the package believe it runs in a fresh GoNB cell process for the rest of the test.
func inNotebook(t *testing.T) *fakeNotebook {
	t.Helper()
	fake := &fakeNotebook{}
	old := nb
	nb = fake
	if os.Getenv(KernelDirEnv) == "" {
		t.Setenv(KernelDirEnv, "") // outside GoNB; a test that wants a kernel folder sets it after this
	}
	libraryMu.Lock()
	libraryShown = false
	libraryMu.Unlock()
	t.Cleanup(func() {
		nb = old
		libraryMu.Lock()
		libraryShown = false
		libraryMu.Unlock()
	})
	return fake
}

func TestDisplay_InNotebookSendsLibraryOncePerProcess(t *testing.T) {
	fakeAssets(t, "/*fake echarts*/")
	t.Setenv(OutEnv, t.TempDir())
	fake := inNotebook(t)
	require.NoError(t, Display(sampleChart()))
	require.NoError(t, Display(Bars("b", []string{"a"}, []BarGroup{{Name: "g", Values: []float64{1}}})))
	displays, _ := fake.snapshot()
	require.Len(t, displays, 3, "library, chart, chart")
	require.Contains(t, displays[0], "/*fake echarts*/")
	require.Contains(t, displays[0], "var define=undefined")
	for _, d := range displays[1:] {
		require.NotContains(t, d, "fake echarts")
		require.Contains(t, d, `<div class="item" id="plot_`)
		require.Contains(t, d, "echarts.init(")
	}
	require.Equal(t, 2, fake.syncs, "each Display waits for GoNB")
	entries, _ := os.ReadDir(os.Getenv(OutEnv))
	require.Empty(t, entries, "no file is written inside a notebook")
}

// GoNB runs each cell as a new process with the kernel's folder in $GONB_TMP_DIR: the first chart of the kernel
// carries the library and later cells' charts do not; another kernel (another folder) gets its own copy, and
// ShowLibrary sends it again on request.
func TestDisplay_InNotebookSendsLibraryOncePerKernel(t *testing.T) {
	fakeAssets(t, "/*fake echarts*/")
	kernel := t.TempDir()
	cell := func(dir string, fn func() error) []string {
		fake := inNotebook(t)
		t.Setenv(KernelDirEnv, dir)
		require.NoError(t, fn())
		d, _ := fake.snapshot()
		return d
	}
	show := func() error { return Display(sampleChart()) }
	first := cell(kernel, show)
	require.Len(t, first, 2, "library, chart")
	require.Contains(t, first[0], "/*fake echarts*/")
	second := cell(kernel, show)
	require.Len(t, second, 1, "the chart only: an earlier cell of this kernel sent the library")
	require.NotContains(t, second[0], "fake echarts")
	require.Len(t, cell(t.TempDir(), show), 2, "another kernel gets its own copy")
	again := cell(kernel, ShowLibrary)
	require.Len(t, again, 1)
	require.Contains(t, again[0], "/*fake echarts*/")
}

func TestDisplay_MissingAssetsIsAnError(t *testing.T) {
	t.Setenv(AssetsEnv, t.TempDir())
	inNotebook(t)
	err := Display(sampleChart())
	require.Error(t, err)
	require.Contains(t, err.Error(), "make setup")
}

func TestExport_HTMLIsOfflineAndAtomic(t *testing.T) {
	js := requireEcharts(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "fig.html")
	require.NoError(t, Export(sampleChart(), path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	html := string(b)
	require.Empty(t, regexp.MustCompile(`(?i)<script[^>]*\ssrc=`).FindAllString(html, -1), "no external script")
	require.Empty(t, regexp.MustCompile(`(?i)<link[^>]*\shref=`).FindAllString(html, -1), "no external stylesheet")
	// require.True rather than Contains: a failure must not print the 1 MB page.
	require.True(t, strings.Contains(html, string(js)), "the whole echarts bundle is inlined")
	require.True(t, strings.Contains(html, "var define=undefined"), "the bundle is wrapped for RequireJS")
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left behind")

	err = Export(sampleChart(), filepath.Join(dir, "fig.jpg"))
	require.Error(t, err)
	require.Contains(t, err.Error(), `".jpg"`)
}

func TestChromiumPath_MissingNamesTheFix(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	old := chromiumFallback
	chromiumFallback = filepath.Join(t.TempDir(), "chromium")
	t.Cleanup(func() { chromiumFallback = old })
	_, err := ChromiumPath()
	require.Error(t, err)
	require.Contains(t, err.Error(), "apt-get install -y --no-install-recommends chromium")
	require.Contains(t, err.Error(), "make setup-chromium")
	err = Export(sampleChart(), filepath.Join(t.TempDir(), "x.png"))
	if _, jsErr := EchartsJS(); jsErr == nil {
		require.Error(t, err)
		require.Contains(t, err.Error(), "Chromium not found")
	}
}
