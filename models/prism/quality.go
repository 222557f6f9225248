package prism

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"

	prismlayer "github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/eval"
)

// Quality compares a PRISM model with the dense-head model of the same backbone, data and token budget on the
// evaluation batches, and reports the head's coverage and usage on them (docs/spec/prism.md §4, §12 "Logging").
type Quality struct {
	Prism eval.PerplexityResult `json:"prism"` // perplexity of the PRISM model on the evaluation batches
	Dense eval.PerplexityResult `json:"dense"` // the dense model's, on the same batches
	// RelPerplexity is Prism.Perplexity/Dense.Perplexity − 1.
	RelPerplexity float64 `json:"rel_perplexity"`
	// RelLoss is Prism.Loss/Dense.Loss − 1 (spec §3's acceptance: the loss within about 5% of the dense model).
	RelLoss float64 `json:"rel_loss"`
	// Coverage holds R̄1, R2, their thresholded fractions and E[‖r‖²/‖z‖²] on the evaluation tokens.
	Coverage prismlayer.CoverageMetrics `json:"coverage"`
	// Usage holds the dead fraction, usage entropy, mean active prototypes and the off-diagonal mass of C.
	Usage prismlayer.UsageSummary `json:"usage"`
	// Counts is, per prototype, the number of evaluation tokens that used it (a > 0), in bank order.
	Counts []int64 `json:"counts"`
	// ThroughputRatio is the PRISM model's mean training tokens/s over the dense model's (spec §4: relative to
	// dense).
	ThroughputRatio float64 `json:"throughput_ratio"`
	// PrismParams and DenseParams are the trainable parameter counts; they differ by K·D, the bank.
	PrismParams int `json:"prism_params"`
	DenseParams int `json:"dense_params"`
	// PrismLR and DenseLR are the learning rates the two models trained at.
	PrismLR float64 `json:"prism_lr"`
	DenseLR float64 `json:"dense_lr"`
	// PrismTrainSeconds and DenseTrainSeconds are the training wall times.
	PrismTrainSeconds float64 `json:"prism_train_seconds"`
	DenseTrainSeconds float64 `json:"dense_train_seconds"`
}

// String is a short report.
func (q Quality) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "perplexity on %d evaluation tokens: PRISM %.3f, dense %.3f (%+.2f%%); loss %+.2f%%\n",
		q.Prism.Tokens, q.Prism.Perplexity, q.Dense.Perplexity, 100*q.RelPerplexity, 100*q.RelLoss)
	c := q.Coverage
	fmt.Fprintf(&b, "coverage: R̄1 %.3f, R2 %.3f; > %.2f: %.3f of prototypes, %.3f of tokens; E‖r‖²/‖z‖² %.3f\n",
		c.R1Bar, c.R2, c.Threshold, c.R1Frac, c.R2Frac, c.RecRatio)
	u := q.Usage
	fmt.Fprintf(&b, "usage: dead %.3f, entropy %.3f nats, %.2f active per token, co-usage off-diagonal mass %.3f\n",
		u.DeadFraction, u.Entropy, u.MeanActive, u.OffDiagonalMass)
	fmt.Fprintf(&b, "training: %d vs %d parameters, lr %g vs %g, throughput %.2f× dense (%.1f s vs %.1f s)",
		q.PrismParams, q.DenseParams, q.PrismLR, q.DenseLR, q.ThroughputRatio, q.PrismTrainSeconds,
		q.DenseTrainSeconds)
	return b.String()
}

// ComputeQuality evaluates pm (PRISM) against dm (its dense baseline, trained on the same data config) on batches
// ([B, T+1] token tensors, EvalBatches): both perplexities, and the PRISM head's coverage and usage
// (lm.Model.Coverage), on the same tokens.
func ComputeQuality(pm, dm *lm.Model, batches []*tensors.Tensor) (Quality, error) {
	if pm.Dense() || !dm.Dense() {
		return Quality{}, errors.New("prism.ComputeQuality: want a PRISM model and a dense model, in that order")
	}
	if pm.Result == nil || dm.Result == nil {
		return Quality{}, errors.New("prism.ComputeQuality: want finished runs (with their training record)")
	}
	if len(batches) == 0 {
		return Quality{}, errors.New("prism.ComputeQuality: no evaluation batches")
	}
	pr, dr := pm.Result, dm.Result
	q := Quality{PrismParams: pr.NumParams, DenseParams: dr.NumParams, PrismLR: pm.Config.Train.LR,
		DenseLR: dm.Config.Train.LR, PrismTrainSeconds: pr.TrainSeconds(), DenseTrainSeconds: dr.TrainSeconds()}
	var err error
	if q.Prism, err = pm.Perplexity(batches); err != nil {
		return q, errors.WithMessage(err, "prism: PRISM perplexity")
	}
	if q.Dense, err = dm.Perplexity(batches); err != nil {
		return q, errors.WithMessage(err, "prism: dense perplexity")
	}
	q.RelPerplexity = q.Prism.Perplexity/q.Dense.Perplexity - 1
	q.RelLoss = q.Prism.Loss/q.Dense.Loss - 1
	if dr.TrainTokensPerSec > 0 {
		q.ThroughputRatio = pr.TrainTokensPerSec / dr.TrainTokensPerSec
	}
	cov, usage, err := pm.Coverage(batches)
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

// EvalBatches returns the evaluation batches of model m ([B, T+1] int32, B = data.batch_size, T = data.seq_len):
// with docs > 0, that many fresh documents of the synthetic corpus (lm.Model.FreshCorpus with seed) tokenized with
// m's tokenizer, packed like the training data and cut into full batches in stream order; with docs = 0, the first
// eval_batches batches of m's validation split (seed unused). Models trained on one data config (a PRISM model and
// its dense baseline) get the same batches.
func EvalBatches(m *lm.Model, docs int, seed uint64) ([]*tensors.Tensor, error) {
	prep, err := m.Data()
	if err != nil {
		return nil, err
	}
	if docs == 0 {
		return prep.ValTensors(m.Config.EvalBatches)
	}
	corpus, err := m.FreshCorpus(docs, seed)
	if err != nil {
		return nil, err
	}
	packed, err := data.Pack(prep.Encode(corpus.Texts), m.Config.Data.SeqLen, prep.EOS)
	if err != nil {
		return nil, errors.WithMessagef(err, "prism.EvalBatches: packing %d evaluation documents (raise the count)",
			docs)
	}
	b, err := data.NewBatcher(packed, data.BatcherConfig{BatchSize: m.Config.Data.BatchSize})
	if err != nil {
		return nil, errors.WithMessagef(err, "prism.EvalBatches: %d evaluation documents (raise the count)", docs)
	}
	out := make([]*tensors.Tensor, b.BatchesPerEpoch())
	for i := range out {
		out[i] = tensors.FromValue(b.Next().Tokens)
	}
	return out, nil
}
