package suppression

import (
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions): the PRISM models of Models (the recipe
// model per seed, and the spec-range bank per seed when spec_range_k > 0). Selection, generation (suppress.samples
// continuations per mode) and the perplexity passes run on frozen models and are not counted. Notebook 20 runs the
// study once per selection rule; the rules share these models.
func (c Config) Cost() run.Cost {
	var total run.Cost
	for _, mc := range c.Models() {
		total = total.Add(lmCost(mc.Config))
	}
	return total.Note("PRISM models per seed (and spec-range bank); selection, generation and perplexity passes " +
		"not counted")
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
