package pair

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// BenchmarkInterventionPass measures one pass of the intervention sweep at the Small preset's size (a write mask
// set, then 64 sequences of 32 tokens scored in two batches of experiments/interp's eval.batch_size) on an untrained
// model, and reports the graph builds over all passes (1: the executable is reused).
func BenchmarkInterventionPass(b *testing.B) {
	const evalBatch = 32
	cfg := Small()
	pc, _, err := cfg.Models(lmdata.SourceSynthetic)
	if err != nil {
		b.Fatal(err)
	}
	backend, err := run.Backend()
	if err != nil {
		b.Fatal(err)
	}
	mc := pc.Model
	m := &lm.Model{Config: pc, Store: run.NewStore(1), Backend: backend}
	rng := rand.New(rand.NewPCG(1, 2))
	var batches []*tensors.Tensor
	for range 2 {
		rows := make([][]int32, evalBatch)
		for i := range rows {
			rows[i] = make([]int32, cfg.Data.SeqLen+1)
			for j := range rows[i] {
				rows[i][j] = int32(rng.IntN(mc.VocabSize))
			}
		}
		batches = append(batches, tensors.FromValue(rows))
	}
	// Create the (untrained) variables, as training would.
	if _, err := model.ExecOnce(backend, m.Store, func(scope *model.Scope, x *graph.Node) *graph.Node {
		return decoder.Logits(scope, mc, x)
	}, tensors.FromValue([][]int32{{0, 1}})); err != nil {
		b.Fatal(err)
	}
	sc, err := newScorer(m, batches)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := sc.logProbs(batches); err != nil { // builds the graph
		b.Fatal(err)
	}
	R := mc.ProtoT.NumPrototypes
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		mask := make([]float64, R)
		for k := range mask {
			mask[k] = 1
		}
		mask[i%R] = 0
		if err := protot.SetMasks(m.Store.Scope(decoder.BlockScope(0)), mc.ProtoT, 0, mask, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := sc.logProbs(batches); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(sc.builds), "builds")
}
