package interp

import (
	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions): for each corpus and each of its training
// seeds (seed, seed+1, …; corpora[].seeds of them), the ProtoT model and its parameter-matched LLaMA baseline
// (models/pair). WordNet and the Brown corpus are assumed installed. The SAEs (sae.train.steps batches of
// sae.batch_size hidden states per layer), the unit analysis and the interventions run on frozen models and are
// not counted.
func (c Config) Cost() run.Cost {
	var total run.Cost
	for i := 0; i < c.Seeds; i++ {
		pc := c.Config
		pc.Seed = c.Seed + uint64(i)
		for _, cc := range c.Corpora {
			if i >= cc.seeds(c.Seeds) {
				continue
			}
			proto, llama, err := pc.Models(cc.Source)
			if err != nil {
				continue // Validate reports it
			}
			total = total.Add(proto.Cost()).Add(llama.Cost())
		}
	}
	return total.Note("ProtoT + LLaMA per seed and corpus (WordNet and Brown assumed installed); SAEs, unit " +
		"analysis and interventions not counted")
}
