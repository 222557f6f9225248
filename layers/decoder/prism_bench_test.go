package decoder

import (
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

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
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(1))
	exec := model.MustNewExec(wbtest.Backend(b), vars, func(scope *model.Scope, batch *Node) []*Node {
		loss, _ := PrismLoss(scope, cfg, pc, batch)
		return append([]*Node{loss}, scope.BuildTrainableVariablesGradientsGraph(loss)...)
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
