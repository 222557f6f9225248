package lm

import (
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/run"
)

// Cost is the estimated cost of training one language model of c (LoadOrTrain), for the studies' Cost methods
// (`protolab cost`): its schedule at the forward FLOPs of its head (decoder.FLOPsPerToken, or PrismFLOPsPerToken with
// head=prism), its validation passes during training and its final perplexity over eval_batches batches (0, all of
// them, is left out: the split's size is known only once the corpus is tokenized).
func (c Config) Cost() run.Cost {
	c = c.Resolved()
	T, B := c.Data.SeqLen, c.Data.BatchSize
	fwd := decoder.FLOPsPerToken(c.Model, T)
	if c.Head == HeadPrism {
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
