package fit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// finishedDir trains the test model for 4 steps with checkpoints at 2 and 4 and returns the folder.
func finishedDir(t *testing.T) (string, Config) {
	t.Helper()
	cfg := testConfig()
	cfg.Steps, cfg.WarmupSteps, cfg.CheckpointEvery, cfg.EvalEvery = 4, 1, 2, 2
	dir := t.TempDir()
	if r := trainTest(t, cfg, nil, CheckpointDir(dir)); r.err != nil {
		t.Fatalf("%+v", r.err)
	}
	return dir, cfg
}

// copyDir copies the files of src into a new temporary folder.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func requireErrorMentions(t *testing.T, what string, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: error %q does not mention %q", what, err, s)
		}
	}
}

func TestLoadLatest_Errors(t *testing.T) {
	good, cfg := finishedDir(t)
	if ck, err := LoadLatest(good, run.NewStore(1)); err != nil || ck.Step != 4 {
		t.Fatalf("undamaged folder: %+v, %+v", ck, err)
	}

	missing := filepath.Join(t.TempDir(), "nope")
	_, err := LoadLatest(missing, run.NewStore(1))
	requireErrorMentions(t, "missing folder", err, missing, "does not exist")

	empty := t.TempDir()
	_, err = LoadLatest(empty, run.NewStore(1))
	requireErrorMentions(t, "empty folder", err, empty, "no checkpoint", "holds no ckpt-")
	if !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("empty folder: error %v is not ErrNoCheckpoint", err)
	}

	// Damage to the newest checkpoint (step 4): LoadLatest falls back to step 2 and names the damaged file in
	// Skipped; Train resumes from step 2 with a warning, sets the damaged files aside and ends where the undamaged
	// run ended. Damage to both checkpoints is an error naming both.
	want, err := LoadLatest(good, run.NewStore(1))
	if err != nil {
		t.Fatal(err)
	}
	damage := []struct {
		name   string
		damage func(dir string, step int)
		want   []string
	}{
		{"invalid JSON", func(dir string, step int) { write(t, dir, sidecar(step), "{\"step\": 4,\n oops") },
			[]string{"corrupt checkpoint sidecar"}},
		{"empty JSON", func(dir string, step int) { write(t, dir, sidecar(step), "") }, []string{"empty"}},
		{"wrong format", func(dir string, step int) { write(t, dir, sidecar(step), `{"format": "other", "step": 4}`) },
			[]string{"format"}},
		{"missing tensors", func(dir string, step int) { remove(t, dir, tensorsOf(step)) },
			[]string{"missing"}},
		{"flipped byte", func(dir string, step int) { flipByte(t, filepath.Join(dir, tensorsOf(step)), 200) },
			[]string{"corrupt"}},
		{"truncated tensors", func(dir string, step int) { truncate(t, filepath.Join(dir, tensorsOf(step)), 100) },
			[]string{"corrupt"}},
	}
	for _, d := range damage {
		dir := copyDir(t, good)
		d.damage(dir, 4)
		ck, err := LoadLatest(dir, run.NewStore(1))
		if err != nil || ck.Step != 2 || len(ck.Skipped) != 1 {
			t.Fatalf("%s: LoadLatest = %+v, %+v; want step 2 with one skipped checkpoint", d.name, ck, err)
		}
		requireErrorMentions(t, d.name+" (skipped)", ck.Skipped[0], d.want...)
		requireErrorMentions(t, d.name+" (skipped)", ck.Skipped[0], "ckpt-00000004.")

		both := copyDir(t, dir)
		d.damage(both, 2)
		_, err = LoadLatest(both, run.NewStore(1))
		requireErrorMentions(t, d.name+" (both)", err, append(d.want, "no checkpoint in", "ckpt-00000004.",
			"ckpt-00000002.")...)
		// Train must refuse to resume from it rather than start over.
		r := trainTest(t, cfg, nil, CheckpointDir(both))
		requireErrorMentions(t, d.name+" (Train, both)", r.err, "resuming", "no checkpoint in")

		var progress strings.Builder
		r = trainTest(t, cfg, nil, CheckpointDir(dir), Progress(&progress))
		if r.err != nil {
			t.Fatalf("%s: resuming past the damaged checkpoint: %+v", d.name, r.err)
		}
		if !strings.Contains(progress.String(), "warning: skipped checkpoint 4") {
			t.Errorf("%s: no warning naming the skipped checkpoint in %q", d.name, progress.String())
		}
		got, w := r.hist.Steps[len(r.hist.Steps)-1], want.History.Steps[len(want.History.Steps)-1]
		if got.Step != w.Step || got.Loss != w.Loss || got.GradNorm != w.GradNorm || got.LR != w.LR {
			t.Errorf("%s: resumed run ends with %+v, want %+v", d.name, got, w)
		}
		if ck, err := LatestCheckpoint(dir); err != nil || ck.Step != 4 || len(ck.Skipped) != 0 {
			t.Errorf("%s: after resuming, LatestCheckpoint = %+v, %v; want an intact step 4", d.name, ck, err)
		}
		if !exists(filepath.Join(dir, sidecar(4)+".corrupt")) && !exists(filepath.Join(dir, tensorsOf(4)+".corrupt")) {
			t.Errorf("%s: the damaged files were not set aside as *.corrupt", d.name)
		}
	}

	// A context whose variable has another shape.
	vars := run.NewStore(1)
	vars.RootScope().At("hidden").At("dense").VariableWithValue("weights", [][]float64{{1, 2}, {3, 4}})
	_, err = LoadLatest(good, vars)
	requireErrorMentions(t, "shape mismatch", err, "hidden.dense.weights", "(Float64)[4, 5]", "(Float64)[2, 2]")

	// Resuming with another configuration.
	other := cfg
	other.LR *= 2
	r := trainTest(t, other, nil, CheckpointDir(good))
	requireErrorMentions(t, "config mismatch", r.err, "different config", "lr: ")
}

// TestCheckpoint_CrashLeftovers: files a crash can leave (a tensors file whose sidecar was never renamed into place,
// temporary files of dead writers) are ignored by LatestCheckpoint and removed by the next save, while a temporary
// file another live process is writing is left alone.
func TestCheckpoint_CrashLeftovers(t *testing.T) {
	dir, _ := finishedDir(t)
	dead := deadPID(t)
	live := os.Getppid() // the go command running this test
	write(t, dir, "ckpt-00000006.safetensors", "half a file")
	write(t, dir, "ckpt-00000003.safetensors", "orphan")
	deadTmp := fmt.Sprintf(".ckpt-00000006.json.tmp-%d-123", dead)
	ownTmp := fmt.Sprintf(".ckpt-00000007.json.tmp-%d-123", os.Getpid())
	liveTmp := fmt.Sprintf(".ckpt-00000006.safetensors.tmp-%d-456", live)
	write(t, dir, deadTmp, "{")
	write(t, dir, ownTmp, "{")
	write(t, dir, liveTmp, "half")
	write(t, dir, ".ckpt-00000005.json.tmp-789", "{") // an older version's name, without a PID: kept while recent
	write(t, dir, ".ckpt-00000004.json.tmp-790", "{") // the same, two hours old: abandoned
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, ".ckpt-00000004.json.tmp-790"), old, old); err != nil {
		t.Fatal(err)
	}
	ck, err := LatestCheckpoint(dir)
	if err != nil || ck.Step != 4 {
		t.Fatalf("LatestCheckpoint = %+v, %+v; want step 4", ck, err)
	}
	vars := run.NewStore(1)
	if _, err := LoadLatest(dir, vars); err != nil {
		t.Fatalf("%+v", err)
	}
	ck.Step = 5
	if err := saveCheckpoint(dir, vars, ck, 2); err != nil {
		t.Fatalf("%+v", err)
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := ".ckpt-00000005.json.tmp-789 " + liveTmp + " ckpt-00000004.json ckpt-00000004.safetensors " +
		"ckpt-00000005.json ckpt-00000005.safetensors ckpt-00000006.safetensors"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("folder after a save: %s\nwant: %s", got, want)
	}
}

// deadPID returns the PID of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestLoadLatest_FreshContextForEval loads weights into a context that has never seen the model, then builds the
// model graph on scope and gets the trained weights (not fresh initialisations).
func TestLoadLatest_FreshContextForEval(t *testing.T) {
	dir, _ := finishedDir(t)
	want, err := LatestCheckpoint(dir)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	vars := model.NewStore()
	if _, err := LoadLatest(dir, vars); err != nil {
		t.Fatalf("%+v", err)
	}
	v := vars.GetVariable(model.JoinPath("/hidden/dense", "weights"))
	if v == nil || !v.Trainable {
		t.Fatalf("weights not loaded as a trainable variable: %v", v)
	}
	if m := vars.GetVariable(model.JoinPath(OptimizerScope+"/m/hidden/dense", "weights")); m == nil || m.Trainable {
		t.Errorf("first moment not loaded as a non-trainable variable: %v", m)
	}
	if s := vars.GetVariable(model.JoinPath(OptimizerScope, StepVariable)); s == nil || s.Trainable ||
		s.MustValue().Value().(int64) != int64(want.Step) {
		t.Errorf("step counter not restored: %v", s)
	}
	batch := mlpBatches(2, 1)[0]
	e, err := model.NewExec(wbtest.Backend(t), vars, mlpLoss)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if _, err := e.Exec(batch[0], batch[1]); err != nil {
		t.Fatalf("model on loaded weights: %+v", err)
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func flipByte(t *testing.T, path string, at int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[at] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func sidecar(step int) string   { j, _ := checkpointName(step); return j }
func tensorsOf(step int) string { _, ts := checkpointName(step); return ts }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
