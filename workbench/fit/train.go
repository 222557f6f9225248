package fit

import (
	stdctx "context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// LossFn builds the model and returns its scalar mean loss for one batch; inputs are the batch's tensors, in the
// order Batches.Next returns them. It creates its variables through scope (any scope except OptimizerScope) and may
// check scope.IsTraining(g), which is true in the training step and false in validation.
type LossFn func(scope *model.Scope, inputs []*Node) *Node

// Train runs cfg.Steps AdamW updates (doc.go) of the variables that loss creates in vars, on batches from train, and
// returns the History. val may be nil (no validation). The step graph is compiled once and reused.
//
// With CheckpointDir, a checkpoint holding the newest state is written every checkpoint_every steps and at the end,
// and a run whose folder already holds a checkpoint resumes from it: variables, step, data position and history are
// restored, so the resumed run continues exactly as the uninterrupted one would. vars should then be fresh (like the
// first run's); the checkpoint's config must equal cfg, except checkpoint_every, keep_checkpoints and log_every, and
// with RunConfig its recorded run must equal the one given. A newest checkpoint that fails verification is set aside
// (renamed *.corrupt) with a warning line on the progress writer, and the run resumes from the newest good one. The
// folder is locked (store.Lock) while Train runs: a second Train on it, in this process or another, fails at once
// naming the holder. A run already complete returns its history at once.
//
// On an error Train returns the History so far (nil if it failed while setting up). A step whose loss or
// gradient norm is NaN or Inf stops training with an error naming the step; the step's update is not applied (vars
// keeps the previous weights) and no checkpoint is written for it.
func Train(backend compute.Backend, vars *model.Store, loss LossFn, train, val Batches, cfg Config,
	opts ...Option) (*History, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if backend == nil || vars == nil || loss == nil || train == nil {
		return nil, errors.New("fit.Train: backend, vars, loss and train must not be nil")
	}
	o := options{goCtx: stdctx.Background(), progress: os.Stderr}
	for _, opt := range opts {
		opt(&o)
	}
	if len(o.noDecay) > 0 {
		cfg.NoDecay = append(slices.Clone(cfg.NoDecay), o.noDecay...)
	}
	tr := &trainer{backend: backend, vars: vars, loss: loss, train: train, val: val, cfg: cfg, o: o,
		hist: &History{}}
	defer func() { _ = tr.lock.Release() }()
	if err := tr.start(); err != nil {
		return nil, err
	}
	err := tr.loop()
	return tr.hist, err
}

// trainer is the state of one Train call.
type trainer struct {
	backend    compute.Backend
	vars       *model.Store // the model's and the optimizer's variables
	loss       LossFn
	train, val Batches
	cfg        Config
	o          options

	lock      *store.DirLock  // of the checkpoint folder, held while training
	runJSON   json.RawMessage // options.run, encoded
	hist      *History
	step      int     // updates completed
	elapsed0  float64 // wall time of earlier sessions
	valStart  []byte  // val.State() every evaluation starts from
	lastCkpt  int     // step of the newest checkpoint on disk (-1: none)
	stepExec  *model.Exec
	evalExec  *model.Exec
	prog      *progress
	lastVal   float64
	stepTimeE float64 // smoothed seconds per step, for the ETA

	shard *sharding // the layout over several devices (Config.Devices > 1); nil for one
}

// start restores a checkpoint when there is one, and builds the executables.
func (tr *trainer) start() error {
	tr.lastCkpt = -1
	tr.lastVal = math.NaN()
	if err := tr.setupDevices(); err != nil {
		return err
	}
	if tr.o.run != nil {
		b, err := json.Marshal(tr.o.run)
		if err != nil {
			return errors.Wrap(err, "fit.Train: encoding RunConfig")
		}
		tr.runJSON = b
	}
	if tr.o.dir != "" {
		if err := os.MkdirAll(tr.o.dir, 0o755); err != nil {
			return errors.Wrap(err, "fit.Train: checkpoint folder")
		}
		// Two processes writing checkpoints into one folder would prune each other's files.
		lock, err := store.Lock(tr.o.dir)
		if err != nil {
			return errors.WithMessage(err, "fit.Train: checkpoint folder")
		}
		tr.lock = lock
		ck, err := LatestCheckpoint(tr.o.dir)
		switch {
		case errors.Is(err, ErrNoCheckpoint):
		case err != nil:
			return errors.WithMessage(err, "fit.Train: resuming")
		default:
			if err := tr.resume(ck); err != nil {
				return err
			}
		}
	}
	if tr.val != nil && tr.valStart == nil {
		st, err := tr.val.State()
		if err != nil {
			return errors.Wrap(err, "fit.Train: validation data state")
		}
		tr.valStart = st
	}
	if err := tr.peekBatches(); err != nil {
		return err
	}
	var err error
	tr.stepExec, err = newExec(tr, tr.vars, tr.stepGraph)
	if err != nil {
		return errors.Wrap(err, "fit.Train: building the step executable")
	}
	tr.prog = newProgress(tr.o.progress)
	return nil
}

// resume restores the state of checkpoint ck (already verified by LatestCheckpoint).
func (tr *trainer) resume(ck *Checkpoint) error {
	if diff := diffKeys(ck.Config, tr.cfg); len(diff) > 0 {
		return errors.Errorf("fit.Train: the checkpoint in %s was written with a different config (%v); resume "+
			"with the same config or use a new folder", tr.o.dir, diff)
	}
	if tr.runJSON != nil && ck.Run != nil {
		diff, err := run.DiffKeys(ck.Run, tr.runJSON)
		if err != nil {
			return errors.WithMessage(err, "fit.Train: comparing the checkpoint's run with this one")
		}
		if len(diff) > 0 {
			return errors.Errorf("fit.Train: the checkpoint in %s belongs to another run (%s); resume with the same "+
				"configuration or use a new folder", tr.o.dir, strings.Join(diff, "; "))
		}
	}
	// Newer checkpoints that failed verification are set aside, so that pruning never keeps them in place of good
	// ones and the next resume does not stumble on them again.
	for i, step := range ck.skippedSteps {
		moved, err := setAside(tr.o.dir, step)
		if err != nil {
			return errors.WithMessage(err, "fit.Train: resuming")
		}
		tr.warnf("fit: warning: skipped checkpoint %d: %v; resuming from step %d (the damaged files are now %s)",
			step, ck.Skipped[len(ck.Skipped)-1-i], ck.Step, strings.Join(moved, ", "))
	}
	if _, err := store.ImportContext(tr.vars, filepath.Join(tr.o.dir, ck.Tensors)); err != nil {
		return errors.WithMessage(err, "fit.Train: resuming")
	}
	if err := tr.train.Restore(ck.TrainState); err != nil {
		return errors.Wrapf(err, "fit.Train: restoring the training data position of checkpoint %d", ck.Step)
	}
	if tr.val != nil && ck.ValState != nil {
		tr.valStart = ck.ValState
	}
	tr.step, tr.lastCkpt, tr.elapsed0 = ck.Step, ck.Step, ck.Elapsed
	tr.hist = &ck.History
	if n := len(ck.History.Evals); n > 0 {
		tr.lastVal = ck.History.Evals[n-1].Loss
	}
	return nil
}

// warnf writes one warning line to the progress writer, when there is one.
func (tr *trainer) warnf(format string, args ...any) {
	if tr.o.progress != nil {
		fmt.Fprintf(tr.o.progress, format+"\n", args...)
	}
}

// stepGraph is the training step: loss, gradients, AdamW. Outputs: loss, gradient norm, learning rate.
func (tr *trainer) stepGraph(scope *model.Scope, inputs []*Node) []*Node {
	g := inputs[0].Graph()
	scope.Store().SetTraining(g, true)
	loss := tr.checkedLoss(scope, inputs)
	out := applyAdamW(scope, loss, tr.cfg)
	return []*Node{out.loss, out.gradNorm, out.lr}
}

// evalGraph is the validation loss.
func (tr *trainer) evalGraph(scope *model.Scope, inputs []*Node) *Node {
	scope.Store().SetTraining(inputs[0].Graph(), false)
	return tr.checkedLoss(scope, inputs)
}

func (tr *trainer) checkedLoss(scope *model.Scope, inputs []*Node) *Node {
	loss := tr.loss(scope, inputs)
	if loss == nil || !loss.Shape().IsScalar() || !loss.DType().IsFloat() {
		shape := "nil"
		if loss != nil {
			shape = loss.Shape().String()
		}
		panic(errors.Errorf("fit: LossFn returned %s, want a float scalar", shape))
	}
	return loss
}

// loop runs the remaining steps.
func (tr *trainer) loop() error {
	cfg := tr.cfg
	session := time.Now()
	tokens := tr.o.tokensPerBatch
	for tr.step < cfg.Steps {
		if err := tr.o.goCtx.Err(); err != nil {
			return tr.interrupted(err, session)
		}
		stepStart := time.Now()
		next := tr.step + 1
		batch, err := tr.train.Next()
		if err != nil {
			return errors.Wrapf(err, "fit.Train: step %d: reading the training batch", next)
		}
		outs, err := tr.exec(tr.stepExec, batch, "training batch")
		if err != nil {
			return errors.WithMessagef(err, "fit.Train: step %d", next)
		}
		lossV, normV, lrV := scalar(outs[0]), scalar(outs[1]), scalar(outs[2])
		if math.IsNaN(lossV) || math.IsInf(lossV, 0) || math.IsNaN(normV) || math.IsInf(normV, 0) {
			tr.prog.finish(tr.status(lossV))
			return &DivergedError{Step: next, Loss: lossV, GradNorm: normV}
		}
		tr.step = next
		dt := time.Since(stepStart).Seconds()
		if tokens <= 0 {
			tokens = batch[0].Size()
		}
		tr.trackStepTime(dt)
		m := Metrics{Step: next, Loss: lossV, LR: lrV, GradNorm: normV, TokensPerSec: float64(tokens) / dt,
			Elapsed: tr.elapsed0 + time.Since(session).Seconds()}
		if next%cfg.LogEvery == 0 || next == cfg.Steps {
			tr.hist.Steps = append(tr.hist.Steps, m)
			for _, fn := range tr.o.onStep {
				fn(next, m)
			}
		}
		if tr.val != nil && ((cfg.EvalEvery > 0 && next%cfg.EvalEvery == 0) || next == cfg.Steps) {
			if err := tr.evaluate(); err != nil {
				return err
			}
		}
		if tr.o.dir != "" && ((cfg.CheckpointEvery > 0 && next%cfg.CheckpointEvery == 0) || next == cfg.Steps) {
			if err := tr.checkpoint(session); err != nil {
				return err
			}
		}
		if next == cfg.Steps {
			tr.prog.finish(tr.status(lossV))
		} else {
			tr.prog.update(tr.status(lossV))
		}
	}
	return nil
}

// interrupted writes a checkpoint of the last completed step (with CheckpointDir) and returns the cancellation.
func (tr *trainer) interrupted(cause error, session time.Time) error {
	if n := len(tr.hist.Steps); n > 0 {
		tr.prog.finish(tr.status(tr.hist.Steps[n-1].Loss))
	}
	if tr.o.dir != "" && tr.step > 0 && tr.step != tr.lastCkpt {
		if err := tr.checkpoint(session); err != nil {
			return errors.WithMessagef(err, "fit.Train: interrupted after step %d (%v), and the checkpoint failed",
				tr.step, cause)
		}
	}
	return errors.Wrapf(cause, "fit.Train: interrupted after step %d", tr.step)
}

// evaluate runs the validation and records it.
func (tr *trainer) evaluate() error {
	if tr.evalExec == nil {
		var err error
		tr.evalExec, err = newExec(tr, tr.vars, tr.evalGraph)
		if err != nil {
			return errors.Wrap(err, "fit.Train: building the validation executable")
		}
	}
	if err := tr.val.Restore(tr.valStart); err != nil {
		return errors.Wrapf(err, "fit.Train: step %d: rewinding the validation data", tr.step)
	}
	sum := 0.0
	for i := 0; i < tr.cfg.EvalBatches; i++ {
		batch, err := tr.val.Next()
		if err != nil {
			return errors.Wrapf(err, "fit.Train: step %d: reading validation batch %d", tr.step, i)
		}
		outs, err := tr.exec(tr.evalExec, batch, "validation batch")
		if err != nil {
			return errors.WithMessagef(err, "fit.Train: step %d: validation", tr.step)
		}
		sum += scalar(outs[0])
	}
	mean := sum / float64(tr.cfg.EvalBatches)
	e := EvalMetrics{Step: tr.step, Loss: mean, Perplexity: math.Exp(mean)}
	tr.hist.Evals = append(tr.hist.Evals, e)
	tr.lastVal = mean
	for _, fn := range tr.o.onEval {
		fn(tr.step, e)
	}
	return nil
}

// checkpoint writes the current state.
func (tr *trainer) checkpoint(session time.Time) error {
	if tr.step == tr.lastCkpt {
		return nil
	}
	st, err := tr.train.State()
	if err != nil {
		return errors.Wrapf(err, "fit.Train: step %d: training data state", tr.step)
	}
	ck := &Checkpoint{Step: tr.step, TrainState: st, ValState: tr.valStart, Config: tr.cfg, History: *tr.hist,
		Elapsed: tr.elapsed0 + time.Since(session).Seconds(), Run: tr.runJSON}
	if err := saveCheckpoint(tr.o.dir, tr.vars, ck, tr.cfg.KeepCheckpoints); err != nil {
		return err
	}
	tr.lastCkpt = tr.step
	return nil
}

// trackStepTime updates the smoothed step time; the first step (compilation) is left out.
func (tr *trainer) trackStepTime(dt float64) {
	switch {
	case tr.stepTimeE == 0 && tr.step <= 1:
	case tr.stepTimeE == 0:
		tr.stepTimeE = dt
	default:
		tr.stepTimeE = 0.9*tr.stepTimeE + 0.1*dt
	}
}

func (tr *trainer) status(loss float64) status {
	s := status{step: tr.step, total: tr.cfg.Steps, loss: loss, val: tr.lastVal, eta: -1}
	if n := len(tr.hist.Steps); n > 0 {
		s.tokensPerSec = tr.hist.Steps[n-1].TokensPerSec
	}
	if tr.stepTimeE > 0 {
		s.eta = time.Duration(float64(tr.cfg.Steps-tr.step) * tr.stepTimeE * float64(time.Second))
	}
	return s
}
