package icl

import (
	"math"
	"slices"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/host"
	"github.com/protolab/protolab/workbench/run"
)

// evalChunk is the number of contexts per evaluation call (bounds the activations' memory; two shapes at most).
const evalChunk = 500

// squaredError returns ‖θ̂ − θ‖² per context: [B, D], [B, D] → [B].
func squaredError(theta, target *graph.Node) *graph.Node {
	return graph.ReduceSum(graph.Square(graph.Sub(theta, target)), 1)
}

// Model is one trained model with its evaluation executable (compiled once, reused for every batch).
type Model struct {
	// Config is the model's linattn configuration (Config.Measurements is its M).
	Config linattn.Config
	// History is fit's record of its training; nil for a model loaded from a stored chain (Load), whose Training
	// record is stored instead.
	History *fit.History
	// Seconds is the training wall time.
	Seconds float64
	vars    *model.Store
	eval    *model.Exec // x, y, θ, donor keys, mask → ‖θ̂ − θ‖² [B], workspace [B, M], keys [B, N, M]
}

// Training is the record of one model's training: its validation curve and the plateau statistic (Record).
type Training struct {
	Steps int `json:"steps"` // optimiser steps of this model (its segment of a chain)
	Batch int `json:"batch"` // contexts per step
	// ValSteps and ValMSE are the validation curve: MSE on the validation set after ValSteps[i] steps.
	ValSteps []int     `json:"val_steps"`
	ValMSE   []float64 `json:"val_mse"`
	// From is the validation point nearest to (1 − plateau_tail)·Steps; Improvement is the relative improvement of
	// the validation MSE from there to the end, (MSE(From) − MSE(Steps)) / MSE(Steps).
	From        int     `json:"from"`
	Improvement float64 `json:"improvement"`
	Seconds     float64 `json:"seconds"` // training wall time
}

// Record returns the training record of m, trained for steps steps of batch contexts, with the plateau statistic
// over the last fraction tail of its steps (Training.From, Training.Improvement; NaN with fewer than two validation
// points).
func (m *Model) Record(steps, batch int, tail float64) Training {
	r := Training{Steps: steps, Batch: batch, Seconds: m.Seconds, Improvement: math.NaN()}
	for _, e := range m.History.Evals {
		r.ValSteps = append(r.ValSteps, e.Step)
		r.ValMSE = append(r.ValMSE, e.Loss)
	}
	n := len(r.ValMSE)
	if n < 2 {
		return r
	}
	target := (1 - tail) * float64(steps)
	from := 0
	for i := range n - 1 {
		if math.Abs(float64(r.ValSteps[i])-target) < math.Abs(float64(r.ValSteps[from])-target) {
			from = i
		}
	}
	r.From = r.ValSteps[from]
	r.Improvement = (r.ValMSE[from] - r.ValMSE[n-1]) / r.ValMSE[n-1]
	return r
}

// Train fits model c.Model on a Stream of fresh contexts from c.Prior with the loss of spec §5 (‖θ̂ − θ‖² per
// context, averaged over the batch), validating on val (nil: no validation) every c.Train.EvalEvery steps and at the
// end. With from non-nil (a smaller model of the same kind) the variables it has are copied first (see grow). The
// step graph is compiled once by fit.Train.
func Train(backend compute.Backend, c Config, from *Model, val *Batch, opts ...fit.Option) (*Model, error) {
	m, tc, p, d, seed := c.Model, c.Train, c.Prior, c.Data, c.Seed
	vars := run.NewStore(seed)
	tc.Seed = seed
	forward := func(scope *model.Scope, x, y *graph.Node) linattn.Output { return linattn.Model(scope, m, x, y, nil) }
	if from != nil {
		if err := grow(backend, vars, forward, from, p.Dim(), d.Tokens); err != nil {
			return nil, err
		}
	}
	loss := func(scope *model.Scope, in []*graph.Node) *graph.Node {
		return graph.ReduceAllMean(squaredError(forward(scope, in[0], in[1]).Theta, in[2]))
	}
	stream := &Stream{Prior: p, B: d.Batch, N: d.Tokens, S: d.LabelNoise, Seed: seed, Shared: d.SharedTokens}
	var vb fit.Batches
	if val != nil {
		var err error
		if vb, tc.EvalBatches, err = validationBatches(val); err != nil {
			return nil, err
		}
	}
	hist, err := fit.Train(backend, vars, loss, stream, vb, tc, append([]fit.Option{fit.Progress(nil)}, opts...)...)
	if err != nil {
		return nil, errors.WithMessagef(err, "training model %s with M=%d (seed %d)", m.Kind, m.Measurements, seed)
	}
	t := &Model{Config: m, vars: vars, History: hist}
	if n := len(hist.Steps); n > 0 {
		t.Seconds = hist.Steps[n-1].Elapsed
	}
	if t.eval, err = newEval(backend, vars, m); err != nil {
		return nil, err
	}
	return t, nil
}

// newEval returns the evaluation executable of model m on the variables of vars (see Model.eval).
func newEval(backend compute.Backend, vars *model.Store, m linattn.Config) (*model.Exec, error) {
	e, err := model.NewExec(backend, vars, func(scope *model.Scope, in []*graph.Node) []*graph.Node {
		out := linattn.Model(scope, m, in[0], in[1], &linattn.Patch{Keys: in[3], Mask: in[4]})
		return []*graph.Node{squaredError(out.Theta, in[2]), out.Workspace, out.Keys}
	})
	return e, errors.Wrap(err, "building the evaluation executable")
}

// validationBatches splits a fixed validation set into equal chunks of at most ValidationChunk contexts (fit averages
// the chunks' mean losses, which is then the mean over the set) and returns them with their number.
func validationBatches(b *Batch) (fit.Batches, int, error) {
	n := (b.B + ValidationChunk - 1) / ValidationChunk
	if b.B%n != 0 {
		return nil, 0, errors.Errorf("icl: %d validation contexts do not split into %d equal chunks", b.B, n)
	}
	size := b.B / n
	var chunks [][]*tensors.Tensor
	for lo := 0; lo < b.B; lo += size {
		chunks = append(chunks, b.Slice(lo, lo+size).Tensors())
	}
	sb, err := fit.NewSliceBatches(chunks)
	return sb, n, err
}

// grow creates the variables of forward in vars (by running it once on one context) and overwrites them with the
// trained values of from: a variable of the same shape is copied; one whose leading axis grew (a readout's rows for
// new channels, a new head of B) gets from's values in its leading rows and keeps its fresh initialisation in the
// others; anything else stays fresh.
func grow(backend compute.Backend, vars *model.Store, forward func(*model.Scope, *graph.Node, *graph.Node) linattn.Output,
	from *Model, D, N int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("growing model %s from M=%d: %v", from.Config.Kind, from.Config.Measurements, r)
		}
	}()
	x := tensors.FromShape(shapesOf(1, N, D))
	y := tensors.FromShape(shapesOf(1, N))
	model.MustCallOnce(backend, vars, func(scope *model.Scope, x, y *graph.Node) *graph.Node { return forward(scope, x, y).Theta },
		x, y)
	for v := range vars.IterVariables() {
		if !v.Trainable {
			continue
		}
		old := from.vars.GetVariable(v.Path())
		if old == nil {
			continue
		}
		nd, od := v.Shape().Dimensions, old.Shape().Dimensions
		switch {
		case slices.Equal(nd, od):
			v.MustSetValue(tensors.FromFlatDataAndDimensions(tensors.MustCopyFlatData[float32](old.MustValue()), nd...))
		case len(nd) == len(od) && len(nd) > 0 && nd[0] > od[0] && slices.Equal(nd[1:], od[1:]):
			flat := tensors.MustCopyFlatData[float32](v.MustValue())
			copy(flat, tensors.MustCopyFlatData[float32](old.MustValue())) // leading rows: row-major layout
			v.MustSetValue(tensors.FromFlatDataAndDimensions(flat, nd...))
		}
	}
	return nil
}

// Output is what one evaluation pass returns, per context.
type Output struct {
	SE        []float64 // ‖θ̂ − θ‖² [B]
	Workspace []float64 // p_M [B, M]
	Keys      []float32 // the channel keys k_i^ℓ [B, N, M] (the donor keys of a patch)
}

// Evaluate runs the model on a batch in chunks of evalChunk contexts. donor keys [B, N, M] and a mask [M] patch
// the keys as in linattn eq. (7) (nil: no patch).
func (m *Model) Evaluate(b *Batch, donor, mask []float32) (Output, error) {
	M := m.Config.Measurements
	if mask == nil {
		mask = make([]float32, M)
	}
	var out Output
	for lo := 0; lo < b.B; lo += evalChunk {
		hi := min(lo+evalChunk, b.B)
		c := b.Slice(lo, hi)
		var dk []float32
		if donor != nil {
			dk = donor[lo*b.N*M : hi*b.N*M]
		} else {
			dk = make([]float32, (hi-lo)*b.N*M)
		}
		o, err := m.evaluateChunk(c, dk, mask)
		if err != nil {
			return out, err
		}
		out.SE = append(out.SE, o.SE...)
		out.Workspace = append(out.Workspace, o.Workspace...)
		out.Keys = append(out.Keys, o.Keys...)
	}
	return out, nil
}

func (m *Model) evaluateChunk(b *Batch, donor, mask []float32) (out Output, err error) {
	M := m.Config.Measurements
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("evaluating model %s (M=%d): %v", m.Config.Kind, M, r)
		}
	}()
	in := b.Tensors()
	outs, err := m.eval.Exec(in[0], in[1], in[2], tensors.FromFlatDataAndDimensions(donor, b.B, b.N, M),
		tensors.FromFlatDataAndDimensions(mask, M))
	if err != nil {
		return out, errors.Wrapf(err, "evaluating model %s (M=%d)", m.Config.Kind, M)
	}
	out.SE = host.MustFloats(outs[0])
	out.Workspace = host.MustFloats(outs[1])
	out.Keys = tensors.MustCopyFlatData[float32](outs[2])
	for _, o := range outs {
		o.FinalizeAll()
	}
	return out, nil
}
