package robustness

import (
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions): per corpus the ProtoT model and its
// parameter-matched LLaMA baseline (models/pair), the same models as the interp study's first seed, which the
// model store shares (WordNet is assumed installed). The perturbed prompts (prompts × perturbations forward
// passes of max_tokens tokens) are small next to training: not counted.
func (c Config) Cost() run.Cost {
	var total run.Cost
	for _, cc := range c.Corpora {
		proto, llama, err := c.Models(cc.Source)
		if err != nil {
			continue // Validate reports it
		}
		total = total.Add(lmCost(proto)).Add(lmCost(llama))
	}
	return total.Note("ProtoT + LLaMA per corpus, shared with interp's first seed through the model store; " +
		"prompt passes not counted")
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
