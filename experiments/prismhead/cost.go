package prismhead

import (
	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions), counting the models compute trains on each
// corpus of c.Sources(): the tuning (a dense and a PRISM model per rate of tune.lrs, with tune.seed), then per
// replicate seed the dense model and one PRISM model per distinct λ of curvature.sweep and the configured λ_1, λ_2
// (a configured pair equal to a sweep point is the same model). The evaluation and curvature passes are small next
// to training and not counted.
func (c Config) Cost() run.Cost {
	var total run.Cost
	for _, src := range c.Sources() {
		total = total.Add(c.corpusCost(src))
	}
	return total.Note("tuned rates assumed equal to train.lr for the counts (they change no FLOPs); evaluation " +
		"and curvature passes not counted")
}

// corpusCost is Cost on one corpus.
func (c Config) corpusCost(source string) run.Cost {
	var total run.Cost
	on := c.OnCorpus(source)
	if len(c.Tune.LRs) > 0 {
		base := on
		base.Seed = c.Tune.Seed
		for _, lr := range c.Tune.LRs {
			dc, pc := base.Dense(), base
			dc.Train.LR, pc.Train.LR = lr, lr
			total = total.Add(dc.Cost()).Add(pc.Cost())
		}
	}
	for _, seed := range c.ReplicateSeeds() {
		base := on
		base.Seed = seed
		total = total.Add(base.Dense().Cost())
		seen := map[string]bool{}
		for _, w := range c.Curvature.Sweep {
			pc := base
			pc.Prism.R1Weight, pc.Prism.R2Weight = w, w
			if !seen[pc.Hash()] {
				seen[pc.Hash()] = true
				total = total.Add(pc.Cost())
			}
		}
		if !seen[base.Hash()] {
			total = total.Add(base.Cost())
		}
	}
	return total
}
