package fit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/store"
)

// CheckpointFormat identifies the sidecar JSON layout; a change that old code could misread gets a new version.
const CheckpointFormat = "protolab.fit.checkpoint/v1"

// ErrNoCheckpoint is returned (wrapped) by LatestCheckpoint and LoadLatest when a folder holds no checkpoint.
var ErrNoCheckpoint = errors.New("no checkpoint")

// Checkpoint is the JSON sidecar of a checkpoint: ckpt-<step>.json next to the tensors file ckpt-<step>.safetensors,
// which holds every variable of the context (model weights, optimizer moments, step counter, RNG state).
type Checkpoint struct {
	Format        string    `json:"format"`         // CheckpointFormat
	Step          int       `json:"step"`           // updates completed
	Tensors       string    `json:"tensors"`        // name of the tensors file, in the same folder
	TensorsSize   int64     `json:"tensors_size"`   // its size in bytes
	TensorsSHA256 string    `json:"tensors_sha256"` // its SHA-256, hex
	TrainState    []byte    `json:"train_state"`    // training Batches.State after Step batches
	ValState      []byte    `json:"val_state"`      // validation Batches.State every evaluation starts from
	Elapsed       float64   `json:"elapsed_s"`      // training wall time up to Step, over all sessions
	Config        Config    `json:"config"`         // the run's configuration
	History       History   `json:"history"`        // metrics up to Step
	Written       time.Time `json:"written"`        // when the checkpoint was written
	// Run is the caller's description of the whole run (the RunConfig option: model, data, seed…), compared
	// key by key on resume; absent when Train was not given one.
	Run json.RawMessage `json:"run,omitempty"`

	// Skipped lists the newer checkpoints LatestCheckpoint passed over because they failed verification, newest
	// first, each as an error naming the file; it is not stored.
	Skipped      []error `json:"-"`
	skippedSteps []int   // the steps of Skipped
}

// checkpointName returns the file names of the checkpoint at step.
func checkpointName(step int) (jsonName, tensorsName string) {
	base := fmt.Sprintf("ckpt-%08d", step)
	return base + ".json", base + ".safetensors"
}

// parseCheckpointName returns the step of "ckpt-<8 digits>.<ext>", or false.
func parseCheckpointName(name, ext string) (int, bool) {
	var step int
	if _, err := fmt.Sscanf(name, "ckpt-%d."+ext, &step); err != nil || step < 0 {
		return 0, false
	}
	if j, t := checkpointName(step); (ext == "json" && name != j) || (ext == "safetensors" && name != t) {
		return 0, false
	}
	return step, true
}

// checkpointSteps returns the steps of the sidecars in dir, ascending.
func checkpointSteps(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, errors.Wrap(err, "listing checkpoints")
	}
	var steps []int
	for _, e := range entries {
		if step, ok := parseCheckpointName(e.Name(), "json"); ok && !e.IsDir() {
			steps = append(steps, step)
		}
	}
	sort.Ints(steps)
	return steps, nil
}

// saveCheckpoint writes the variables of vars and then the sidecar ck (whose Step, TrainState, ValState, Elapsed, Config
// and History the caller fills), both atomically; the sidecar is renamed into place last, so a crash at any point
// leaves either a complete checkpoint or none. Then it deletes all but the newest keep checkpoints, stray tensors
// files and temporary files.
func saveCheckpoint(dir string, vars *model.Store, ck *Checkpoint, keep int) error {
	jsonName, tensorsName := checkpointName(ck.Step)
	tensorsPath := filepath.Join(dir, tensorsName)
	meta := map[string]string{"protolab.step": fmt.Sprint(ck.Step), "protolab.format": CheckpointFormat}
	if err := store.ExportContext(vars, tensorsPath, nil, meta); err != nil {
		return errors.WithMessagef(err, "fit: checkpoint at step %d", ck.Step)
	}
	d, err := store.FileDigest(tensorsPath)
	if err != nil {
		return errors.WithMessagef(err, "fit: checkpoint at step %d", ck.Step)
	}
	ck.Format = CheckpointFormat
	ck.Tensors = tensorsName
	ck.TensorsSize = d.Size
	ck.TensorsSHA256 = d.SHA256
	ck.Written = time.Now().UTC()
	if err := store.SaveJSON(filepath.Join(dir, jsonName), ck); err != nil {
		return errors.WithMessagef(err, "fit: checkpoint at step %d", ck.Step)
	}
	return pruneCheckpoints(dir, keep)
}

// pruneCheckpoints keeps the newest keep sidecars (and their tensors files), deleting each older sidecar before its
// tensors file. It also removes tensors files without a sidecar older than the newest checkpoint (left by a crash
// between the two renames) and the temporary files of checkpoints that nobody is writing (store.StaleTemp: this
// process's leftovers and those of dead processes; never another live process's file in progress).
func pruneCheckpoints(dir string, keep int) error {
	steps, err := checkpointSteps(dir)
	if err != nil || len(steps) == 0 {
		return err
	}
	newest := steps[len(steps)-1]
	kept := map[int]bool{}
	for i, step := range steps {
		if i >= len(steps)-keep {
			kept[step] = true
			continue
		}
		jsonName, tensorsName := checkpointName(step)
		if err := os.Remove(filepath.Join(dir, jsonName)); err != nil {
			return errors.Wrapf(err, "fit: pruning checkpoint %d", step)
		}
		if err := os.Remove(filepath.Join(dir, tensorsName)); err != nil && !os.IsNotExist(err) {
			return errors.Wrapf(err, "fit: pruning checkpoint %d", step)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return errors.Wrap(err, "fit: pruning checkpoints")
	}
	for _, e := range entries {
		name := e.Name()
		stray := strings.HasPrefix(name, ".ckpt-") && store.StaleTemp(dir, name)
		if step, ok := parseCheckpointName(name, "safetensors"); ok && !kept[step] && step < newest {
			stray = true
		}
		if stray {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
				return errors.Wrapf(err, "fit: removing stray file %s", name)
			}
		}
	}
	return nil
}

// LatestCheckpoint returns the sidecar of the newest checkpoint in dir that verifies: a readable sidecar of this
// format and step naming a tensors file that exists with the recorded size and SHA-256 (the tensors are not
// loaded). Newer checkpoints that fail verification (a crash, a full disk, a flipped byte) are passed over and listed
// in the result's Skipped, each error naming its file, so that the caller can warn. Errors name the folder or file:
// a missing folder, no checkpoint (wrapping ErrNoCheckpoint), or no checkpoint that verifies (listing each failure).
func LatestCheckpoint(dir string) (*Checkpoint, error) {
	info, err := os.Stat(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, errors.Errorf("fit: checkpoint folder %s does not exist", dir)
		}
		return nil, errors.Wrap(err, "fit: checkpoint folder")
	}
	if !info.IsDir() {
		return nil, errors.Errorf("fit: checkpoint folder %s is not a folder", dir)
	}
	steps, err := checkpointSteps(dir)
	if err != nil {
		return nil, errors.WithMessagef(err, "fit: %s", dir)
	}
	if len(steps) == 0 {
		return nil, errors.Wrapf(ErrNoCheckpoint, "fit: folder %s holds no ckpt-NNNNNNNN.json", dir)
	}
	var skipped []error
	for i := len(steps) - 1; i >= 0; i-- {
		ck, err := verifyCheckpoint(dir, steps[i])
		if err == nil {
			ck.Skipped, ck.skippedSteps = skipped, steps[i+1:]
			return ck, nil
		}
		skipped = append(skipped, err)
	}
	msgs := make([]string, len(skipped))
	for i, e := range skipped {
		msgs[i] = e.Error()
	}
	return nil, errors.Errorf("fit: no checkpoint in %s is intact (%s); delete the folder to train from the start",
		dir, strings.Join(msgs, "; "))
}

// verifyCheckpoint reads and checks the checkpoint of step in dir (see LatestCheckpoint).
func verifyCheckpoint(dir string, step int) (*Checkpoint, error) {
	jsonName, _ := checkpointName(step)
	jsonPath := filepath.Join(dir, jsonName)
	var ck Checkpoint
	if err := store.LoadJSON(jsonPath, &ck); err != nil {
		return nil, errors.WithMessage(err, "fit: corrupt checkpoint sidecar")
	}
	switch {
	case ck.Format != CheckpointFormat:
		return nil, errors.Errorf("fit: checkpoint %s has format %q, want %q", jsonPath, ck.Format, CheckpointFormat)
	case ck.Step != step:
		return nil, errors.Errorf("fit: checkpoint %s records step %d, but its name says %d", jsonPath, ck.Step, step)
	case ck.Tensors == "" || filepath.Base(ck.Tensors) != ck.Tensors:
		return nil, errors.Errorf("fit: checkpoint %s names tensors file %q, want a file name in the same folder",
			jsonPath, ck.Tensors)
	}
	tensorsPath := filepath.Join(dir, ck.Tensors)
	if err := (store.Digest{Size: ck.TensorsSize, SHA256: ck.TensorsSHA256}).Verify(tensorsPath,
		"the checkpoint "+jsonName+" is unusable"); err != nil {
		return nil, errors.WithMessage(err, "fit: checkpoint tensors")
	}
	return &ck, nil
}

// setAside renames the files of a checkpoint that failed verification to "<name>.corrupt", so that neither resuming
// nor pruning takes them for a checkpoint, and returns the new names of those that existed.
func setAside(dir string, step int) ([]string, error) {
	var moved []string
	jsonName, tensorsName := checkpointName(step)
	for _, name := range []string{jsonName, tensorsName} {
		path := filepath.Join(dir, name)
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		if err := os.Rename(path, path+".corrupt"); err != nil {
			return moved, errors.Wrapf(err, "fit: setting aside the corrupt checkpoint file %s", path)
		}
		moved = append(moved, path+".corrupt")
	}
	return moved, nil
}

// LoadLatest loads the newest checkpoint in dir into vars (weights, optimizer state, step counter, RNG state) and
// returns its sidecar, for evaluation or inspection after training. Variables already in vars must have the stored
// shapes; missing ones are created. Build graphs on vars afterwards (see store.ImportContext). Errors are
// those of LatestCheckpoint plus shape mismatches, each naming the file and the tensor.
func LoadLatest(dir string, vars *model.Store) (*Checkpoint, error) {
	ck, err := LatestCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	if _, err := store.ImportContext(vars, filepath.Join(dir, ck.Tensors)); err != nil {
		return nil, errors.WithMessage(err, "fit.LoadLatest")
	}
	return ck, nil
}
