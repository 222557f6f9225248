package attribution

import (
	"strings"

	"github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions): on each corpus of the study,
// attribution.model_seeds PRISM models, and for each attributed model attribution.lds_subsets models retrained from
// scratch with its recipe (prism.Attributor.Retrain: train.steps batches of B×T tokens). The attribution itself is
// counted as one forward and backward pass over the attributed corpus per model (attribution.train_seqs sequences of
// T tokens; 0, all of them, is not counted): the caches and EK-FAC fits read every sequence's gradients once; the
// per-query solves are left out (the cost model, prism.NewCostModel, prices them per query).
func (c Config) Cost() run.Cost {
	a := c.Attribution
	var total run.Cost
	for _, source := range c.sources() {
		for i := 0; i < a.ModelSeeds; i++ {
			mc := modelConfig(c, source, i)
			one := mc.Cost()
			total = total.Add(one)
			if a.LDSSubsets > 0 {
				re := one
				re.EvalFLOPs = 0
				total = total.Add(re.Times(a.LDSSubsets))
			}
			total = total.Add(prism.CorpusPassCost(mc, a.TrainSeqs))
		}
	}
	return total.Note("%s: %d attributed models × (1 + %d LDS retrainings) per corpus; one gradient pass over %d "+
		"corpus sequences per model in evaluation; per-query solves not counted", strings.Join(c.sources(), " and "),
		a.ModelSeeds, a.LDSSubsets, a.TrainSeqs)
}
