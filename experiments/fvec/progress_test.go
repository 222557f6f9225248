package fvec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/protolab/protolab/models/icl"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// progressConfig is smaller than Tiny: depth 3, 16 tokens, 20 steps per model, one worker (chains finish in a
// fixed order, so an interruption after the n-th model is reproducible). With patch it trains A (kept and patched,
// so the loaded models feed the patching and probes) and C on the tree prior and C on the Gaussian one.
func progressConfig(patch bool) Config {
	cfg := Tiny()
	cfg.Data.Tree = prior.Tree{Depth: 3, Alpha: 0.6}
	cfg.Data.Tokens, cfg.Data.TestContexts, cfg.Data.ValContexts, cfg.Data.DesignContexts = 16, 64, 32, 0
	cfg.Data.PatchPairs, cfg.Data.TheoryContexts = 20, 200
	cfg.Train.Steps = 20
	cfg.Sweep.Workers = 1
	cfg.Sweep.TreeKinds, cfg.Sweep.PatchKinds, cfg.Sweep.GaussianKinds = []string{"c"}, nil, nil
	if patch {
		cfg.Sweep.TreeKinds, cfg.Sweep.PatchKinds, cfg.Sweep.GaussianKinds = []string{"a", "c"}, []string{"a"},
			[]string{"c"}
	}
	return cfg
}

// lineLog collects progress lines and calls onLine with each.
type lineLog struct {
	mu     sync.Mutex
	lines  []string
	onLine func(line string)
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		l.lines = append(l.lines, line)
		if l.onLine != nil {
			l.onLine(line)
		}
	}
	return len(p), nil
}

// matching returns the lines that contain sub.
func (l *lineLog) matching(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

// interruptedRun runs cfg under out and cancels it when the n-th model has logged its validation MSE; it returns
// the chain folders stored (those with chain.json).
func interruptedRun(t *testing.T, cfg Config, out string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	models := 0
	log := &lineLog{onLine: func(line string) {
		if strings.Contains(line, "validation MSE") {
			if models++; models == n {
				cancel()
			}
		}
	}}
	_, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(log), run.Context(ctx))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: err = %+v, want context.Canceled", err)
	}
	stored, err := filepath.Glob(filepath.Join(mustProgressDir(t, out, cfg), "*", icl.ChainFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range stored {
		stored[i] = filepath.Base(filepath.Dir(p))
	}
	return stored
}

func mustProgressDir(t *testing.T, out string, cfg Config) string {
	t.Helper()
	dir, err := progressDir(out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// studyJSON is the JSON of what the study measured (Tree, Gaussian, Patches, Vectors, Checks) without the training
// wall times ("seconds", "train_seconds"), which no two runs share.
func studyJSON(t *testing.T, r *Result) string {
	t.Helper()
	data, err := json.Marshal(struct {
		Tree     *TreeResult
		Gaussian *GaussianResult
		Patches  []PatchResult
		Vectors  []VectorResult
		Checks   []Check
	}{r.Tree, r.Gaussian, r.Patches, r.Vectors, r.Checks})
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(v any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "seconds")
			delete(x, "train_seconds")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestLoadOrRun_ResumesFromProgress interrupts a run after its third model (the first chain, A on the tree prior
// at M = 1, 2, is stored; the second is half trained), reruns it in the same folder and compares with an
// uninterrupted run: the same result, the stored chain loaded (logged) rather than retrained, and the progress
// folder removed once the result is stored.
func TestLoadOrRun_ResumesFromProgress(t *testing.T) {
	cfg := progressConfig(true)
	root := t.TempDir()
	whole, err := Runs.LoadOrRun(cfg, run.Out(filepath.Join(root, "whole")), run.Progress(nil))
	if err != nil {
		t.Fatalf("%+v", err)
	}

	out := filepath.Join(root, "cut")
	stored := interruptedRun(t, cfg, out, 3)
	if want := []string{"tree-a-seed0"}; strings.Join(stored, ",") != strings.Join(want, ",") {
		t.Fatalf("stored chains %v after the interruption, want %v", stored, want)
	}
	log := &lineLog{}
	resumed, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(log))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	loaded := log.matching("loaded from progress")
	if len(loaded) != 1 || !strings.Contains(loaded[0], "tree prior, a, seed 0: loaded from progress") {
		t.Errorf("rerun logged %q, want one line for tree prior, a, seed 0", loaded)
	}
	if retrained := log.matching("tree prior, a, M=1, seed 0: validation MSE"); len(retrained) > 0 {
		t.Errorf("rerun retrained the stored chain: %q", retrained)
	}
	if a, b := studyJSON(t, whole), studyJSON(t, resumed); a != b {
		t.Errorf("resumed result differs from the uninterrupted one:\n%s\n%s", a, b)
	}
	if _, err := os.Stat(mustProgressDir(t, out, cfg)); !os.IsNotExist(err) {
		t.Errorf("progress folder after the stored result: %v, want removed", err)
	}
	result, err := store.CachePath(run.StudyDir(out, Study), run.ResultName, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(result) != run.ResultName+strings.TrimPrefix(filepath.Base(mustProgressDir(t, out, cfg)),
		progressName)+".json" {
		t.Errorf("result file %s and progress folder %s are not named by one hash", result,
			mustProgressDir(t, out, cfg))
	}
	if _, err := os.Stat(result); err != nil {
		t.Errorf("no stored result: %v", err)
	}
}

// TestLoadOrRun_ChangedConfigDoesNotReuseProgress: progress stored for one configuration is not loaded by a run of
// another (its own hash folder), and stays until its own run finishes.
func TestLoadOrRun_ChangedConfigDoesNotReuseProgress(t *testing.T) {
	cfg := progressConfig(false)
	out := t.TempDir()
	if stored := interruptedRun(t, cfg, out, 3); len(stored) != 1 {
		t.Fatalf("stored chains %v, want one", stored)
	}
	changed := cfg
	changed.Train.Steps = 21
	if mustProgressDir(t, out, cfg) == mustProgressDir(t, out, changed) {
		t.Fatal("a changed configuration has the same progress folder")
	}
	log := &lineLog{}
	if _, err := Runs.LoadOrRun(changed, run.Out(out), run.Progress(log)); err != nil {
		t.Fatalf("%+v", err)
	}
	if loaded := log.matching("loaded from progress"); len(loaded) > 0 {
		t.Errorf("a changed configuration loaded %q", loaded)
	}
	if got := len(log.matching("validation MSE")); got != 4 {
		t.Errorf("changed configuration trained %d models, want 4 (2 seeds × 2 M)", got)
	}
	if _, err := os.Stat(filepath.Join(mustProgressDir(t, out, cfg), "tree-c-seed0", icl.ChainFile)); err != nil {
		t.Errorf("the first configuration's progress is gone: %v", err)
	}
}

// TestLoadOrRun_DamagedProgress: a chain folder without chain.json (a run stopped while storing it) is retrained
// with a logged line; a chain.json or model file that exists but cannot be read is an error naming the file and
// the folder to delete.
func TestLoadOrRun_DamagedProgress(t *testing.T) {
	cfg := progressConfig(false)
	out := t.TempDir()
	if stored := interruptedRun(t, cfg, out, 3); len(stored) != 1 {
		t.Fatalf("stored chains %v, want one", stored)
	}
	dir := filepath.Join(mustProgressDir(t, out, cfg), "tree-c-seed0")
	for _, file := range []string{icl.ChainFile, icl.ModelFile} {
		path := filepath.Join(dir, file)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, good[:len(good)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = Runs.LoadOrRun(cfg, run.Out(out), run.Progress(nil))
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "delete the folder "+dir) {
			t.Errorf("truncated %s: err = %v, want one naming the file and the folder to delete", file, err)
		}
		if err := os.WriteFile(path, good, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(dir, icl.ChainFile)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := Runs.LoadOrRun(cfg, run.Out(out), run.Progress(&buf)); err != nil {
		t.Fatalf("%+v", err)
	}
	if !strings.Contains(buf.String(), "tree prior, c, seed 0: "+run.ShowPath(dir)+" has no chain.json") ||
		!strings.Contains(buf.String(), "tree prior, c, M=1, seed 0: validation MSE") {
		t.Errorf("a partial chain folder was not retrained with a logged line:\n%s", buf.String())
	}
}
