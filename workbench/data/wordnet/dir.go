package wordnet

import (
	"os"
	"path/filepath"

	"github.com/protolab/protolab/workbench/data"

	"github.com/pkg/errors"
)

// EnvDir is the environment variable that overrides where Dir looks for the database.
const EnvDir = "PROTOLAB_WORDNET"

// DefaultSubdir is where `make wordnet` puts the database, relative to the repository root.
const DefaultSubdir = "assets/wordnet/usr/share/wordnet"

// Dir returns the WordNet dict folder (the one holding data.noun): $PROTOLAB_WORDNET if set, else
// DefaultSubdir under the current directory or one of its parents, up to the module root (go.mod).
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		if !data.IsFile(filepath.Join(d, "data.noun")) {
			return "", errors.Errorf("$%s=%q does not hold a WordNet database (no data.noun)", EnvDir, d)
		}
		return d, nil
	}
	cand, tried, err := data.FindAssetDir(DefaultSubdir, "data.noun")
	if err != nil {
		return "", errors.Wrap(err, "wordnet.Dir: current directory")
	}
	if cand != "" {
		return cand, nil
	}
	return "", errors.Errorf("WordNet database not found: run `make wordnet` or set $%s (looked in %v)", EnvDir, tried)
}
