package data

import (
	"os"
	"path/filepath"
)

// FindAssetDir looks for subdir (an installed asset folder such as "assets/brown") under the working directory and
// each of its parents up to the module root (the first folder holding go.mod), and returns the first candidate that
// holds the file marker. It also returns every candidate it tried, for the caller's error message; found is "" when
// none holds marker.
func FindAssetDir(subdir, marker string) (found string, tried []string, err error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", nil, err
	}
	for dir := wd; ; {
		cand := filepath.Join(dir, subdir)
		if IsFile(filepath.Join(cand, marker)) {
			return cand, tried, nil
		}
		tried = append(tried, cand)
		parent := filepath.Dir(dir)
		if IsFile(filepath.Join(dir, "go.mod")) || parent == dir {
			return "", tried, nil
		}
		dir = parent
	}
}

// IsFile reports whether p is a regular file.
func IsFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
