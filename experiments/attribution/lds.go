package attribution

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
	"github.com/protolab/protolab/models/influence"
	"github.com/protolab/protolab/workbench/run"
)

// Linear datamodeling score (spec §8, our choice of details; doc.go equation 9): M subsets, each keeping a random
// LDSFraction of the corpus; a model is retrained from scratch on each subset (plus the training sequences outside
// the corpus) with the attributed model's own recipe (lm.TrainOn: its seed, number of updates, batch size, warm-up
// and bank seeding from the first batches given), the subset cycled in a fresh order each epoch until the updates
// are done; the query loss is its completion's summed cross-entropy under the retrained model. The LDS of a method
// is the mean over queries of the Spearman correlation between the summed scores of each subset and the negated
// retrained loss (influence.LDS). The seed is the same for every subset, so the subsets' data is the only difference
// between the retrained models. No attribution method reads the retrained models: the LDS shares no computation
// with any method.

// ldsData is what the LDS of one attributed model is computed from.
type ldsData struct {
	loss [][]float64            // [M][Q]: the completion loss of query q under the model retrained on subset m
	pred map[string][][]float64 // [method][Q][M]: Σ_{s∈subset m} score(q, s)
}

// lds retrains the subsets and fills every method's LDS with its bootstrap interval over queries and subsets.
func (a *Attributor) lds(res *ModelResult, qs []queryRow, o run.Options) error {
	M, n := a.Settings.LDSSubsets, len(a.Corpus)
	keep := max(1, int(a.Settings.LDSFraction*float64(n)+0.5))
	rng := run.RNG(a.Settings.Seed, "prism/attribution/lds/"+strconv.FormatUint(a.Model.Config.Seed, 10))
	subsets := make([][]int, M)
	losses := make([][]float64, M)
	start := time.Now()
	for i := range subsets {
		if err := o.Err(); err != nil {
			return err
		}
		subsets[i] = rng.Perm(n)[:keep]
		tm, err := a.retrain(subsets[i], strconv.Itoa(i), o)
		if err != nil {
			return errors.WithMessagef(err, "attribution: LDS subset %d", i)
		}
		if losses[i], err = queryLosses(tm, qs); err != nil {
			return err
		}
		o.Logf(Study, "LDS: retrained %d of %d models (%.0f s)", i+1, M, time.Since(start).Seconds())
	}
	a.Timings["lds_retrain"] = time.Since(start).Seconds()
	d := &ldsData{loss: losses, pred: map[string][][]float64{}}
	var names []string
	for _, mr := range res.Methods {
		sc := res.scores[mr.Name]
		pred := make([][]float64, len(sc))
		for q := range sc {
			pred[q] = make([]float64, M)
			for m, sub := range subsets {
				for _, s := range sub {
					pred[q][m] += sc[q][s]
				}
			}
		}
		d.pred[mr.Name] = pred
		names = append(names, mr.Name)
	}
	res.lds, res.LDSModels = d, M
	intervals, _ := ldsIntervals([]*ldsData{d}, names, "", a.Settings.Bootstrap, a.Settings.Seed)
	for i := range res.Methods {
		mr := &res.Methods[i]
		mean, _, err := influence.LDS(res.scores[mr.Name], subsets, losses)
		if err != nil {
			return err
		}
		if iv, ok := intervals[mr.Name]; ok && finitePtr(mean) != nil {
			iv.Mean = mean
			mr.LDS = &iv
		}
	}
	return nil
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
func queryLosses(m *lm.Model, qs []queryRow) ([]float64, error) {
	exec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch, w *Node) *Node {
		return ConvertDType(ReduceSum(Mul(m.TokenLossesGraph(scope, batch), w), -1), dtypes.Float64)
	})
	if err != nil {
		return nil, errors.Wrap(err, "attribution: query losses")
	}
	T1 := len(qs[0].tokens)
	toks, w := make([]int32, 0, len(qs)*T1), make([]float64, 0, len(qs)*(T1-1))
	for _, q := range qs {
		toks, w = append(toks, q.tokens...), append(w, q.weights...)
	}
	out, err := exec.Exec(tensors.FromFlatDataAndDimensions(toks, len(qs), T1),
		host.Tensor(w, m.Config.Model.DTypeOf(), len(qs), T1-1))
	if err != nil {
		return nil, errors.Wrap(err, "attribution: query losses")
	}
	return tensors.MustCopyFlatData[float64](out[0]), nil
}
