package fit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gomlx/gomlx/pkg/ml/context"
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

// saveCheckpoint writes ctx's variables and then the sidecar ck (whose Step, TrainState, ValState, Elapsed, Config
// and History the caller fills), both atomically; the sidecar is renamed into place last, so a crash at any point
// leaves either a complete checkpoint or none. Then it deletes all but the newest keep checkpoints, stray tensors
// files and temporary files.
func saveCheckpoint(dir string, ctx *context.Context, ck *Checkpoint, keep int) error {
	jsonName, tensorsName := checkpointName(ck.Step)
	tensorsPath := filepath.Join(dir, tensorsName)
	meta := map[string]string{"protolab.step": fmt.Sprint(ck.Step), "protolab.format": CheckpointFormat}
	if err := store.ExportContext(ctx, tensorsPath, nil, meta); err != nil {
		return errors.WithMessagef(err, "fit: checkpoint at step %d", ck.Step)
	}
	size, sum, err := fileDigest(tensorsPath)
	if err != nil {
		return errors.WithMessagef(err, "fit: checkpoint at step %d", ck.Step)
	}
	ck.Format = CheckpointFormat
	ck.Tensors = tensorsName
	ck.TensorsSize = size
	ck.TensorsSHA256 = sum
	ck.Written = time.Now().UTC()
	if err := store.SaveJSON(filepath.Join(dir, jsonName), ck); err != nil {
		return errors.WithMessagef(err, "fit: checkpoint at step %d", ck.Step)
	}
	return pruneCheckpoints(dir, keep)
}

// pruneCheckpoints keeps the newest keep sidecars (and their tensors files), deleting each older sidecar before its
// tensors file. It also removes tensors files without a sidecar older than the newest checkpoint (left by a crash
// between the two renames) and leftover temporary files of checkpoints.
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
		stray := strings.HasPrefix(name, ".ckpt-") && strings.Contains(name, ".tmp-")
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

// fileDigest returns the size and hex SHA-256 of a file.
func fileDigest(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", errors.Wrap(err, "hashing")
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", errors.Wrapf(err, "hashing %s", path)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// LatestCheckpoint reads the sidecar of the newest checkpoint in dir and checks that its tensors file exists with the
// recorded size and SHA-256; it does not load the tensors. Errors name the folder or file: a missing folder, no
// checkpoint (wrapping ErrNoCheckpoint), an unreadable or invalid sidecar, a missing or corrupt tensors file.
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
	jsonName, _ := checkpointName(steps[len(steps)-1])
	jsonPath := filepath.Join(dir, jsonName)
	var ck Checkpoint
	if err := store.LoadJSON(jsonPath, &ck); err != nil {
		return nil, errors.WithMessage(err, "fit: corrupt checkpoint sidecar (delete it to fall back to an older one)")
	}
	switch {
	case ck.Format != CheckpointFormat:
		return nil, errors.Errorf("fit: checkpoint %s has format %q, want %q", jsonPath, ck.Format, CheckpointFormat)
	case ck.Step != steps[len(steps)-1]:
		return nil, errors.Errorf("fit: checkpoint %s records step %d, but its name says %d", jsonPath, ck.Step,
			steps[len(steps)-1])
	case ck.Tensors == "" || filepath.Base(ck.Tensors) != ck.Tensors:
		return nil, errors.Errorf("fit: checkpoint %s names tensors file %q, want a file name in the same folder",
			jsonPath, ck.Tensors)
	}
	tensorsPath := filepath.Join(dir, ck.Tensors)
	size, sum, err := fileDigest(tensorsPath)
	if err != nil {
		return nil, errors.WithMessagef(err, "fit: checkpoint %s: tensors file missing or unreadable", jsonPath)
	}
	if size != ck.TensorsSize || sum != ck.TensorsSHA256 {
		return nil, errors.Errorf("fit: checkpoint %s: tensors file %s is corrupt (%d bytes, sha256 %.12s…; "+
			"recorded %d bytes, sha256 %.12s…)", jsonPath, tensorsPath, size, sum, ck.TensorsSize, ck.TensorsSHA256)
	}
	return &ck, nil
}

// LoadLatest loads the newest checkpoint in dir into ctx (weights, optimizer state, step counter, RNG state) and
// returns its sidecar, for evaluation or inspection after training. Variables already in ctx must have the stored
// shapes; missing ones are created. Build graphs on ctx.Reuse() afterwards (see store.ImportContext). Errors are
// those of LatestCheckpoint plus shape mismatches, each naming the file and the tensor.
func LoadLatest(dir string, ctx *context.Context) (*Checkpoint, error) {
	ck, err := LatestCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	if _, err := store.ImportContext(ctx, filepath.Join(dir, ck.Tensors)); err != nil {
		return nil, errors.WithMessage(err, "fit.LoadLatest")
	}
	return ck, nil
}
