package lm

import (
	"math"
	"testing"
	"time"

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

// product is one matrix product of a training step, count times: batch × ([m, k] × [k, n]).
type product struct{ batch, m, k, n, count int }

func (p product) flops() float64 { return 2 * float64(p.count*p.batch*p.m*p.k*p.n) }

// trainProducts lists the matrix products of one training step of the attention decoder cfg on B rows of T tokens
// (N = B·T): each forward product y = x·w, [m, k] × [k, n], and its two gradient products dx = dy·wᵀ, [m, n] × [n, k],
// and dw = xᵀ·dy, [k, m] × [m, n]. Forward: the projections q, k, v, o, the scores q·kᵀ and the weighted sum p·v
// batched over B·H_kv heads (G query heads each), the FFN's gate, up and down, and the LM head. Their FLOPs are 3×
// decoder.FLOPsPerToken per token, which the benchmark checks.
func trainProducts(cfg decoder.Config, B, T int) []product {
	D, F, V, N := cfg.Width, cfg.FFNWidth(), cfg.VocabSize, B*T
	H, Hkv, Dh := cfg.Attention.NumHeads, cfg.Attention.KVHeads(), cfg.Attention.HeadSize(cfg.Width)
	G, L := H/Hkv, cfg.NumLayers
	forward := []product{
		{1, N, D, H * Dh, L}, {1, N, D, Hkv * Dh, 2 * L}, {1, N, H * Dh, D, L}, // q; k, v; o
		{B * Hkv, T * G, Dh, T, L}, {B * Hkv, T * G, T, Dh, L}, // scores, weighted sum
		{1, N, D, F, 2 * L}, {1, N, F, D, L}, // gate, up; down
		{1, N, D, V, 1}, // LM head
	}
	var out []product
	for _, p := range forward {
		out = append(out, p, product{p.batch, p.m, p.n, p.k, p.count}, product{p.batch, p.k, p.m, p.n, p.count})
	}
	return out
}

// roofSeconds returns how long the products take at the backend's best rate for each shape: every distinct shape
// is timed as one float32 DotGeneral in its natural layout (MatMul, or batched), the best of 5 runs after one that
// compiles. It is the matrix-product time of a step that ran at the backend's roof for its own shapes.
func roofSeconds(b *testing.B, ps []product) float64 {
	best := map[product]float64{} // shape (count 1) → seconds
	total := 0.0
	for _, p := range ps {
		shape := product{p.batch, p.m, p.k, p.n, 1}
		sec, ok := best[shape]
		if !ok {
			run := wbtest.MatMulRunner(b, p.batch, p.m, p.k, p.n)
			sec = math.Inf(1)
			for range 5 {
				start := time.Now()
				run()
				sec = min(sec, time.Since(start).Seconds())
			}
			best[shape] = sec
		}
		total += float64(p.count) * sec
	}
	return total
}

// BenchmarkTrainStep times complete fit.Train steps (forward, backward, clipping, AdamW update) of the benchmark
// model. It reports tokens/s, the achieved GFLOP/s (counting 3× decoder.FLOPsPerToken per token), and roof-%: the
// share of the step's time its matrix products would take at the backend's own roof for their shapes
// (roofSeconds of trainProducts, measured in the same process before the timed steps), i.e. the achieved rate as a
// share of the roof at the model's shapes. layers/decoder's BenchmarkMatMul prints the rates at these shapes.
func BenchmarkTrainStep(b *testing.B) {
	m := benchModel()
	products := trainProducts(m, benchB, benchT)
	flops := 0.0
	for _, p := range products {
		flops += p.flops()
	}
	if want := 3 * decoder.FLOPsPerToken(m, benchT) * benchB * benchT; math.Abs(flops-want) > 1e-9*want {
		b.Fatalf("trainProducts count %g FLOPs, want 3 × decoder.FLOPsPerToken per token = %g", flops, want)
	}
	roof := roofSeconds(b, products)
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
	b.ReportMetric(flops/perStep/1e9, "GFLOP/s")
	b.ReportMetric(100*roof/perStep, "roof-%")
}
