package prismhead

import (
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions), counting the models compute trains: the
// tuning (a dense and a PRISM model per rate of tune.lrs, with tune.seed), then per replicate seed the dense model
// and one PRISM model per distinct λ of curvature.sweep and the configured λ_1, λ_2 (a configured pair equal to a
// sweep point is the same model). The evaluation and curvature passes are small next to training and not counted.
func (c Config) Cost() run.Cost {
	var total run.Cost
	if len(c.Tune.LRs) > 0 {
		base := c.Config
		base.Seed = c.Tune.Seed
		for _, lr := range c.Tune.LRs {
			dc, pc := base.Dense(), base
			dc.Train.LR, pc.Train.LR = lr, lr
			total = total.Add(lmCost(dc)).Add(lmCost(pc))
		}
	}
	for _, seed := range c.ReplicateSeeds() {
		base := c.Config
		base.Seed = seed
		total = total.Add(lmCost(base.Dense()))
		seen := map[string]bool{}
		for _, w := range c.Curvature.Sweep {
			pc := base
			pc.Prism.R1Weight, pc.Prism.R2Weight = w, w
			if !seen[pc.Hash()] {
				seen[pc.Hash()] = true
				total = total.Add(lmCost(pc))
			}
		}
		if !seen[base.Hash()] {
			total = total.Add(lmCost(base))
		}
	}
	return total.Note("tuned rates assumed equal to train.lr for the counts (they change no FLOPs); evaluation " +
		"and curvature passes not counted")
}

// lmCost is the cost of training one language model of c (lm.LoadOrTrain): its schedule at the forward FLOPs of
// its head (decoder.FLOPsPerToken, or PrismFLOPsPerToken with head=prism), its validation passes during training
// and its final perplexity over eval_batches batches (0, all of them, is left out: the split's size is known only
// once the corpus is tokenized).
func lmCost(c lm.Config) run.Cost {
	c = c.Resolved()
	T, B := c.Data.SeqLen, c.Data.BatchSize
	fwd := decoder.FLOPsPerToken(c.Model, T)
	if c.Head == lm.HeadPrism {
		fwd = decoder.PrismFLOPsPerToken(c.Model, c.Prism.Config, T)
	}
	eb := c.Data.EvalBatchSize
	if eb == 0 {
		eb = B
	}
	s := run.Schedule{Steps: c.Train.Steps, Batch: B, SeqLen: T, EvalEvery: c.Train.EvalEvery,
		EvalBatches: c.Train.EvalBatches, EvalBatch: eb}
	return s.Cost(c.NumParams(), fwd).Add(run.Eval(int64(c.EvalBatches)*int64(eb*T), fwd))
}
