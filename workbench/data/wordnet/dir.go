package wordnet

import (
	"os"
	"path/filepath"

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
		if !isFile(filepath.Join(d, "data.noun")) {
			return "", errors.Errorf("$%s=%q does not hold a WordNet database (no data.noun)", EnvDir, d)
		}
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", errors.Wrap(err, "wordnet.Dir: current directory")
	}
	var tried []string
	for dir := wd; ; {
		cand := filepath.Join(dir, DefaultSubdir)
		if isFile(filepath.Join(cand, "data.noun")) {
			return cand, nil
		}
		tried = append(tried, cand)
		parent := filepath.Dir(dir)
		if isFile(filepath.Join(dir, "go.mod")) || parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.Errorf("WordNet database not found: run `make wordnet` or set $%s (looked in %v)", EnvDir, tried)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
