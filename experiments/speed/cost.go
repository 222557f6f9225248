package speed

import (
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/timing"
	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions). Throughput (mode both or throughput): per
// mixer and context T one model trained from scratch for warmup + steps steps of B = max(1, token_budget/T)
// sequences, skipped as trainOne skips it when its estimated memory exceeds max_memory_gb. Decoding (mode both or
// decode): decode_tokens steps per mixer and context at theory/cost's matrix products per decoded token (no
// attention_chunked rows), counted as evaluation.
func (c Config) Cost() run.Cost {
	var total run.Cost
	skipped := 0
	for _, mixer := range c.Mixers {
		mc := c.ModelConfig(mixer)
		for _, T := range c.Contexts {
			if c.Mode != ModeDecode {
				B := max(1, c.TokenBudget/T)
				if timing.TrainBytes(mc, B, T)/(1<<20) > c.MaxMemoryGB*1024 {
					skipped++
				} else {
					tokens := int64(c.Warmup+c.Steps) * int64(B*T)
					total = total.Add(run.Training(tokens, mc.NumParams(), decoder.FLOPsPerToken(mc, T)))
				}
			}
		}
		if c.Mode == ModeThroughput || mixer == MixerAttentionChunked {
			continue
		}
		for _, T := range c.decodeContexts() {
			dc := c.ModelConfig(mixer)
			dc.MaxLen = T
			if cm, err := timing.CostModel(dc); err == nil {
				total.EvalFLOPs += float64(c.DecodeTokens) * cm.Decode(T).MatMul
			}
		}
	}
	return total.Note("throughput rows as models trained for warmup+steps steps (%d skipped by max_memory_gb); "+
		"decoding rows as evaluation", skipped)
}
