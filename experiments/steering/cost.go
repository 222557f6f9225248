package steering

import (
	"slices"

	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions): one PRISM model per training seed, plus
// its dense baseline when the "sae" controller is compared. The SAEs (steering.sae.train.steps batches of
// steering.sae.batch_size hidden states), the controllers and the task evaluations run on frozen models and are
// small next to training: not counted.
func (c Config) Cost() run.Cost {
	var total run.Cost
	sae := slices.Contains(c.Settings().Controllers, ControllerSAE)
	for _, mc := range c.Models() {
		total = total.Add(mc.Cost())
		if sae {
			total = total.Add(mc.Dense().Cost())
		}
	}
	return total.Note("PRISM models per seed (+ dense baselines for the sae controller); SAEs, controllers and " +
		"task evaluations not counted")
}
