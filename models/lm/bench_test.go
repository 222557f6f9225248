package lm

import (
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// The core issue's benchmark model: D = 128, 4 layers, 4 heads, vocabulary 2048, T = 256, B = 8, float32.
const benchB, benchT = 8, 256

func benchModel() decoder.Config {
	m := decoder.DefaultConfig()
	m.VocabSize, m.Width, m.NumLayers = 2048, 128, 4
	m.Attention = attention.Config{NumHeads: 4, RoPEBase: 10_000}
	m.TieEmbeddings = false
	return m
}

// BenchmarkTrainStep times complete fit.Train steps (forward, backward, clipping, AdamW update) of the benchmark
// model. It reports tokens/s and the achieved GFLOP/s, counting 3× decoder.FLOPsPerToken per token; compare with
// layers/decoder's BenchmarkMatMul for the backend's matmul roof.
func BenchmarkTrainStep(b *testing.B) {
	m := benchModel()
	rng := wbtest.RNG(1)
	batches := make([][]*tensors.Tensor, 4)
	for i := range batches {
		tok := make([][]int32, benchB)
		for r := range tok {
			tok[r] = make([]int32, benchT+1)
			for t := range tok[r] {
				tok[r][t] = int32(rng.IntN(m.VocabSize))
			}
		}
		batches[i] = []*tensors.Tensor{tensors.FromValue(tok)}
	}
	data, err := fit.NewSliceBatches(batches)
	if err != nil {
		b.Fatal(err)
	}
	cfg := fit.DefaultConfig()
	cfg.WarmupSteps, cfg.EvalEvery, cfg.CheckpointEvery = 0, 0, 0
	lossFn := func(scope *model.Scope, in []*Node) *Node { return decoder.NextTokenLoss(scope, m, in[0]) }
	// One step compiles the graph and initialises the variables; the timed run then trains b.N more.
	cfg.Steps = 1 + b.N
	var warm float64
	vars := run.NewStore(1)
	hist, err := fit.Train(wbtest.Backend(b), vars, lossFn, data, nil, cfg, fit.Progress(nil), fit.NoDecay(m.NoDecay()...),
		fit.TokensPerBatch(benchB*benchT), fit.OnStep(func(step int, mt fit.Metrics) {
			if step == 1 {
				warm = mt.Elapsed
				b.ResetTimer()
			}
		}))
	if err != nil {
		b.Fatal(err)
	}
	last := hist.Steps[len(hist.Steps)-1]
	perStep := (last.Elapsed - warm) / float64(b.N)
	b.ReportMetric(float64(benchB*benchT)/perStep, "tokens/s")
	b.ReportMetric(3*decoder.FLOPsPerToken(m, benchT)*float64(benchB*benchT)/perStep/1e9, "GFLOP/s")
}
