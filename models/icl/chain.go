package icl

import (
	"context"
	"math"

	"github.com/gomlx/compute"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/stats"
)

// Segment is one model of a chain: its configuration and its training schedule.
type Segment struct {
	// Model is the model; Model.Measurements is the segment's M.
	Model linattn.Config
	// Train is its optimiser and schedule (Steps, WarmupSteps, EvalEvery of this model).
	Train fit.Config
}

// EvalSets are the fixed validation, test and held-out test sets of one prior that every chain on it shares.
type EvalSets struct{ Val, Test, HeldOut *Batch }

// Chain is one seed of one row of a sweep over M: one model per Segment, in order, each (with Grow) starting from
// the trained model of the segment before it (Train's from), every model validated on Sets.Val during training and
// scored on Sets.Test and Sets.HeldOut after it. With Dir set the finished chain is stored there and a later Run of
// the same chain loads it instead of training (store.go).
type Chain struct {
	// Prior and Row name the chain in log lines and in its stored chain.json: the prior's name ("tree",
	// "gaussian") and the row's (a kind, or an ablation); Index is the seed's index within the row.
	Prior, Row string
	Index      int
	// Seed seeds the weights and training stream of every segment (Config.Seed).
	Seed uint64
	// Sampler is the prior θ is drawn from; Data how the training contexts are drawn.
	Sampler prior.Prior
	Data    Data
	// Segments are the models, in training order; Grow starts each from the one before.
	Segments []Segment
	Grow     bool
	// PlateauTail is the fraction of each model's steps over which its plateau statistic is measured (Record).
	PlateauTail float64
	Sets        EvalSets
	// Dir is the chain's storage folder; "" stores nothing.
	Dir string
	// Context interrupts training (between models and inside fit.Train); nil never does.
	Context context.Context
	// Logf receives one line per model trained and per chain loaded; nil discards them.
	Logf func(format string, args ...any)
}

// Score is one model's MSE on one evaluation set with its per-context squared errors.
type Score struct {
	MSE        float64   `json:"mse"`
	PerContext []float64 `json:"per_context"`
}

// ChainResult is a chain's outcome, indexed like its Segments.
type ChainResult struct {
	// Test and HeldOut are each model's scores on Sets.Test and Sets.HeldOut.
	Test, HeldOut []Score
	// Val is the final validation MSE of each model (NaN when it has no validation curve).
	Val      []float64
	Training []Training
	// Last is the trained model of the last segment.
	Last *Model
}

func (c *Chain) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// Run returns the chain's models and scores: loaded from Dir when an earlier Run stored the chain there, else
// trained, evaluated and stored there.
func (c *Chain) Run(backend compute.Backend) (ChainResult, error) {
	if out, ok, err := c.load(backend); err != nil || ok {
		return out, err
	}
	out, err := c.train(backend)
	if err != nil {
		return out, err
	}
	return out, c.store(out)
}

// train trains and evaluates every segment of the chain.
func (c *Chain) train(backend compute.Backend) (ChainResult, error) {
	var out ChainResult
	var prev *Model
	for _, sg := range c.Segments {
		if c.Context != nil {
			if err := c.Context.Err(); err != nil {
				return out, err
			}
		}
		m, steps := sg.Model.Measurements, sg.Train.Steps
		from := prev
		if !c.Grow {
			from = nil
		}
		var opts []fit.Option
		if c.Context != nil {
			opts = append(opts, fit.WithContext(c.Context))
		}
		t, err := Train(backend, Config{Model: sg.Model, Train: sg.Train, Data: c.Data, Prior: c.Sampler, Seed: c.Seed},
			from, c.Sets.Val, opts...)
		if err != nil {
			return out, errors.WithMessagef(err, "%s prior, row %s", c.Prior, c.Row)
		}
		rec := t.Record(steps, c.Data.Batch, c.PlateauTail)
		var scores [2]Score
		for i, b := range []*Batch{c.Sets.Test, c.Sets.HeldOut} {
			o, err := t.Evaluate(b, nil, nil)
			if err != nil {
				return out, err
			}
			scores[i] = Score{MSE: stats.Mean(o.SE), PerContext: o.SE}
		}
		val := math.NaN()
		if n := len(rec.ValMSE); n > 0 {
			val = rec.ValMSE[n-1]
		}
		c.logf("%s prior, %s, M=%d, seed %d: validation MSE %.4f (last %.0f%% of training: %+.2f%%), test %.4f (%d "+
			"steps of %d contexts, %.1f s)", c.Prior, c.Row, m, c.Index, val, 100*c.PlateauTail,
			-100*rec.Improvement, scores[0].MSE, steps, c.Data.Batch, t.Seconds)
		out.Test = append(out.Test, scores[0])
		out.HeldOut = append(out.HeldOut, scores[1])
		out.Val = append(out.Val, val)
		out.Training = append(out.Training, rec)
		prev = t
	}
	out.Last = prev
	return out, nil
}
