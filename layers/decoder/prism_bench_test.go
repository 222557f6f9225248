package decoder

import (
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/wbtest"
)

// BenchmarkPrismForwardBackward times one loss-and-gradients evaluation of the benchmark model (benchConfig: D=128,
// 4 layers, V=2048, T=256, B=8) with the PRISM head, K=1024, k=16, all four loss terms; compare with
// BenchmarkForwardBackward (the dense head). GFLOP/s counts 3× PrismFLOPsPerToken per token.
func BenchmarkPrismForwardBackward(b *testing.B) {
	cfg := benchConfig()
	pc := prism.DefaultConfig()
	pc.NumPrototypes, pc.TopK = 1024, 16
	ctx := context.New()
	ctx.SetParam(context.ParamInitialSeed, int64(1))
	exec := context.MustNewExec(wbtest.Backend(b), ctx, func(ctx *context.Context, batch *Node) []*Node {
		loss, _ := PrismLoss(ctx, cfg, pc, batch)
		return append([]*Node{loss}, ctx.BuildTrainableVariablesGradientsGraph(loss)...)
	})
	batch := benchBatch(cfg)
	for _, t := range exec.MustExec(batch) { // compile and initialise outside the timing
		t.FinalizeAll()
	}
	cpu := timeLoop(b, func() {
		for _, t := range exec.MustExec(batch) {
			t.FinalizeAll()
		}
	})
	reportThroughput(b, 3*PrismFLOPsPerToken(cfg, pc, benchT), cpu)
}
