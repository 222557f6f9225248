package lm

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/store"
)

// freshHint is the fix every refusal of a run folder names.
const freshHint = "train into another folder (--out), or replace the run there with `protolab train --fresh` " +
	"(lm.RemoveRun)"

// runFiles are the entries ProtoLab writes in a run folder, besides the lock file and temporary files.
var runFiles = map[string]bool{ConfigFile: true, TokenizerFile: true, CheckpointDir: true, WeightsFile: true,
	ResultFile: true}

// incidental reports whether an entry of a run folder is neither a run file nor the user's: the lock file, a
// temporary file of an atomic write, or the Finder's .DS_Store.
func incidental(name string) bool {
	return name == store.LockFile || name == ".DS_Store" || (strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp"))
}

// entries returns the run files and the other (the user's) entries of dir, sorted; the checkpoint folder counts as
// the user's when it holds anything but checkpoint files.
func entries(dir string) (ours, theirs []string, err error) {
	list, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, errors.Wrapf(err, "lm: listing %s", dir)
	}
	for _, e := range list {
		switch name := e.Name(); {
		case incidental(name):
		case name == CheckpointDir && e.IsDir():
			if foreign, err := foreignCheckpointFiles(filepath.Join(dir, name)); err != nil {
				return nil, nil, err
			} else if len(foreign) > 0 {
				theirs = append(theirs, foreign...)
			} else {
				ours = append(ours, name)
			}
		case runFiles[name] && name != CheckpointDir && !e.IsDir():
			ours = append(ours, name)
		default:
			theirs = append(theirs, name)
		}
	}
	sort.Strings(ours)
	sort.Strings(theirs)
	return ours, theirs, nil
}

// foreignCheckpointFiles lists the entries of a checkpoint folder that workbench/fit did not write, as
// "checkpoints/<name>".
func foreignCheckpointFiles(dir string) ([]string, error) {
	list, err := os.ReadDir(dir)
	if err != nil {
		return nil, errors.Wrapf(err, "lm: listing %s", dir)
	}
	var foreign []string
	for _, e := range list {
		name := e.Name()
		if e.IsDir() || !(strings.HasPrefix(name, "ckpt-") || strings.HasPrefix(name, ".ckpt-") || incidental(name)) {
			foreign = append(foreign, filepath.Join(CheckpointDir, name))
		}
	}
	return foreign, nil
}

// inspectDir checks, without writing anything, that dir may be the run folder of cfg: missing, empty, or holding
// cfg's config.json. It refuses a file, a corrupt config.json (naming the JSON error), another config (naming the
// differing keys), run files without a config.json and a folder holding the user's files. finished reports that
// the folder holds cfg's finished run (result.json).
func inspectDir(dir string, cfg Config) (finished bool, err error) {
	info, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, errors.Wrapf(err, "lm: cannot use %s as the run folder; choose another folder", dir)
	}
	if !info.IsDir() {
		return false, errors.Errorf("lm: %s is a file, not a run folder; choose a folder for the run", dir)
	}
	path := filepath.Join(dir, ConfigFile)
	var stored Config
	switch err := store.LoadJSON(path, &stored); {
	case err == nil:
		if err := sameConfig(dir, stored, cfg); err != nil {
			return false, err
		}
		return fileExists(filepath.Join(dir, ResultFile)), nil
	case !errors.Is(err, os.ErrNotExist):
		return false, errors.WithMessagef(err, "lm: %s is corrupt, so the folder cannot be checked against the "+
			"config asked for; restore the file, or %s", path, freshHint)
	}
	ours, theirs, err := entries(dir)
	if err != nil {
		return false, err
	}
	if len(theirs) > 0 {
		return false, errors.Errorf("lm: %s is not empty and is not a ProtoLab run folder (it holds %s); choose a "+
			"new or empty folder for the run", dir, listNames(theirs))
	}
	if len(ours) > 0 {
		return false, errors.Errorf("lm: %s holds run files (%s) but no %s, so they cannot be checked against the "+
			"config asked for; restore %s, or %s", dir, listNames(ours), ConfigFile, ConfigFile, freshHint)
	}
	return false, nil
}

// listNames joins names for a message, eliding all but the first five.
func listNames(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + ", …"
	}
	return strings.Join(names, ", ")
}

// runFolder is a run folder this process trains in: checked against the config, locked, holding config.json.
type runFolder struct {
	dir     string
	lock    *store.DirLock
	created string // the topmost folder this process created for it; "" when dir existed
}

// claimDir makes dir the run folder of cfg for this process. It checks the folder (inspectDir) before writing
// anything, then creates it, locks it (another process training there is named in the error), checks it again under
// the lock, and writes config.json. Nothing is left behind when it fails. finished reports a finished run of cfg,
// which is not claimed (nor locked): the caller opens it.
func claimDir(dir string, cfg Config) (rf *runFolder, finished bool, err error) {
	if finished, err := inspectDir(dir, cfg); err != nil || finished {
		return nil, finished, err
	}
	rf = &runFolder{dir: dir, created: firstMissing(dir)}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		rf.removeCreated()
		return nil, false, errors.Wrapf(err, "lm: cannot create the run folder %s; choose another folder", dir)
	}
	lock, err := store.Lock(dir)
	if err != nil {
		rf.removeCreated()
		if errors.Is(err, store.ErrLocked) {
			return nil, false, errors.WithMessage(err, "lm: another run is training in this folder")
		}
		return nil, false, errors.WithMessagef(err, "lm: the run folder %s is not writable; choose another folder "+
			"or make it writable", dir)
	}
	rf.lock = lock
	// Another process may have claimed or finished the folder between the check and the lock.
	if finished, err := inspectDir(dir, cfg); err != nil || finished {
		rf.release(false)
		return nil, finished, err
	}
	if path := filepath.Join(dir, ConfigFile); !fileExists(path) {
		if err := store.SaveJSON(path, cfg); err != nil {
			rf.release(true)
			return nil, false, errors.WithMessagef(err, "lm: the run folder %s is not writable; choose another "+
				"folder or make it writable", dir)
		}
	}
	return rf, false, nil
}

// firstMissing returns the topmost folder of path that does not exist ("" when path exists).
func firstMissing(path string) string {
	top := ""
	for p := filepath.Clean(path); ; {
		if _, err := os.Lstat(p); err == nil {
			return top
		}
		top = p
		parent := filepath.Dir(p)
		if parent == p {
			return top
		}
		p = parent
	}
}

// release unlocks the folder. With failed, a folder this process created that holds nothing of value (no
// checkpoint, weights or result) is removed with the folders created for it, so that a failed run leaves nothing
// behind (and a corrected config is not refused for a leftover config.json).
func (rf *runFolder) release(failed bool) {
	if failed && rf.created != "" && !holdsValue(rf.dir) {
		removeStaleTemps(filepath.Join(rf.dir, CheckpointDir))
		_ = os.Remove(filepath.Join(rf.dir, CheckpointDir))
		_ = os.Remove(filepath.Join(rf.dir, TokenizerFile))
		_ = os.Remove(filepath.Join(rf.dir, ConfigFile))
		removeStaleTemps(rf.dir)
	}
	_ = rf.lock.Release()
	if failed && rf.created != "" {
		rf.removeCreated()
	}
}

// removeCreated removes the run folder and the folders above it that this process created, as far as they are
// empty (os.Remove refuses a non-empty folder, so nothing anyone put there is lost).
func (rf *runFolder) removeCreated() {
	if rf.created == "" {
		return
	}
	for p := filepath.Clean(rf.dir); ; p = filepath.Dir(p) {
		if os.Remove(p) != nil || p == rf.created {
			return
		}
	}
}

// holdsValue reports whether a run folder holds something a rerun could not recreate at once: weights, a result,
// or anything in its checkpoint folder besides temporary files of dead writers.
func holdsValue(dir string) bool {
	if fileExists(filepath.Join(dir, WeightsFile)) || fileExists(filepath.Join(dir, ResultFile)) {
		return true
	}
	list, err := os.ReadDir(filepath.Join(dir, CheckpointDir))
	if err != nil {
		return !os.IsNotExist(err)
	}
	for _, e := range list {
		if !store.StaleTemp(filepath.Join(dir, CheckpointDir), e.Name()) {
			return true
		}
	}
	return false
}

// removeStaleTemps removes the temporary files in dir that nobody is writing (store.StaleTemp).
func removeStaleTemps(dir string) {
	list, _ := os.ReadDir(dir)
	for _, e := range list {
		if store.StaleTemp(dir, e.Name()) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// RemoveRun deletes the run folder dir, so that a run can start afresh there (protolab train --fresh). It refuses,
// removing nothing, when dir is not a folder, holds anything ProtoLab does not write there (naming it), or is in use
// by another process (naming it). A missing dir is not an error. The result goes first and config.json last, so a
// crash half-way leaves a folder that still resumes consistently or trains afresh.
func RemoveRun(dir string) error {
	info, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return errors.Wrapf(err, "lm.RemoveRun %s", dir)
	}
	if !info.IsDir() {
		return errors.Errorf("lm.RemoveRun: %s is a file, not a run folder; nothing was removed", dir)
	}
	check := func() error {
		_, theirs, err := entries(dir)
		if err != nil {
			return err
		}
		if len(theirs) > 0 {
			return errors.Errorf("lm.RemoveRun: %s holds files ProtoLab did not write (%s), so it is not replaced; "+
				"move them away first, or choose another folder (nothing was removed)", dir, listNames(theirs))
		}
		return nil
	}
	if err := check(); err != nil {
		return err
	}
	lock, err := store.Lock(dir)
	if err != nil {
		return errors.WithMessage(err, "lm.RemoveRun (nothing was removed)")
	}
	var ckLock *store.DirLock
	defer func() { _ = ckLock.Release(); _ = lock.Release() }()
	if err := check(); err != nil {
		return err
	}
	ckDir := filepath.Join(dir, CheckpointDir)
	if fileExists(ckDir) {
		// A fit.Train writing there directly would hold this lock.
		if ckLock, err = store.Lock(ckDir); err != nil {
			return errors.WithMessage(err, "lm.RemoveRun (nothing was removed)")
		}
	}
	remove := func(path string) error {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return errors.Wrap(err, "lm.RemoveRun")
		}
		return nil
	}
	for _, name := range []string{ResultFile, WeightsFile} {
		if err := remove(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	list, _ := os.ReadDir(ckDir)
	// Sidecars before tensors files: a checkpoint never lacks its tensors.
	sort.SliceStable(list, func(i, j int) bool {
		return strings.HasSuffix(list[i].Name(), ".json") && !strings.HasSuffix(list[j].Name(), ".json")
	})
	for _, e := range list {
		if e.Name() != store.LockFile {
			if err := remove(filepath.Join(ckDir, e.Name())); err != nil {
				return err
			}
		}
	}
	for _, name := range []string{TokenizerFile, ConfigFile} {
		if err := remove(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	removeStaleTemps(dir)
	// Each lock file goes with its release; then the folders are empty.
	_ = ckLock.Release()
	_ = os.Remove(ckDir)
	_ = lock.Release()
	if err := os.Remove(dir); err != nil && !os.IsNotExist(err) {
		return errors.Wrapf(err, "lm.RemoveRun: the run files are gone, but the folder %s stays", dir)
	}
	return nil
}
