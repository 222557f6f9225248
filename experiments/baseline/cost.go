package baseline

import (
	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions): one language model, trained for
// train.steps batches of B×T tokens, then num_samples short generations (not counted).
func (c Config) Cost() run.Cost {
	return c.Config.Cost().Note("1 model; sampling not counted")
}
