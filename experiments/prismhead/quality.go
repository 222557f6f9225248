package prismhead

import (
	"fmt"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/eval"
)

// Quality compares a PRISM model with the dense-head model of the same backbone, data and token budget, and
// reports the head's coverage and usage on the validation tokens (docs/spec/prism.md §4, §12 "Logging").
type Quality struct {
	Prism eval.PerplexityResult `json:"prism"` // validation perplexity of the PRISM model
	Dense eval.PerplexityResult `json:"dense"` // the dense model's, on the same batches
	// RelPerplexity is Prism.Perplexity/Dense.Perplexity − 1 (the brief's target: ≤ 0.025 at Small).
	RelPerplexity float64 `json:"rel_perplexity"`
	// RelLoss is Prism.Loss/Dense.Loss − 1 (the blog's acceptance: validation loss within about 5%).
	RelLoss float64 `json:"rel_loss"`
	// Coverage holds R̄1, R2, their thresholded fractions and E[‖r‖²/‖z‖²] on the validation tokens.
	Coverage prism.CoverageMetrics `json:"coverage"`
	// Usage holds the dead fraction, usage entropy, mean active prototypes and the off-diagonal mass of C.
	Usage prism.UsageSummary `json:"usage"`
	// Counts is, per prototype, the number of validation tokens that used it (a > 0), in bank order.
	Counts []int64 `json:"counts"`
	// ThroughputRatio is the PRISM model's mean training tokens/s over the dense model's (spec §4: relative to
	// dense).
	ThroughputRatio float64 `json:"throughput_ratio"`
	// PrismParams and DenseParams are the trainable parameter counts; they differ by K·D, the bank.
	PrismParams int `json:"prism_params"`
	DenseParams int `json:"dense_params"`
	// PrismTrainSeconds and DenseTrainSeconds are the training wall times.
	PrismTrainSeconds float64 `json:"prism_train_seconds"`
	DenseTrainSeconds float64 `json:"dense_train_seconds"`
}

// String is a short report.
func (q Quality) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "validation perplexity: PRISM %.3f, dense %.3f (%+.2f%%); loss %+.2f%%\n", q.Prism.Perplexity,
		q.Dense.Perplexity, 100*q.RelPerplexity, 100*q.RelLoss)
	c := q.Coverage
	fmt.Fprintf(&b, "coverage on %d tokens: R̄1 %.3f, R2 %.3f; > %.2f: %.3f of prototypes, %.3f of tokens; "+
		"E‖r‖²/‖z‖² %.3f\n", c.Tokens, c.R1Bar, c.R2, c.Threshold, c.R1Frac, c.R2Frac, c.RecRatio)
	u := q.Usage
	fmt.Fprintf(&b, "usage: dead %.3f, entropy %.3f nats, %.2f active per token, co-usage off-diagonal mass %.3f\n",
		u.DeadFraction, u.Entropy, u.MeanActive, u.OffDiagonalMass)
	fmt.Fprintf(&b, "training: %d vs %d parameters, throughput %.2f× dense (%.1f s vs %.1f s)", q.PrismParams,
		q.DenseParams, q.ThroughputRatio, q.PrismTrainSeconds, q.DenseTrainSeconds)
	return b.String()
}

// ComputeQuality evaluates pm (PRISM) against dm (its dense baseline): the perplexities are the runs' final
// validation numbers (both on eval_batches validation batches), coverage and usage are computed on the same batches
// (lm.Model.Coverage).
func ComputeQuality(pm, dm *lm.Model) (Quality, error) {
	if pm.Dense() || !dm.Dense() {
		return Quality{}, errors.New("prismhead.ComputeQuality: want a PRISM model and a dense model, in that order")
	}
	if pm.Result == nil || dm.Result == nil {
		return Quality{}, errors.New("prismhead.ComputeQuality: want finished runs (with their training record)")
	}
	pr, dr := pm.Result, dm.Result
	q := Quality{Prism: pr.Val, Dense: dr.Val, PrismParams: pr.NumParams, DenseParams: dr.NumParams,
		PrismTrainSeconds: pr.TrainSeconds(), DenseTrainSeconds: dr.TrainSeconds()}
	q.RelPerplexity = q.Prism.Perplexity/q.Dense.Perplexity - 1
	q.RelLoss = q.Prism.Loss/q.Dense.Loss - 1
	if dr.TrainTokensPerSec > 0 {
		q.ThroughputRatio = pr.TrainTokensPerSec / dr.TrainTokensPerSec
	}
	d, err := pm.Data()
	if err != nil {
		return q, err
	}
	vals, err := d.ValTensors(pm.Config.EvalBatches)
	if err != nil {
		return q, err
	}
	cov, usage, err := pm.Coverage(vals)
	if err != nil {
		return q, err
	}
	if q.Coverage, err = cov.Metrics(); err != nil {
		return q, err
	}
	q.Usage = usage.Summary()
	q.Counts = usage.Counts()
	return q, nil
}
