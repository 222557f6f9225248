package fit

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/store"
)

// TestTrain_RefusesACheckpointOfAnotherRun: with RunConfig, a checkpoint written for another run (here another
// data source) is refused, naming the key, although its optimisation config is the same; the folder is unchanged.
func TestTrain_RefusesACheckpointOfAnotherRun(t *testing.T) {
	type runDesc struct {
		Data struct {
			Source string `json:"source"`
		} `json:"data"`
		Seed int `json:"seed"`
	}
	var a runDesc
	a.Data.Source, a.Seed = "synthetic", 1
	cfg := testConfig()
	cfg.Steps, cfg.WarmupSteps, cfg.CheckpointEvery = 4, 1, 2
	dir := t.TempDir()
	if r := trainTest(t, cfg, nil, CheckpointDir(dir), RunConfig(a)); r.err != nil {
		t.Fatalf("%+v", r.err)
	}
	before := snapshotDir(t, dir)
	b := a
	b.Data.Source = "wordnet"
	r := trainTest(t, cfg, nil, CheckpointDir(dir), RunConfig(b))
	requireErrorMentions(t, "another data source", r.err, "belongs to another run", `data.source: "synthetic" → "wordnet"`,
		dir)
	if after := snapshotDir(t, dir); after != before {
		t.Errorf("the refused resume changed the folder:\n%s\nwant:\n%s", after, before)
	}
	if r := trainTest(t, cfg, nil, CheckpointDir(dir), RunConfig(a)); r.err != nil {
		t.Fatalf("the same run must resume: %+v", r.err)
	}
}

// TestTrain_LocksTheCheckpointFolder: while the folder is locked (here by this process, as another Train would), Train
// fails at once naming the holder and writes nothing; after the release it trains.
func TestTrain_LocksTheCheckpointFolder(t *testing.T) {
	cfg := testConfig()
	cfg.Steps, cfg.WarmupSteps, cfg.CheckpointEvery = 2, 1, 1
	dir := t.TempDir()
	lock, err := store.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := trainTest(t, cfg, nil, CheckpointDir(dir))
	requireErrorMentions(t, "locked folder", r.err, fmt.Sprintf("in use by process %d", os.Getpid()))
	if !errors.Is(r.err, store.ErrLocked) {
		t.Errorf("error %v does not wrap store.ErrLocked", r.err)
	}
	if got := snapshotDir(t, dir); got != store.LockFile+"\n" {
		t.Errorf("Train wrote into a locked folder: %q", got)
	}
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	if r := trainTest(t, cfg, nil, CheckpointDir(dir)); r.err != nil {
		t.Fatalf("%+v", r.err)
	}
	if _, err := os.Stat(filepath.Join(dir, store.LockFile)); !os.IsNotExist(err) {
		t.Errorf("Train left its lock file behind: %v", err)
	}
}

// snapshotDir lists the files of dir with their contents' digests, one per line.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := ""
	for _, e := range entries {
		s += e.Name()
		if e.Name() != store.LockFile {
			d, err := store.FileDigest(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			s += fmt.Sprintf(" %d %s", d.Size, d.SHA256)
		}
		s += "\n"
	}
	return s
}
