package robustness

import (
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
		total = total.Add(proto.Cost()).Add(llama.Cost())
	}
	return total.Note("ProtoT + LLaMA per corpus, shared with interp's first seed through the model store; " +
		"prompt passes not counted")
}
