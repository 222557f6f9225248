package lm

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// v026Run is a run folder written by ProtoLab on gomlx v0.26.0 (commit 72267e1, the last before the v0.28 port):
//
//	protolab train --preset tiny --set "model.width=16;model.num_layers=1;train.steps=6;train.checkpoint_every=2;train.eval_every=3"
//
// with its step-6 checkpoint removed (weights.safetensors holds step 6; checkpoints/ holds step 4 with its AdamW
// moments and data position).
const v026Run = "testdata/v026-run"

// float32Rel is the tolerance for the same float32 computation on gomlx v0.26's and v0.28's matmul kernels, which sum
// in different orders: the house float32 parity tolerance (docs/STYLE.md §11.1), room for a few units of float32
// rounding (2⁻²³ ≈ 1.2e-7) per reduction accumulated over a handful of training steps of a one-layer model.
const float32Rel = 1e-5

func copyRun(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.CopyFS(dir, os.DirFS(v026Run)))
	return dir
}

func requireRel(t *testing.T, want, got float64, what string) {
	t.Helper()
	require.LessOrEqual(t, math.Abs(got-want), float32Rel*math.Abs(want), "%s: v0.26 %.9g, now %.9g", what, want, got)
}

// TestOpen_RunFolderWrittenByV026 opens the v0.26 run folder (its weights' names, the #rngState variable and the
// result's digest) and evaluates it again: the validation loss v0.26 recorded, to float32 rounding.
func TestOpen_RunFolderWrittenByV026(t *testing.T) {
	m, err := Open(copyRun(t))
	require.NoError(t, err)
	require.NotNil(t, m.Result)
	require.Equal(t, "v0.26.0", m.Result.Provenance.GomlxVer, "the fixture must come from the old version")
	requireRel(t, m.Result.Val.Loss, valTensors(t, m).Loss, "validation loss")
}

// TestTrain_ResumesACheckpointWrittenByV026 resumes the v0.26 run from its step-4 checkpoint (weights, AdamW moments,
// step counter, data position) and trains steps 5 and 6 on this version: their losses and gradient norms, and the
// final validation loss, are v0.26's to float32 rounding.
func TestTrain_ResumesACheckpointWrittenByV026(t *testing.T) {
	dir := copyRun(t)
	var old Result
	require.NoError(t, store.LoadJSON(filepath.Join(dir, ResultFile), &old))
	for _, f := range []string{ResultFile, WeightsFile} {
		require.NoError(t, os.Remove(filepath.Join(dir, f)))
	}
	var cfg Config
	require.NoError(t, store.LoadJSON(filepath.Join(dir, ConfigFile), &cfg))

	m, err := Train(cfg, dir, run.Progress(nil))
	require.NoError(t, err)
	got := m.Result.History.Steps
	require.Len(t, got, 6)
	for i := range 4 { // restored from the checkpoint, not retrained: v0.26's own wall-clock times
		require.Equal(t, old.History.Steps[i].Elapsed, got[i].Elapsed, "step %d was not restored", i+1)
	}
	for i := 4; i < 6; i++ {
		want := old.History.Steps[i]
		require.Equal(t, want.Step, got[i].Step)
		requireRel(t, want.Loss, got[i].Loss, "training loss at the resumed step")
		requireRel(t, want.GradNorm, got[i].GradNorm, "gradient norm at the resumed step")
	}
	requireRel(t, old.Val.Loss, m.Result.Val.Loss, "final validation loss")
}
