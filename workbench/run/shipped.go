package run

import (
	"os"
	"path/filepath"

	"github.com/protolab/protolab/workbench/store"
)

// ResultsEnv names the folder of shipped results when set (a copy of results/ elsewhere); unset, ShippedRoot is the
// checkout's results/.
const ResultsEnv = "PROTOLAB_RESULTS"

// ShippedDir is the folder, at the root of the checkout, that holds the shipped protocol results: the layout of a
// run root (ShippedDir/<study>/result-<hash>.json, as `protolab run <study> --preset small --out results` writes
// them), the scorecard generated from them (REPORT.md, REPORT.html) and their figures (figures/*.svg).
const ShippedDir = "results"

// ShippedRoot returns the root of the shipped results: $PROTOLAB_RESULTS when set, else ShippedDir in the ProtoLab
// checkout (ModuleRoot), else "" (no checkout: nothing is shipped).
func ShippedRoot() string {
	if dir := os.Getenv(ResultsEnv); dir != "" {
		return dir
	}
	root, err := ModuleRoot()
	if err != nil {
		return ""
	}
	return filepath.Join(root, ShippedDir)
}

// Shipped sets the read-only root of shipped results that LoadOrRun, Showcase and NotebookConfig read a study's
// result from when Options.Out holds none for its configuration ("" reads none). The default is ShippedRoot().
func Shipped(dir string) Option { return func(o *Options) { o.Shipped = dir } }

// Found says where Lookup found a result.
type Found struct {
	Path    string // the result file
	Shipped bool   // read from Options.Shipped (the results the checkout ships), not from Options.Out (the user's)
}

// Lookup returns the result of study stored for cfg under Options.Out (the user's own run), else the one shipped
// for cfg under Options.Shipped, with the file it was read from; false when neither holds one. With Out empty
// (everything in memory) it reads nothing. It never writes: the shipped folder is only read.
func Lookup[R any](study string, cfg any, opts ...Option) (R, Found, bool, error) {
	o := NewOptions(opts...)
	var zero R
	if o.Out == "" {
		return zero, Found{}, false, nil
	}
	for _, root := range []struct {
		dir     string
		shipped bool
	}{{o.Out, false}, {o.Shipped, true}} {
		if root.dir == "" || (root.shipped && sameDir(root.dir, o.Out)) {
			continue
		}
		dir := StudyDir(root.dir, study)
		r, ok, err := store.LoadCached[R](dir, ResultName, cfg)
		if err != nil || !ok {
			if err != nil {
				return zero, Found{}, false, err
			}
			continue
		}
		path, err := store.StoredPath(dir, ResultName, cfg)
		return r, Found{Path: path, Shipped: root.shipped}, true, err
	}
	return zero, Found{}, false, nil
}

// sameDir reports whether a and b name the same folder (as absolute paths).
func sameDir(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// RepoPath returns path relative to the ProtoLab checkout (ModuleRoot) when it lies in it, else path as it is: how
// the scorecard and the progress lines name a shipped result, whatever folder the clone is in.
func RepoPath(path string) string {
	if root, err := ModuleRoot(); err == nil {
		if rel, ok := below(root, path); ok {
			return filepath.ToSlash(rel)
		}
	}
	return path
}
