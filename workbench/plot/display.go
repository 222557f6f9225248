package plot

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/janpfeifer/gonb/gonbui"
	"github.com/pkg/errors"
)

// OutEnv names the environment variable of the folder where Display writes HTML files outside a notebook.
const OutEnv = "PROTOLAB_OUT"

// notebook is the part of gonbui this package uses; tests replace it.
type notebook interface {
	active() bool
	displayHTML(html string)
	updateHTML(id, html string)
	sync() error
	uniqueID() string
}

// gonb is the real notebook front-end.
type gonb struct{}

func (gonb) active() bool               { return gonbui.IsNotebook }
func (gonb) displayHTML(html string)    { gonbui.DisplayHTML(html) }
func (gonb) updateHTML(id, html string) { gonbui.UpdateHTML(id, html) }
func (gonb) uniqueID() string           { return gonbui.UniqueId() }
func (gonb) sync() error {
	gonbui.Sync() // without it the last output before the cell's process exits can be lost
	return gonbui.Error()
}

var (
	nb notebook = gonb{}

	// libraryShown records that this process already sent the echarts library to the notebook, or found the
	// kernel's marker saying an earlier cell did.
	libraryMu    sync.Mutex
	libraryShown bool
)

// KernelDirEnv names the environment variable in which GoNB gives each cell process the kernel's temporary
// folder; it lives as long as the kernel, so a marker file there is seen by every later cell of the notebook.
const KernelDirEnv = "GONB_TMP_DIR"

// libraryMarker returns the marker file that records that a cell of this kernel sent the echarts library, or ""
// outside GoNB.
func libraryMarker() string {
	if dir := os.Getenv(KernelDirEnv); dir != "" {
		return filepath.Join(dir, "protolab-echarts-sent")
	}
	return ""
}

// ensureLibrary sends the echarts library to the notebook once per kernel: GoNB runs every cell as a new
// process, so the first cell that shows a chart sends it and leaves a marker in the kernel's folder that later
// cells find. Without that folder (not GoNB) it sends the library once per process.
func ensureLibrary() error {
	libraryMu.Lock()
	defer libraryMu.Unlock()
	if libraryShown {
		return nil
	}
	if m := libraryMarker(); m != "" && isFile(m) {
		libraryShown = true
		return nil
	}
	return sendLibrary()
}

// sendLibrary sends the echarts library and writes the kernel's marker; libraryMu is held.
func sendLibrary() error {
	js, err := EchartsJS()
	if err != nil {
		return err
	}
	nb.displayHTML(libraryScript(js))
	libraryShown = true
	if m := libraryMarker(); m != "" {
		// A marker that cannot be written only costs the next cell a second copy of the library.
		_ = os.WriteFile(m, nil, 0o644)
	}
	return nil
}

// ShowLibrary sends the echarts library to the notebook now, whether or not a cell of this kernel already did.
// Later charts need it on the page: after re-running (and so clearing) the cell that carried it, the saved
// notebook and its HTML export lack it; a cell near the top that calls ShowLibrary keeps it there. Outside a
// notebook it does nothing.
func ShowLibrary() error {
	if !nb.active() {
		return nil
	}
	libraryMu.Lock()
	defer libraryMu.Unlock()
	if err := sendLibrary(); err != nil {
		return err
	}
	return errors.Wrap(nb.sync(), "plot.ShowLibrary: sending the library to GoNB")
}

// Display shows c. Inside a GoNB notebook it sends the echarts library (first chart of the kernel, see
// ensureLibrary) and the chart as HTML outputs of the running cell, and waits until GoNB has them. Elsewhere it writes a standalone
// HTML file into FigureDir() and prints its path.
func Display(c Chart) error {
	f := renderFragment(c)
	if nb.active() {
		if err := ensureLibrary(); err != nil {
			return err
		}
		nb.displayHTML(f.element + f.script)
		return errors.Wrap(nb.sync(), "plot.Display: sending the chart to GoNB")
	}
	path, err := writeFigure(f)
	if err != nil {
		return err
	}
	fmt.Printf("plot: wrote %s\n", path)
	return nil
}

// FigureDir returns the folder of figures written outside a notebook: $PROTOLAB_OUT when set, else
// os.TempDir()/protolab-figures.
func FigureDir() string {
	if dir := os.Getenv(OutEnv); dir != "" {
		return dir
	}
	return filepath.Join(os.TempDir(), "protolab-figures")
}

// writeFigure writes the standalone page of f into FigureDir() and returns its path.
func writeFigure(f fragment) (string, error) {
	js, err := EchartsJS()
	if err != nil {
		return "", err
	}
	path := filepath.Join(FigureDir(), figureName(f)+".html")
	if err := writeAtomic(path, page(f, js, "")); err != nil {
		return "", err
	}
	return path, nil
}

// FigurePath returns where a notebook exports the figure file called name: $PROTOLAB_OUT/figures/name when
// PROTOLAB_OUT is set (make run, make test), else figures/name under the working directory.
func FigurePath(name string) string {
	if dir := os.Getenv(OutEnv); dir != "" {
		return filepath.Join(dir, "figures", name)
	}
	return filepath.Join("figures", name)
}
