package brown

import (
	"os"
	"path/filepath"

	"github.com/protolab/protolab/workbench/data"

	"github.com/pkg/errors"
)

// EnvDir is the environment variable that overrides where Dir looks for the corpus.
const EnvDir = "PROTOLAB_BROWN"

// DefaultSubdir is where `make brown` puts the corpus, relative to the repository root.
const DefaultSubdir = "assets/brown"

// marker is the file whose presence makes a folder a candidate corpus folder (the first sample).
const marker = "ca01"

// Dir returns the corpus folder (the one holding ca01 … cr09): $PROTOLAB_BROWN if set, else DefaultSubdir under the
// current directory or one of its parents, up to the module root (go.mod).
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		if !data.IsFile(filepath.Join(d, marker)) {
			return "", errors.Errorf("$%s=%q does not hold the Brown corpus (no %s); run `make brown` and unset $%s, "+
				"or point it at a folder holding ca01 … cr09", EnvDir, d, marker, EnvDir)
		}
		return d, nil
	}
	cand, tried, err := data.FindAssetDir(DefaultSubdir, marker)
	if err != nil {
		return "", errors.Wrap(err, "brown.Dir: current directory")
	}
	if cand != "" {
		return cand, nil
	}
	return "", errors.Errorf("Brown corpus not found: run `make brown` (or `make setup`) or set $%s (looked in %v)",
		EnvDir, tried)
}
