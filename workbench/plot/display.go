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

	// libraryShown records that this process already sent the echarts library to the notebook. GoNB runs
	// every cell as a new process, so each cell that shows a chart sends it once.
	libraryMu    sync.Mutex
	libraryShown bool
)

// ensureLibrary sends the echarts library to the notebook once per process.
func ensureLibrary() error {
	libraryMu.Lock()
	defer libraryMu.Unlock()
	if libraryShown {
		return nil
	}
	js, err := EchartsJS()
	if err != nil {
		return err
	}
	nb.displayHTML(libraryScript(js))
	libraryShown = true
	return nil
}

// Display shows c. Inside a GoNB notebook it sends the echarts library (first time in the process) and the
// chart as HTML outputs of the running cell, and waits until GoNB has them. Elsewhere it writes a standalone
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
