package suppression

import (
	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions): the PRISM models of Models on every corpus
// of Sources (the recipe model per seed, and the spec-range bank per seed when spec_range_k > 0; a corpus changes
// no FLOPs). Selection, generation (suppress.samples continuations per mode) and the perplexity passes run on
// frozen models and are not counted. Notebook 20 runs the study once per selection rule; the rules share these
// models.
func (c Config) Cost() run.Cost {
	var total run.Cost
	for _, mc := range c.Models() {
		total = total.Add(mc.Config.Cost())
	}
	return total.Note("PRISM models per corpus and seed (and spec-range bank); selection, generation and " +
		"perplexity passes not counted")
}
