package lm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
	"github.com/protolab/protolab/workbench/wbtest"
)

// shortRun is tinyConfig cut to a few steps.
func shortRun() Config {
	cfg := tinyConfig()
	cfg.Train.Steps, cfg.Train.WarmupSteps = 2, 1
	return cfg
}

// TestTrain_RefusedFoldersStayByteIdentical: every folder Train must not train in is refused with an error naming
// the problem and the fix, and is left byte-identical (no lock file, no config.json, nothing created).
func TestTrain_RefusedFoldersStayByteIdentical(t *testing.T) {
	cfg := shortRun()
	root := t.TempDir()
	finished := filepath.Join(root, "finished")
	_, err := Train(cfg, finished, run.Progress(nil))
	require.NoError(t, err)

	mkdir := func(name string, files map[string]string) string {
		dir := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for n, content := range files {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(content), 0o644))
		}
		return dir
	}
	copyRun := func(name string) string {
		dir := filepath.Join(root, name)
		require.NoError(t, os.CopyFS(dir, os.DirFS(finished)))
		return dir
	}
	wider := cfg
	wider.Model.Width = 32
	deeper := cfg
	deeper.Model.NumLayers = 2
	noConfig := copyRun("noconfig")
	require.NoError(t, os.Remove(filepath.Join(noConfig, ConfigFile)))
	corrupt := copyRun("corrupt")
	require.NoError(t, os.WriteFile(filepath.Join(corrupt, ConfigFile), []byte(`{"seed": 3,`), 0o644))
	foreignCkpt := copyRun("foreignckpt")
	require.NoError(t, os.WriteFile(filepath.Join(foreignCkpt, CheckpointDir, "mine.txt"), []byte("x"), 0o644))
	for _, c := range []struct {
		name string
		dir  string
		cfg  Config
		want []string
	}{
		{"a wider model", finished, wider, []string{"model.width: 16 → 32", "--fresh"}},
		{"a deeper model", finished, deeper, []string{"model.num_layers: 1 → 2", "--fresh"}},
		{"the user's folder", mkdir("mine", map[string]string{"notes.txt": "precious"}), cfg,
			[]string{"is not empty and is not a ProtoLab run folder (it holds notes.txt)"}},
		{"run files without config.json", noConfig, cfg,
			[]string{"holds run files (checkpoints, result.json, tokenizer.json, weights.safetensors) but no config.json",
				"--fresh"}},
		{"a corrupt config.json", corrupt, cfg, []string{"config.json is corrupt", "unexpected end of JSON input",
			"--fresh"}},
		{"a foreign file among the checkpoints", foreignCkpt, deeper, []string{"model.num_layers: 1 → 2"}},
		{"a file", mkdir("file", map[string]string{"f": "x"}) + "/f", cfg, []string{"is a file, not a run folder"}},
		{"a folder below a file", mkdir("file2", map[string]string{"f": "x"}) + "/f/run", cfg,
			[]string{"cannot use " + root + "/file2/f/run as the run folder; choose another folder", "not a directory"}},
	} {
		before := wbtest.FolderSnapshot(t, root)
		_, err := Train(c.cfg, c.dir, run.Progress(nil))
		for _, w := range c.want {
			require.ErrorContains(t, err, w, c.name)
		}
		require.Equal(t, before, wbtest.FolderSnapshot(t, root), "%s: the refused folder changed", c.name)
	}
	// Without config.json the foreign file is named.
	require.NoError(t, os.Remove(filepath.Join(foreignCkpt, ConfigFile)))
	_, err = Train(cfg, foreignCkpt, run.Progress(nil))
	require.ErrorContains(t, err, "it holds checkpoints/mine.txt")
}

// TestTrain_UnwritableFolderFailsBeforeTheData: a read-only --out is refused before any data is prepared, naming
// the folder and the fix. Root ignores permissions, so this needs an ordinary user.
func TestTrain_UnwritableFolderFailsBeforeTheData(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only folders; TestTrain_RefusedFoldersStayByteIdentical covers --out below a file")
	}
	cfg := shortRun()
	cfg.Data.Synthetic.Seed = 23 // a corpus no test prepares (Resolved overwrites Data.Seed): a preparation would log
	ro := t.TempDir()
	require.NoError(t, os.Chmod(ro, 0o555))
	defer os.Chmod(ro, 0o755)
	var progress strings.Builder
	_, err := Train(cfg, ro, run.Progress(&progress))
	require.ErrorContains(t, err, "is not writable; choose another folder or make it writable")
	require.NotContains(t, progress.String(), "preparing the data")
	_, err = Train(cfg, filepath.Join(ro, "run"), run.Progress(&progress))
	require.ErrorContains(t, err, "cannot create the run folder")
	require.NotContains(t, progress.String(), "preparing the data")
}

// TestTrain_FinishedRunIsOpenedNotRewritten: training a finished run's config again in its folder opens it; no file
// changes (result.json keeps its provenance and timings).
func TestTrain_FinishedRunIsOpenedNotRewritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	first, err := Train(shortRun(), dir, run.Progress(nil))
	require.NoError(t, err)
	require.False(t, first.Cached)
	require.NotNil(t, first.Result.Weights)
	before := wbtest.FolderSnapshot(t, dir)
	var progress strings.Builder
	again, err := Train(shortRun(), dir, run.Progress(&progress))
	require.NoError(t, err)
	require.True(t, again.Cached)
	require.Equal(t, first.Result.Val, again.Result.Val)
	require.Contains(t, progress.String(), "already holds this finished run")
	require.Equal(t, before, wbtest.FolderSnapshot(t, dir))
}

// TestTrain_FailedRunLeavesNoFolder: a run that fails before its first checkpoint removes the folders it created,
// but never a folder that existed before (nor anything in it).
func TestTrain_FailedRunLeavesNoFolder(t *testing.T) {
	cfg := shortRun()
	cfg.Data.Source = filepath.Join(t.TempDir(), "missing.txt")
	root := t.TempDir()
	_, err := Train(cfg, filepath.Join(root, "a", "b", "run"), run.Progress(nil))
	require.ErrorContains(t, err, "missing.txt")
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Empty(t, entries, "the failed run left folders behind")

	existing := filepath.Join(root, "existing")
	require.NoError(t, os.Mkdir(existing, 0o755))
	_, err = Train(cfg, existing, run.Progress(nil))
	require.ErrorContains(t, err, "missing.txt")
	require.DirExists(t, existing)
}

// TestTrain_LockedFolderIsRefused: while another holder has the run folder locked, Train fails at once naming it,
// and writes nothing; a lock left by a holder that no longer holds it does not block.
func TestTrain_LockedFolderIsRefused(t *testing.T) {
	dir := t.TempDir()
	lock, err := store.Lock(dir)
	require.NoError(t, err)
	_, err = Train(shortRun(), dir, run.Progress(nil))
	require.ErrorIs(t, err, store.ErrLocked)
	require.ErrorContains(t, err, fmt.Sprintf("another run is training in this folder: %s is in use by process %d",
		dir, os.Getpid()))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the holder's lock file")
	require.NoError(t, lock.Release())
	// A stale lock file (its holder was killed; no process holds the flock) is taken over.
	require.NoError(t, os.WriteFile(filepath.Join(dir, store.LockFile), []byte(`{"pid": 999999999}`), 0o644))
	_, err = Train(shortRun(), dir, run.Progress(nil))
	require.NoError(t, err)
	require.NoFileExists(t, filepath.Join(dir, store.LockFile))
}

// TestRemoveRun: --fresh removes a run folder (then the run trains afresh there), but refuses, changing nothing, a
// folder holding the user's files or one in use.
func TestRemoveRun(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, RemoveRun(filepath.Join(root, "missing")))
	dir := filepath.Join(root, "run")
	_, err := Train(shortRun(), dir, run.Progress(nil))
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
	before := wbtest.FolderSnapshot(t, root)
	require.ErrorContains(t, RemoveRun(dir), "holds files ProtoLab did not write (notes.txt)")
	require.Equal(t, before, wbtest.FolderSnapshot(t, root))
	require.NoError(t, os.Remove(filepath.Join(dir, "notes.txt")))

	lock, err := store.Lock(dir)
	require.NoError(t, err)
	require.ErrorContains(t, RemoveRun(dir), fmt.Sprintf("in use by process %d", os.Getpid()))
	require.FileExists(t, filepath.Join(dir, ResultFile))
	require.NoError(t, lock.Release())

	require.NoError(t, RemoveRun(dir))
	require.NoDirExists(t, dir)
	other := shortRun()
	other.Model.NumLayers = 2
	m, err := Train(other, dir, run.Progress(nil))
	require.NoError(t, err)
	require.False(t, m.Cached)
}

// TestOpen_WeightsDigest: result.json records the weights' SHA-256, and a flipped byte in weights.safetensors (one
// the safetensors parser cannot notice: a weight's value) is an error naming the file and the fix.
func TestOpen_WeightsDigest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	m, err := Train(shortRun(), dir, run.Progress(nil))
	require.NoError(t, err)
	path := filepath.Join(dir, WeightsFile)
	d, err := store.FileDigest(path)
	require.NoError(t, err)
	require.Equal(t, &d, m.Result.Weights)
	_, err = Open(dir)
	require.NoError(t, err)

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[len(b)-5] ^= 0x01 // the low bits of the last weight
	require.NoError(t, os.WriteFile(path, b, 0o644))
	_, err = Open(dir)
	require.ErrorContains(t, err, path+" is corrupt")
	require.ErrorContains(t, err, "retrain with `protolab train --fresh --out "+dir+"`")
}

// TestTrain_DamagedCheckpointFallsBack: a run interrupted after its checkpoints at 5, 10 and 12 whose newest checkpoint
// is damaged opens from step 10 and resumes from it, with a warning naming the damaged file, and ends as the
// uninterrupted run does. A checkpoint of another run (its config.json swapped for another data config) is refused,
// naming the key.
func TestTrain_DamagedCheckpointFallsBack(t *testing.T) {
	cfg := tinyConfig()
	cfg.Train.CheckpointEvery, cfg.Train.KeepCheckpoints = 5, 3
	root := t.TempDir()
	whole, err := Train(cfg, filepath.Join(root, "whole"), run.Progress(nil))
	require.NoError(t, err)

	dir := filepath.Join(root, "cut")
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Train(cfg, dir, run.Progress(nil), run.Context(ctx), run.OnMetric(func(m run.Metric) {
		if m.Name == run.MetricTrainLoss && m.Step == 12 {
			cancel()
		}
	}))
	require.ErrorIs(t, err, context.Canceled)
	ckDir := filepath.Join(dir, CheckpointDir)
	ck, err := fit.LatestCheckpoint(ckDir)
	require.NoError(t, err)
	require.Equal(t, 12, ck.Step)

	other := cfg
	other.Data.Synthetic.NumDocs = 90
	swapped := filepath.Join(root, "swapped")
	require.NoError(t, os.CopyFS(swapped, os.DirFS(dir)))
	require.NoError(t, store.SaveJSON(filepath.Join(swapped, ConfigFile), other.Resolved()))
	_, err = Train(other, swapped, run.Progress(nil))
	require.ErrorContains(t, err, "belongs to another run")
	require.ErrorContains(t, err, "data.synthetic.num_docs: 80 → 90")

	tensors := filepath.Join(ckDir, "ckpt-00000012.safetensors")
	b, err := os.ReadFile(tensors)
	require.NoError(t, err)
	b[len(b)/2] ^= 0x10
	require.NoError(t, os.WriteFile(tensors, b, 0o644))
	m, err := Open(dir)
	require.NoError(t, err, "Open must fall back to checkpoint 10")
	require.Nil(t, m.Result)

	var progress strings.Builder
	resumed, err := Train(cfg, dir, run.Progress(&progress))
	require.NoError(t, err)
	require.Contains(t, progress.String(), "warning: skipped checkpoint 12")
	require.Contains(t, progress.String(), tensors)
	require.Equal(t, whole.Result.Val.Loss, resumed.Result.Val.Loss)
	require.FileExists(t, tensors+".corrupt")
}

// TestPrepare_TheFoldersTokenizerWins: when a run folder's tokenizer.json differs from the tokenizer memoised for
// its data config, the model's data uses the folder's (the one it was trained with).
func TestPrepare_TheFoldersTokenizerWins(t *testing.T) {
	cfg := shortRun()
	dir := filepath.Join(t.TempDir(), "run")
	first, err := Train(cfg, dir, run.Progress(nil))
	require.NoError(t, err)
	otherData := cfg
	otherData.Data.Synthetic.Seed = 29 // another corpus: another tokenizer of the same size
	other, err := Train(otherData, "", run.Progress(nil))
	require.NoError(t, err)
	require.NotEqual(t, first.Tokenizer.Merges(), other.Tokenizer.Merges())
	require.NoError(t, other.Tokenizer.Save(filepath.Join(dir, TokenizerFile)))
	_, err = PrepareData(first.Config.Data) // memoised now, whatever other tests prepared before
	require.NoError(t, err)

	m, err := Open(dir)
	require.NoError(t, err)
	p, err := m.Data()
	require.NoError(t, err)
	got, err := p.Tokenizer.MarshalJSON()
	require.NoError(t, err)
	want, err := other.Tokenizer.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

// TestTrain_CorruptTokenizerIsNamed: an unfinished run whose tokenizer.json is damaged fails naming the file and the
// fix, whether or not this process has its data memoised.
func TestTrain_CorruptTokenizerIsNamed(t *testing.T) {
	cfg := shortRun()
	dir := filepath.Join(t.TempDir(), "run")
	_, err := Train(cfg, dir, run.Progress(nil))
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(dir, ResultFile)))
	require.NoError(t, os.Remove(filepath.Join(dir, WeightsFile)))
	tok := filepath.Join(dir, TokenizerFile)
	require.NoError(t, os.WriteFile(tok, []byte(`{"vocab_size": 3`), 0o644))
	_, err = Train(cfg, dir, run.Progress(nil))
	require.ErrorContains(t, err, tok+" is corrupt; delete it to retrain")
	m, err := Open(dir)
	if err == nil {
		_, err = m.Data()
	}
	require.ErrorContains(t, err, tok)
}
