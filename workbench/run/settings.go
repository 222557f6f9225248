package run

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/protolab/protolab/workbench/store"
)

// ResultPath returns the file LoadOrRun stores cfg's result in under the root out: out/<study>/result-<hash>.json,
// the hash being store.KeyHash of the whole configuration; or result-<hash>.json.gz when only that gzip-compressed
// copy exists (a shipped result over 1 MB: results/README.md), the file then read. A notebook's settings cell prints
// it, so that the run of the current settings is named before any cell computes it.
func ResultPath(out, study string, cfg any) (string, error) {
	return store.StoredPath(StudyDir(out, study), ResultName, cfg)
}

// ShowPath returns path as notebooks and progress lines print it: "$PROTOLAB_OUT/…" when it lies below
// $PROTOLAB_OUT, else relative to the working directory when it lies below it, else as it is. Outputs then never
// show a machine's temporary folders.
func ShowPath(path string) string {
	if out := os.Getenv(OutEnv); out != "" {
		if rel, ok := below(out, path); ok {
			return filepath.Join("$"+OutEnv, rel)
		}
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, ok := below(wd, path); ok {
			return rel
		}
	}
	return path
}

// below returns path relative to dir and true when path lies in dir (both made absolute).
func below(dir, path string) (string, bool) {
	d, err1 := filepath.Abs(dir)
	p, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return "", false
	}
	rel, err := filepath.Rel(d, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// NotebookConfig returns the configuration Notebook shows at the preset $PROTOLAB_PRESET names: at the Small preset
// full's when its result is stored under Options.Out or shipped under Options.Shipped (the protocol run, Lookup),
// else quick's; at any other preset
// preset(name)'s. A notebook's settings cell starts from it, applies the user's changes, and the cells below call
// the study's LoadOrRun with the result, so they all show the run of the current settings.
func NotebookConfig[C Config](study string, preset func(name string) (C, error), full, quick func() C,
	opts ...Option) (C, error) {
	name, err := PresetName()
	if err != nil {
		var zero C
		return zero, err
	}
	if name != "small" {
		return preset(name)
	}
	if _, _, ok, err := Lookup[json.RawMessage](study, full(), opts...); err != nil || ok {
		return full(), err
	}
	return quick(), nil
}

// SettingsSummary returns what a notebook's settings cell prints, one line each: the preset $PROTOLAB_PRESET names,
// the keys cfg changes from base (the preset the cell started from), the keys the study's protocol searches over
// instead of using their value (Searcher; with a warning when the user changed one), a pointer to the list of keys,
// and the file the study's result of cfg is stored in under out (ShowPath) with whether it is there: stored (the
// cells below load it), shipped with the checkout (they load the shipped file, Lookup) or not yet (the first of
// them computes it).
func SettingsSummary(study string, base, cfg any, out string) (string, error) {
	name, err := PresetName()
	if err != nil {
		return "", err
	}
	changed, err := DiffKeys(base, cfg)
	if err != nil {
		return "", err
	}
	if len(changed) == 0 {
		changed = []string{"none"}
	}
	path, err := ResultPath(out, study, cfg)
	if err != nil {
		return "", err
	}
	state := "not computed yet: the first cell below that needs it computes and stores it"
	if _, f, ok, err := Lookup[json.RawMessage](study, cfg, Out(out)); err != nil {
		return "", err
	} else if ok && f.Shipped {
		state = "not computed here; shipped with the checkout: the cells below load " + RepoPath(f.Path)
	} else if ok {
		state = "stored: the cells below load it"
	}
	var searched string
	for _, l := range SearchedLines(cfg, changed) {
		searched += l + "\n"
	}
	return fmt.Sprintf("preset %s; changed: %s\n%severy key with its value: protolab keys %s --preset %s\n"+
		"result: %s (%s)\n", name, strings.Join(changed, "; "), searched, study, name, ShowPath(path), state), nil
}
