package fvec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// Progress storage (doc.go, "Progress"): each finished chain is stored in its own folder
// Out/fvec/progress-<hash>/<prior>-<row>-seed<k>/ (icl.Chain.Dir: the last model and chain.json), where <hash> is
// the one the result file result-<hash>.json is named by (store.KeyHash of the configuration).
const progressName = "progress"

// progressDir returns the progress folder of cfg under out ("" when out is "": nothing is stored).
func progressDir(out string, cfg Config) (string, error) {
	if out == "" {
		return "", nil
	}
	h, _, err := store.KeyHash(cfg)
	if err != nil {
		return "", errors.WithMessage(err, "fvec: progress folder")
	}
	return filepath.Join(run.StudyDir(out, Study), progressName+"-"+h), nil
}

// chainDir returns the folder of one chain in the progress folder ("" when nothing is stored).
func (s *study) chainDir(r row, seed int) string {
	if s.progress == "" {
		return ""
	}
	return filepath.Join(s.progress, fmt.Sprintf("%s-%s-seed%d", r.prior, r.name, seed))
}

// removeFinishedProgress removes, under out, every progress folder whose configuration has a stored result (the
// result is what a rerun loads; its chains are no longer needed).
func removeFinishedProgress(out string) error {
	if out == "" {
		return nil
	}
	dir := run.StudyDir(out, Study)
	dirs, err := filepath.Glob(filepath.Join(dir, progressName+"-*"))
	if err != nil {
		return errors.Wrap(err, "fvec: finding progress folders")
	}
	for _, p := range dirs {
		h := strings.TrimPrefix(filepath.Base(p), progressName+"-")
		if _, err := os.Stat(filepath.Join(dir, run.ResultName+"-"+h+".json")); err != nil {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return errors.Wrapf(err, "fvec: removing the finished run's progress folder %s", p)
		}
	}
	return nil
}
