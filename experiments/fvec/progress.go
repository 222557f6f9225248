package fvec

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// Progress storage (doc.go, "Progress"): each finished chain is stored in its own folder
//
//	Out/fvec/progress-<hash>/<prior>-<row>-seed<k>/model.safetensors  the last model's trainable variables
//	Out/fvec/progress-<hash>/<prior>-<row>-seed<k>/chain.json         the scores, records and seconds, written last
//
// where <hash> is the one the result file result-<hash>.json is named by (store.KeyHash of the configuration).
const (
	progressName = "progress"
	chainFile    = "chain.json"
	modelFile    = "model.safetensors"
)

// storedChain is chain.json: a chainResult without its model, and the chain it belongs to.
type storedChain struct {
	Prior    string        `json:"prior"`
	Row      string        `json:"row"`
	Seed     int           `json:"seed"`
	M        []int         `json:"m"`
	Test     []storedScore `json:"test"`
	HeldOut  []storedScore `json:"held_out"`
	Val      []float64     `json:"val"`
	Training []Training    `json:"training"`
	// Seconds is the training wall time of the last model (trained.seconds).
	Seconds float64 `json:"seconds"`
}

// storedScore is an evalScore in chain.json.
type storedScore struct {
	MSE        float64   `json:"mse"`
	PerContext []float64 `json:"per_context"`
}

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
func (s *study) chainDir(sp sweepSpec, seed int) string {
	if s.progress == "" {
		return ""
	}
	return filepath.Join(s.progress, fmt.Sprintf("%s-%s-seed%d", sp.prior, sp.name, seed))
}

// loadChain returns the chain stored by an earlier run of the same configuration and true, or false when there is
// none: no progress folder, or a chain folder without chain.json (a run stopped while storing it), which is logged
// and retrained. A chain.json that exists is trusted only whole: one that cannot be read, that belongs to another
// chain, or whose model cannot be loaded is an error naming the file and the fix.
func (s *study) loadChain(sp sweepSpec, seed int) (chainResult, bool, error) {
	var out chainResult
	dir := s.chainDir(sp, seed)
	if dir == "" || len(sp.ms) == 0 {
		return out, false, nil
	}
	path := filepath.Join(dir, chainFile)
	if _, err := os.Stat(path); err != nil {
		if _, derr := os.Stat(dir); derr == nil {
			s.logf("%s prior, %s, seed %d: %s has no %s (a run stopped while storing it): retraining", sp.prior,
				sp.name, seed, run.ShowPath(dir), chainFile)
		}
		return out, false, nil
	}
	fix := func(err error, file string) error {
		return errors.WithMessagef(err, "fvec: progress file %s is unusable; delete the folder %s to retrain this "+
			"chain (or %s to retrain the whole run)", file, dir, s.progress)
	}
	var sc storedChain
	if err := store.LoadJSON(path, &sc); err != nil {
		return out, false, fix(err, path)
	}
	n := len(sp.ms)
	if sc.Prior != sp.prior || sc.Row != sp.name || sc.Seed != seed || !slices.Equal(sc.M, sp.ms) ||
		len(sc.Test) != n || len(sc.HeldOut) != n || len(sc.Val) != n || len(sc.Training) != n {
		return out, false, fix(errors.Errorf("it records %s prior, row %s, seed %d, M=%v with %d/%d/%d/%d entries, "+
			"want %s prior, row %s, seed %d, M=%v with %d each", sc.Prior, sc.Row, sc.Seed, sc.M, len(sc.Test),
			len(sc.HeldOut), len(sc.Val), len(sc.Training), sp.prior, sp.name, seed, sp.ms, n), path)
	}
	for i := range n {
		out.test = append(out.test, evalScore{mse: sc.Test[i].MSE, perContext: sc.Test[i].PerContext})
		out.heldOut = append(out.heldOut, evalScore{mse: sc.HeldOut[i].MSE, perContext: sc.HeldOut[i].PerContext})
	}
	out.val, out.training = sc.Val, sc.Training
	// The last model as train returns it: its variables in a store made as train makes it, the same evaluation
	// executable; only the training history is not kept (its Training record is).
	m := s.modelConfig(sp, sp.ms[n-1])
	vars := run.NewStore(s.cfg.Seed + uint64(seed))
	modelPath := filepath.Join(dir, modelFile)
	if _, err := store.ImportContext(vars, modelPath); err != nil {
		return out, false, fix(err, modelPath)
	}
	eval, err := newEval(s.backend, vars, m)
	if err != nil {
		return out, false, err
	}
	out.last = &trained{cfg: m, vars: vars, seconds: sc.Seconds, eval: eval}
	s.logf("%s prior, %s, seed %d: loaded from progress (M=%v, last validation MSE %.4f; %s)", sp.prior, sp.name,
		seed, sp.ms, sc.Val[n-1], run.ShowPath(dir))
	return out, true, nil
}

// storeChain stores a finished chain in the progress folder (nothing when there is none, or no model): the model
// first, then chain.json, each written atomically, so a chain folder with chain.json is complete.
func (s *study) storeChain(sp sweepSpec, seed int, c chainResult) error {
	dir := s.chainDir(sp, seed)
	if dir == "" || c.last == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errors.Wrap(err, "fvec: storing progress")
	}
	if err := store.ExportContext(c.last.vars, filepath.Join(dir, modelFile), store.Trainable, nil); err != nil {
		return errors.WithMessage(err, "fvec: storing progress")
	}
	sc := storedChain{Prior: sp.prior, Row: sp.name, Seed: seed, M: sp.ms, Val: c.val, Training: c.training,
		Seconds: c.last.seconds}
	for i := range c.test {
		sc.Test = append(sc.Test, storedScore{MSE: c.test[i].mse, PerContext: c.test[i].perContext})
		sc.HeldOut = append(sc.HeldOut, storedScore{MSE: c.heldOut[i].mse, PerContext: c.heldOut[i].perContext})
	}
	return errors.WithMessage(store.SaveJSON(filepath.Join(dir, chainFile), sc), "fvec: storing progress")
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

// withProgressRemoved returns r after removing the progress folders of finished runs when r was computed or loaded
// without error.
func withProgressRemoved(r *Result, err error, opts []run.Option) (*Result, error) {
	if err != nil {
		return r, err
	}
	return r, removeFinishedProgress(run.NewOptions(opts...).Out)
}
