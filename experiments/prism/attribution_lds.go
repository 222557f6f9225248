package prism

import (
	"strconv"
	"time"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/influence"
	"github.com/protolab/protolab/workbench/run"
)

// Linear datamodeling score (spec §8, our choice of details): M subsets, each keeping a random LDSFraction of the
// corpus; a model is retrained from scratch on each subset (plus the training sequences outside the corpus) with the
// run's recipe, seed and number of updates; the query loss is its completion's summed cross-entropy under the
// retrained model. The LDS of a method is the mean over queries of the Spearman correlation between the summed
// scores of each subset and the negated retrained loss (influence.LDS). The seed is the same for every subset, so
// the subsets' data is the only difference between the retrained models.

// lds retrains the subsets and fills every method's LDS.
func (a *Attributor) lds(res *AttributionResult, qs []queryRow, o options) error {
	m := a.Model
	if m.Run == nil {
		return errors.New("prism attribution: the LDS retrains the model and needs its run config")
	}
	M, n := a.Config.LDSSubsets, len(a.Corpus)
	keep := max(1, int(a.Config.LDSFraction*float64(n)+0.5))
	rng := run.RNG(a.Config.Seed, "prism/attribution/lds")
	subsets := make([][]int, M)
	losses := make([][]float64, M)
	start := time.Now()
	for i := range subsets {
		subsets[i] = rng.Perm(n)[:keep]
		tm, err := a.retrain(subsets[i], strconv.Itoa(i))
		if err != nil {
			return errors.WithMessagef(err, "prism attribution: LDS subset %d", i)
		}
		if losses[i], err = tm.queryLosses(qs); err != nil {
			return err
		}
	}
	a.Timings["lds_retrain"] = time.Since(start).Seconds()
	o.logf("prism attribution: LDS retrained %d models in %.1f s", M, a.Timings["lds_retrain"])
	for i := range res.Methods {
		mr := &res.Methods[i]
		v, _, err := influence.LDS(res.scores[mr.Name], subsets, losses)
		if err != nil {
			return err
		}
		mr.LDS = finitePtr(v)
	}
	return nil
}

// retrain trains a fresh PRISM model with the run's recipe on the corpus sequences in keep plus every training
// sequence outside the corpus, in a shuffled order fixed by tag.
func (a *Attributor) retrain(keep []int, tag string) (*Model, error) {
	m := a.Model
	rc := m.Run.Config
	var rows [][]int32
	for _, s := range keep {
		rows = append(rows, a.Corpus[s])
	}
	for i := len(a.Corpus); i < m.Data.TrainSeqs.NumSequences(); i++ {
		rows = append(rows, m.Data.TrainSeqs.Sequence(i))
	}
	perm := run.RNG(rc.Seed, "prism/attribution/lds/order/"+tag).Perm(len(rows))
	B, T1 := rc.Data.BatchSize, rc.Data.SeqLen+1
	if len(rows) < B {
		return nil, errors.Errorf("%d training sequences cannot fill one batch of %d", len(rows), B)
	}
	var batches [][]*tensors.Tensor
	for lo := 0; lo+B <= len(perm); lo += B {
		flat := make([]int32, 0, B*T1)
		for _, p := range perm[lo : lo+B] {
			flat = append(flat, rows[p]...)
		}
		batches = append(batches, []*tensors.Tensor{tensors.FromFlatDataAndDimensions(flat, B, T1)})
	}
	trainB, err := fit.NewSliceBatches(batches)
	if err != nil {
		return nil, err
	}
	valB, err := m.Data.ValBatches()
	if err != nil {
		return nil, err
	}
	ctx := run.NewContext(rc.Seed)
	tm := newModel(rc, ctx, m.Backend, m.Data, "", nil, false)
	opts := []fit.Option{fit.TokensPerBatch(B * rc.Data.SeqLen), fit.Progress(nil)}
	var seedErr error
	if rc.ProtoWarmup > 0 {
		if rc.ProtoWarmup%rc.Train.LogEvery != 0 {
			return nil, errors.Errorf("proto_warmup=%d is not a multiple of train.log_every=%d", rc.ProtoWarmup, rc.Train.LogEvery)
		}
		seedWith := batches[:min(rc.SeedBatches, len(batches))]
		opts = append(opts, fit.OnStep(func(step int, _ fit.Metrics) {
			if step == rc.ProtoWarmup && seedErr == nil {
				seedErr = seedBankFrom(tm, rc, seedWith)
			}
		}))
	}
	if _, err := fit.Train(m.Backend, ctx, prismLoss(rc), trainB, valB, rc.Train, opts...); err != nil {
		return nil, err
	}
	if seedErr != nil {
		return nil, errors.WithMessage(seedErr, "seeding the bank")
	}
	return tm, nil
}

// seedBankFrom overwrites the bank with K distinct hidden states drawn uniformly from the given batches, as the
// training schedule does (spec §2.3) from its first batches.
func seedBankFrom(m *Model, rc RunConfig, batches [][]*tensors.Tensor) error {
	ts := make([]*tensors.Tensor, len(batches))
	for i, b := range batches {
		ts[i] = b[0]
	}
	st, err := m.HeadStats(ts)
	if err != nil {
		return err
	}
	D, K := rc.Model.Width, rc.Prism.NumPrototypes
	if st.N < K {
		return errors.Errorf("%d tokens cannot seed %d prototypes", st.N, K)
	}
	perm := run.RNG(rc.Seed, "prism/seed-bank").Perm(st.N)[:K]
	bank := make([]float64, K*D)
	for j, t := range perm {
		copy(bank[j*D:(j+1)*D], st.Z[t*D:(t+1)*D])
	}
	v := prism.BankVariable(m.Ctx)
	if v == nil {
		return errors.New("the bank variable does not exist yet")
	}
	return errors.Wrap(v.SetValue(floatTensor(bank, v.DType(), K, D)), "setting the seeded bank")
}

// queryLosses returns each query's completion loss Σ_t c_t·CE_t under the model.
func (m *Model) queryLosses(qs []queryRow) ([]float64, error) {
	cfg, pc := m.Cfg, m.Prism
	exec, err := context.NewExec(m.Backend, m.Ctx.Reuse(), func(ctx *context.Context, batch, w *Node) *Node {
		in, tg := splitBatch(batch)
		ce := decoder.CrossEntropy(decoder.PrismLogits(ctx, cfg, pc, in), tg)
		return ConvertDType(ReduceSum(Mul(ce, w), -1), dtypes.Float64)
	})
	if err != nil {
		return nil, errors.Wrap(err, "prism attribution: query losses")
	}
	T1 := len(qs[0].tokens)
	toks, w := make([]int32, 0, len(qs)*T1), make([]float64, 0, len(qs)*(T1-1))
	for _, q := range qs {
		toks, w = append(toks, q.tokens...), append(w, q.weights...)
	}
	out, err := exec.Exec(tensors.FromFlatDataAndDimensions(toks, len(qs), T1), floatTensor(w, m.Cfg.DTypeOf(), len(qs), T1-1))
	if err != nil {
		return nil, errors.Wrap(err, "prism attribution: query losses")
	}
	return tensors.MustCopyFlatData[float64](out[0]), nil
}
