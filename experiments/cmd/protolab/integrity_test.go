package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/store"
	"github.com/protolab/protolab/workbench/wbtest"
)

// integrityArgs train the Tiny preset for 30 steps with a checkpoint every 5: a few seconds, long enough to kill it
// or to start a second process while it runs.
var integrityArgs = []string{"train", "--preset", "tiny", "--set", "train.steps=30;train.checkpoint_every=5"}

// cli runs protolab in a child process (the test binary running main(), see TestMain) and returns its exit status,
// stdout and stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// startCLI starts protolab in a child process, its output discarded unless stderr is given.
func startCLI(t *testing.T, stderr *bytes.Buffer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	if stderr != nil {
		cmd.Stderr = stderr
	}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// waitFor polls until ok holds, failing the test after a minute.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// weightValues reads a weights file as tensor name → "shape: values", every value exact. The file's bytes are not
// compared: its metadata records the git state of the working tree, which may change between two runs.
func weightValues(t *testing.T, path string) map[string]string {
	t.Helper()
	values, _, err := store.Load(path)
	require.NoError(t, err)
	out := map[string]string{}
	for name, v := range values {
		out[name] = fmt.Sprintf("%s: %v", v.Shape(), v.Value())
	}
	return out
}

// requireRefused runs protolab, expects exit status 1 with stderr naming every want, and the folder byte-identical.
func requireRefused(t *testing.T, dir string, wants []string, args ...string) {
	t.Helper()
	before := wbtest.FolderSnapshot(t, dir)
	code, _, stderr := cli(t, args...)
	require.Equal(t, 1, code, "stderr:\n%s", stderr)
	for _, w := range wants {
		require.Contains(t, stderr, w)
	}
	require.Equal(t, before, wbtest.FolderSnapshot(t, dir), "the refused run changed %s", dir)
}

// TestCLI_RunFolderIntegrity drives protolab train in child processes through the cases of issue #16:
//   - kill -9 during training, then the same command: the run resumes (the killed process's lock does not block) and
//     ends with the same weights, byte for byte, and validation loss as an uninterrupted run;
//   - the killed run's folder resumed with another data.source, and the finished run rerun with model.num_layers=1
//     or model.width=64: refused naming the key and --fresh, the folder byte-identical; the same config again opens
//     the finished run without rewriting anything;
//   - two concurrent runs on one folder: the second fails at once naming the first's PID, the first finishes with
//     the uninterrupted run's weights.
func TestCLI_RunFolderIntegrity(t *testing.T) {
	root := t.TempDir()
	out := func(name string) []string {
		return append(append([]string{}, integrityArgs...), "--out", filepath.Join(root, name))
	}

	whole := filepath.Join(root, "whole")
	code, _, stderr := cli(t, out("whole")...)
	require.Equal(t, 0, code, "stderr:\n%s", stderr)
	wantWeights := weightValues(t, filepath.Join(whole, lm.WeightsFile))
	var wantRes lm.Result
	require.NoError(t, store.LoadJSON(filepath.Join(whole, lm.ResultFile), &wantRes))

	t.Run("kill -9 then resume", func(t *testing.T) {
		dir := filepath.Join(root, "killed")
		cmd := startCLI(t, nil, out("killed")...)
		waitFor(t, "the first checkpoint", func() bool {
			_, err := os.Stat(filepath.Join(dir, lm.CheckpointDir, "ckpt-00000005.json"))
			return err == nil
		})
		require.NoError(t, cmd.Process.Kill()) // SIGKILL: no cleanup runs
		_ = cmd.Wait()
		require.NoFileExists(t, filepath.Join(dir, lm.ResultFile), "the run finished before the kill")
		lock, err := os.ReadFile(filepath.Join(dir, store.LockFile))
		require.NoError(t, err, "the killed process's lock file stays")
		require.Contains(t, string(lock), fmt.Sprintf(`"pid":%d`, cmd.Process.Pid))

		requireRefused(t, dir, []string{`data.source: "synthetic" → "wordnet"`, "--fresh"},
			append(out("killed"), "--set", "data.source=wordnet")...)

		code, _, stderr := cli(t, out("killed")...)
		require.Equal(t, 0, code, "stderr:\n%s", stderr)
		require.Equal(t, wantWeights, weightValues(t, filepath.Join(dir, lm.WeightsFile)),
			"the resumed run's weights differ from the uninterrupted run's")
		var res lm.Result
		require.NoError(t, store.LoadJSON(filepath.Join(dir, lm.ResultFile), &res))
		require.Equal(t, wantRes.Val.Loss, res.Val.Loss)
		require.Equal(t, wantRes.History.Steps[len(wantRes.History.Steps)-1].Loss,
			res.History.Steps[len(res.History.Steps)-1].Loss)
		require.NoFileExists(t, filepath.Join(dir, store.LockFile))
	})

	t.Run("another config leaves the folder byte-identical", func(t *testing.T) {
		requireRefused(t, whole, []string{"model.num_layers: 2 → 1", "--fresh"},
			append(out("whole"), "--set", "model.num_layers=1")...)
		requireRefused(t, whole, []string{"model.width: 32 → 64", "--fresh"},
			append(out("whole"), "--set", "model.width=64")...)
		before := wbtest.FolderSnapshot(t, whole)
		code, stdout, stderr := cli(t, out("whole")...)
		require.Equal(t, 0, code, "stderr:\n%s", stderr)
		require.Contains(t, stderr, "already holds this finished run")
		require.Contains(t, stdout, "perplexity")
		require.Equal(t, before, wbtest.FolderSnapshot(t, whole), "rerunning a finished run rewrote it")
	})

	t.Run("two processes on one folder", func(t *testing.T) {
		dir := filepath.Join(root, "shared")
		var firstErr bytes.Buffer
		first := startCLI(t, &firstErr, out("shared")...)
		waitFor(t, "the first run's lock", func() bool {
			b, err := os.ReadFile(filepath.Join(dir, store.LockFile))
			return err == nil && strings.Contains(string(b), fmt.Sprintf(`"pid":%d`, first.Process.Pid))
		})
		code, _, stderr := cli(t, out("shared")...)
		require.NotContains(t, stderr, "already holds this finished run", "the first run ended before the second "+
			"started; the test needs more train.steps")
		require.Equal(t, 1, code, "stderr:\n%s", stderr)
		require.Contains(t, stderr, fmt.Sprintf("is in use by process %d on host", first.Process.Pid))
		require.Contains(t, stderr, "wait for it to finish or stop it")
		require.NoError(t, first.Wait(), "the first run failed:\n%s", firstErr.String())
		require.Equal(t, wantWeights, weightValues(t, filepath.Join(dir, lm.WeightsFile)),
			"the first run's weights differ from the uninterrupted run's")
		require.NoFileExists(t, filepath.Join(dir, store.LockFile))
	})
}

// TestTrain_Fresh: --fresh replaces a run folder (here with another config), refuses a folder holding the user's
// files without changing it, and is harmless on a missing folder.
func TestTrain_Fresh(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "run")
	var out bytes.Buffer
	args := []string{"train", "--preset", "tiny", "--set", "train.steps=2;train.warmup_steps=1", "--out", dir}
	require.NoError(t, dispatch(append(args, "--fresh"), &out), "a missing folder")
	err := dispatch(append(args, "--set", "model.num_layers=1"), &out)
	require.ErrorContains(t, err, "model.num_layers: 2 → 1")
	require.NoError(t, dispatch(append(args, "--set", "model.num_layers=1", "--fresh"), &out))
	var cfg lm.Config
	require.NoError(t, store.LoadJSON(filepath.Join(dir, lm.ConfigFile), &cfg))
	require.Equal(t, 1, cfg.Model.NumLayers)

	mine := filepath.Join(root, "mine")
	require.NoError(t, os.Mkdir(mine, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("precious"), 0o644))
	before := wbtest.FolderSnapshot(t, mine)
	err = dispatch([]string{"train", "--preset", "tiny", "--fresh", "--out", mine}, &out)
	require.ErrorContains(t, err, "holds files ProtoLab did not write (notes.txt)")
	require.Equal(t, before, wbtest.FolderSnapshot(t, mine))
}
