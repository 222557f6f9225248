package prism

import (
	"strconv"
	"time"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/host"
	"github.com/protolab/protolab/workbench/run"
)

// Linear datamodeling score (spec §8, our choice of details; doc.go equation 9): M subsets, each keeping a random
// fraction of the corpus; a model is retrained from scratch on each subset (plus the training sequences outside the
// corpus) with the attributed model's own recipe (lm.TrainOn: its seed, number of updates, batch size, warm-up and
// bank seeding from the first batches given), the subset cycled in a fresh order each epoch until the updates are
// done; the query loss is its completion's summed cross-entropy under the retrained model. The LDS of a method is
// the mean over queries of the Spearman correlation between the summed scores of each subset and the negated
// retrained loss (influence.LDS over a Retrained). The seed is the same for every subset, so the subsets' data is the
// only difference between the retrained models. No attribution method reads the retrained models: the LDS shares no
// computation with any method.

// Retrained is the counterfactual side of the LDS: the subsets of the corpus and the queries' completion losses
// under the models retrained on them.
type Retrained struct {
	Subsets [][]int     // [M][keep]: the corpus sequences each subset keeps
	Losses  [][]float64 // [M][Q]: the completion loss of query q under the model retrained on subset m
}

// Retrain draws the given number of random subsets of the corpus, each keeping fraction·N_seq sequences rounded (at
// least one), retrains a model from scratch on each (retrain) and returns the queries' completion losses under each,
// timed as "lds_retrain". It stops between retrainings when the options' context is done.
func (a *Attributor) Retrain(qs []Query, subsets int, fraction float64, opts ...run.Option) (*Retrained, error) {
	o := run.NewOptions(opts...)
	n := len(a.Corpus)
	keep := max(1, int(fraction*float64(n)+0.5))
	rng := run.RNG(a.Config.Seed, "prism/attribution/lds/"+strconv.FormatUint(a.Model.Config.Seed, 10))
	r := &Retrained{Subsets: make([][]int, subsets), Losses: make([][]float64, subsets)}
	start := time.Now()
	for i := range r.Subsets {
		if err := o.Err(); err != nil {
			return nil, err
		}
		r.Subsets[i] = rng.Perm(n)[:keep]
		tm, err := a.retrain(r.Subsets[i], strconv.Itoa(i), o)
		if err != nil {
			return nil, errors.WithMessagef(err, "attribution: LDS subset %d", i)
		}
		if r.Losses[i], err = queryLosses(tm, qs); err != nil {
			return nil, err
		}
		o.Logf(logTag, "LDS: retrained %d of %d models (%.0f s)", i+1, subsets, time.Since(start).Seconds())
	}
	a.Timings["lds_retrain"] = time.Since(start).Seconds()
	return r, nil
}

// retrain trains a fresh model with the attributed model's recipe (lm.TrainOn) on the corpus sequences in keep plus
// every training sequence outside the corpus, train.steps batches of data.batch_size, each epoch in a shuffled order
// fixed by tag and the epoch.
func (a *Attributor) retrain(keep []int, tag string, o run.Options) (*lm.Model, error) {
	cfg := a.Model.Config
	var rows [][]int32
	for _, s := range keep {
		rows = append(rows, a.Corpus[s])
	}
	for i := len(a.Corpus); i < a.data.TrainSeqs.NumSequences(); i++ {
		rows = append(rows, a.data.TrainSeqs.Sequence(i))
	}
	B, T1 := cfg.Data.BatchSize, cfg.Data.SeqLen+1
	if len(rows) < B {
		return nil, errors.Errorf("%d training sequences cannot fill one batch of %d", len(rows), B)
	}
	var batches [][]*tensors.Tensor
	for epoch := 0; len(batches) < cfg.Train.Steps; epoch++ {
		perm := run.RNG(cfg.Seed, "prism/attribution/lds/order/"+tag+"/"+strconv.Itoa(epoch)).Perm(len(rows))
		for lo := 0; lo+B <= len(perm) && len(batches) < cfg.Train.Steps; lo += B {
			flat := make([]int32, 0, B*T1)
			for _, p := range perm[lo : lo+B] {
				flat = append(flat, rows[p]...)
			}
			batches = append(batches, []*tensors.Tensor{tensors.FromFlatDataAndDimensions(flat, B, T1)})
		}
	}
	return lm.TrainOn(cfg, batches, run.Progress(nil), run.Context(o.Context))
}

// queryLosses returns each query's completion loss Σ_t c_t·CE_t under the model m.
func queryLosses(m *lm.Model, qs []Query) ([]float64, error) {
	exec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch, w *Node) *Node {
		return ConvertDType(ReduceSum(Mul(m.TokenLossesGraph(scope, batch), w), -1), dtypes.Float64)
	})
	if err != nil {
		return nil, errors.Wrap(err, "attribution: query losses")
	}
	T1 := len(qs[0].Tokens)
	toks, w := make([]int32, 0, len(qs)*T1), make([]float64, 0, len(qs)*(T1-1))
	for _, q := range qs {
		toks, w = append(toks, q.Tokens...), append(w, q.Weights...)
	}
	out, err := exec.Exec(tensors.FromFlatDataAndDimensions(toks, len(qs), T1),
		host.Tensor(w, m.Config.Model.DTypeOf(), len(qs), T1-1))
	if err != nil {
		return nil, errors.Wrap(err, "attribution: query losses")
	}
	return tensors.MustCopyFlatData[float64](out[0]), nil
}
