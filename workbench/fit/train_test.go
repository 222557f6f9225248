package fit

import (
	stdctx "context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

const testSeed = 11

// trainRun is the result of one Train call on the test model.
type trainRun struct {
	hist    *History
	err     error
	vars    *model.Store
	weights map[string][]float64
}

// trainTest trains the test model from a fresh store on 5 training batches (so epochs wrap) and 3 validation ones.
func trainTest(t *testing.T, cfg Config, train Batches, opts ...Option) trainRun {
	t.Helper()
	return trainWith(t, run.NewStore(testSeed), cfg, train, opts...)
}

// trainWith is trainTest with a given store.
func trainWith(t *testing.T, vars *model.Store, cfg Config, train Batches, opts ...Option) trainRun {
	t.Helper()
	if train == nil {
		train = mustSlice(t, mlpBatches(1, 5))
	}
	val := mustSlice(t, mlpBatches(2, 3))
	hist, err := Train(wbtest.Backend(t), vars, mlpLoss, train, val, cfg, append([]Option{Progress(nil)}, opts...)...)
	return trainRun{hist: hist, err: err, vars: vars, weights: snapshot(vars)}
}

// requireSameRun compares two runs' histories (all but timings) and final variables.
func requireSameRun(t *testing.T, want, got trainRun, tol float64) {
	t.Helper()
	if len(got.hist.Steps) != len(want.hist.Steps) || len(got.hist.Evals) != len(want.hist.Evals) {
		t.Fatalf("history lengths: got %d steps %d evals, want %d and %d", len(got.hist.Steps),
			len(got.hist.Evals), len(want.hist.Steps), len(want.hist.Evals))
	}
	for i, w := range want.hist.Steps {
		g := got.hist.Steps[i]
		if g.Step != w.Step || !wbtest.Close(w.Loss, g.Loss, tol) || !wbtest.Close(w.LR, g.LR, tol) ||
			!wbtest.Close(w.GradNorm, g.GradNorm, tol) {
			t.Errorf("step %d: got %+v, want %+v", w.Step, g, w)
		}
	}
	for i, w := range want.hist.Evals {
		g := got.hist.Evals[i]
		if g.Step != w.Step || !wbtest.Close(w.Loss, g.Loss, tol) || !wbtest.Close(w.Perplexity, g.Perplexity, tol) {
			t.Errorf("eval %d: got %+v, want %+v", i, g, w)
		}
	}
	if !reflect.DeepEqual(sortedKeys(want.weights), sortedKeys(got.weights)) {
		t.Fatalf("variables: got %v, want %v", sortedKeys(got.weights), sortedKeys(want.weights))
	}
	for _, k := range sortedKeys(want.weights) {
		wbtest.RequireClose(t, "final "+k, want.weights[k], got.weights[k], tol)
	}
}

// TestTrain_ExactResume: a run that crashes (data error after step 7; last checkpoint at step 4) or is interrupted
// (context cancelled after step 6) and is then resumed from its folder with a fresh context reproduces the
// uninterrupted run: losses, learning rates, gradient norms, validations and final weights, within 1e-12.
func TestTrain_ExactResume(t *testing.T) {
	cfg := testConfig()
	full := trainTest(t, cfg, nil)
	if full.err != nil {
		t.Fatalf("%+v", full.err)
	}
	if len(full.hist.Steps) != cfg.Steps || len(full.hist.Evals) != 4 {
		t.Fatalf("uninterrupted run: %d steps, %d evals; want %d and 4", len(full.hist.Steps), len(full.hist.Evals),
			cfg.Steps)
	}
	if l := full.hist.Losses(); !(l[len(l)-1] < l[0]) {
		t.Errorf("loss did not decrease: %v", l)
	}

	t.Run("crash", func(t *testing.T) {
		dir := t.TempDir()
		crashing := &crashingBatches{Batches: mustSlice(t, mlpBatches(1, 5)), after: 7}
		first := trainTest(t, cfg, crashing, CheckpointDir(dir))
		if first.err == nil || !strings.Contains(first.err.Error(), "step 8") {
			t.Fatalf("crashing run: err = %v, want a data error at step 8", first.err)
		}
		if ck, err := LatestCheckpoint(dir); err != nil || ck.Step != 4 {
			t.Fatalf("after the crash: latest checkpoint %+v, %v; want step 4", ck, err)
		}
		resumed := trainTest(t, cfg, nil, CheckpointDir(dir))
		if resumed.err != nil {
			t.Fatalf("%+v", resumed.err)
		}
		requireSameRun(t, full, resumed, 1e-12)
	})

	t.Run("cancel", func(t *testing.T) {
		dir := t.TempDir()
		goCtx, cancel := stdctx.WithCancel(stdctx.Background())
		defer cancel()
		first := trainTest(t, cfg, nil, CheckpointDir(dir), WithContext(goCtx), OnStep(func(step int, _ Metrics) {
			if step == 6 {
				cancel()
			}
		}))
		if !errors.Is(first.err, stdctx.Canceled) || !strings.Contains(first.err.Error(), "after step 6") {
			t.Fatalf("cancelled run: err = %v, want context.Canceled after step 6", first.err)
		}
		if len(first.hist.Steps) != 6 {
			t.Errorf("cancelled run returned %d steps, want 6", len(first.hist.Steps))
		}
		if ck, err := LatestCheckpoint(dir); err != nil || ck.Step != 6 {
			t.Fatalf("after cancelling: latest checkpoint %+v, %v; want step 6", ck, err)
		}
		resumed := trainTest(t, cfg, nil, CheckpointDir(dir))
		if resumed.err != nil {
			t.Fatalf("%+v", resumed.err)
		}
		requireSameRun(t, full, resumed, 1e-12)

		// Kept: the newest keep_checkpoints = 2 (steps 8 and 12), nothing else.
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		want := []string{"ckpt-00000008.json", "ckpt-00000008.safetensors", "ckpt-00000012.json",
			"ckpt-00000012.safetensors"}
		if !reflect.DeepEqual(names, want) {
			t.Errorf("checkpoint folder holds %v, want %v", names, want)
		}

		// A finished run resumes to its end at once, with the same history.
		again := trainTest(t, cfg, nil, CheckpointDir(dir))
		if again.err != nil {
			t.Fatalf("%+v", again.err)
		}
		requireSameRun(t, full, again, 0)
	})
}

// TestTrain_Evaluation checks the validation points against a direct computation on the final weights, both in the
// training context and after LoadLatest into a fresh one.
func TestTrain_Evaluation(t *testing.T) {
	cfg := testConfig()
	dir := t.TempDir()
	var evalSteps []int
	r := trainTest(t, cfg, nil, CheckpointDir(dir), OnEval(func(step int, e EvalMetrics) {
		evalSteps = append(evalSteps, step)
	}))
	if r.err != nil {
		t.Fatalf("%+v", r.err)
	}
	if want := []int{3, 6, 9, 12}; !reflect.DeepEqual(evalSteps, want) {
		t.Errorf("OnEval at steps %v, want %v", evalSteps, want)
	}
	last := r.hist.Evals[len(r.hist.Evals)-1]
	if !wbtest.Close(math.Exp(last.Loss), last.Perplexity, 1e-12) {
		t.Errorf("perplexity %g, want exp(%g)", last.Perplexity, last.Loss)
	}
	valLoss := func(vars *model.Store) float64 {
		e, err := model.NewExec(wbtest.Backend(t), vars, mlpLoss)
		if err != nil {
			t.Fatalf("%+v", err)
		}
		sum := 0.0
		for _, b := range mlpBatches(2, 3)[:cfg.EvalBatches] {
			out, err := e.Exec(b[0], b[1])
			if err != nil {
				t.Fatalf("%+v", err)
			}
			sum += tensors.ToScalar[float64](out[0])
		}
		return sum / float64(cfg.EvalBatches)
	}
	if got := valLoss(r.vars); !wbtest.Close(got, last.Loss, 1e-12) {
		t.Errorf("final validation loss %g, direct computation %g", last.Loss, got)
	}
	fresh := run.NewStore(99)
	ck, err := LoadLatest(dir, fresh)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if ck.Step != cfg.Steps || len(ck.History.Evals) != len(r.hist.Evals) || !reflect.DeepEqual(ck.Config, cfg) {
		t.Errorf("checkpoint sidecar: step %d, %d evals, config %+v", ck.Step, len(ck.History.Evals), ck.Config)
	}
	if got := valLoss(fresh); !wbtest.Close(got, last.Loss, 1e-12) {
		t.Errorf("validation loss after LoadLatest %g, want %g", got, last.Loss)
	}
}

// nanBatches are the training batches with a NaN in the x of batch nanAt (1-based), so step nanAt has a NaN loss.
func nanBatches(t *testing.T, nanAt int) *SliceBatches {
	batches := mlpBatches(1, 5)
	x := wbtest.Flat64(batches[nanAt-1][0])
	x[0] = math.NaN()
	batches[nanAt-1][0] = wbtest.Tensor64(x, testB, testF)
	return mustSlice(t, batches)
}

func TestTrain_NaNStopsAtStep(t *testing.T) {
	cfg := testConfig()
	cfg.CheckpointEvery = 1
	dir := t.TempDir()
	var atStep2 map[string][]float64
	vars := run.NewStore(testSeed)
	r := trainWith(t, vars, cfg, nanBatches(t, 3), CheckpointDir(dir), OnStep(func(step int, _ Metrics) {
		if step == 2 {
			atStep2 = snapshot(vars)
		}
	}))
	if r.err == nil || !IsDiverged(r.err) || !strings.Contains(r.err.Error(), "step 3") ||
		!strings.Contains(r.err.Error(), "not finite") {
		t.Fatalf("err = %v, want a not-finite error naming step 3", r.err)
	}
	if len(r.hist.Steps) != 2 {
		t.Errorf("history has %d steps, want 2", len(r.hist.Steps))
	}
	// The failed update was not applied: every variable is as after step 2, including the step counter.
	if atStep2 == nil {
		t.Fatal("OnStep was not called at step 2")
	}
	for _, k := range sortedKeys(atStep2) {
		wbtest.RequireClose(t, k, atStep2[k], r.weights[k], 0)
	}
	if got := r.vars.GetVariable(model.JoinPath(OptimizerScope, StepVariable)).MustValue().Value().(int64); got != 2 {
		t.Errorf("step counter = %d, want 2", got)
	}
	if ck, err := LatestCheckpoint(dir); err != nil || ck.Step != 2 {
		t.Errorf("latest checkpoint %+v, %v; want step 2", ck, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt-00000003.safetensors")); err == nil {
		t.Errorf("a checkpoint file was written for the failed step")
	}
}

// TestTrain_CompilesOnce: the training and validation graphs are each built once for the whole run.
func TestTrain_CompilesOnce(t *testing.T) {
	builds := map[bool]int{}
	counting := func(scope *model.Scope, inputs []*Node) *Node {
		builds[scope.IsTraining(inputs[0].Graph())]++
		return mlpLoss(scope, inputs)
	}
	cfg := testConfig()
	hist, err := Train(wbtest.Backend(t), run.NewStore(1), counting, mustSlice(t, mlpBatches(1, 5)),
		mustSlice(t, mlpBatches(2, 3)), cfg, Progress(nil))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if len(hist.Steps) != cfg.Steps || len(hist.Evals) != 4 || builds[true] != 1 || builds[false] != 1 {
		t.Errorf("%d steps, %d evals: training graph built %d times, validation graph %d times; want 1 and 1",
			len(hist.Steps), len(hist.Evals), builds[true], builds[false])
	}
}
