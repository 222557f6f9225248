package decoder

import (
	"fmt"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/workbench/wbtest"
)

// Benchmark setting of the core issue: d=128, 4 layers, 4 heads, vocabulary 2048, T=256, B=8, float32.
const benchB, benchT = 8, 256

func benchConfig() Config {
	cfg := DefaultConfig()
	cfg.VocabSize, cfg.Width, cfg.NumLayers = 2048, 128, 4
	cfg.Attention = attention.Config{NumHeads: 4, RoPEBase: 500_000}
	cfg.DType = "float32"
	return cfg
}

// benchBatch returns a [B, T+1] batch of random tokens.
func benchBatch(cfg Config) *tensors.Tensor {
	return tensors.FromValue(randomTokens(7, benchB, benchT+1, cfg.VocabSize))
}

// timeLoop runs fn b.N times after resetting the timer and returns the process CPU seconds per iteration.
// On a shared machine wall-clock rates fall with the load; CPU-second rates (work per core-second) do much less,
// so the benchmarks report both.
func timeLoop(b *testing.B, fn func()) (cpuPerOp float64) {
	b.ResetTimer()
	start := processCPUSeconds()
	for i := 0; i < b.N; i++ {
		fn()
	}
	b.StopTimer()
	return (processCPUSeconds() - start) / float64(b.N)
}

// reportRates reports GFLOP/s (wall clock) and GFLOP/cpu-s for a computation of flops FLOPs per iteration.
func reportRates(b *testing.B, flops, cpuPerOp float64) {
	b.ReportMetric(flops/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GFLOP/s")
	if cpuPerOp > 0 {
		b.ReportMetric(flops/cpuPerOp/1e9, "GFLOP/cpu-s")
	}
}

// reportThroughput reports tokens/s and the FLOP rates, with flopsPerToken the FLOPs one token costs in the
// timed computation.
func reportThroughput(b *testing.B, flopsPerToken, cpuPerOp float64) {
	tokens := float64(benchB * benchT)
	b.ReportMetric(tokens/(b.Elapsed().Seconds()/float64(b.N)), "tokens/s")
	reportRates(b, flopsPerToken*tokens, cpuPerOp)
}

// BenchmarkForwardBackward times one loss-and-gradients evaluation (no optimizer update) of the benchmark
// model; GFLOP/s counts 3× FLOPsPerToken per token.
func BenchmarkForwardBackward(b *testing.B) {
	cfg := benchConfig()
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(1))
	exec := model.MustNewExec(wbtest.Backend(b), vars, func(scope *model.Scope, batch *Node) []*Node {
		loss := NextTokenLoss(scope, cfg, batch)
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
	reportThroughput(b, 3*FLOPsPerToken(cfg, benchT), cpu)
}

// BenchmarkForward times the loss alone (inference-style forward pass) of the benchmark model.
func BenchmarkForward(b *testing.B) {
	cfg := benchConfig()
	vars := model.NewStore()
	exec := model.MustNewExec(wbtest.Backend(b), vars, func(scope *model.Scope, batch *Node) *Node {
		return NextTokenLoss(scope, cfg, batch)
	})
	batch := benchBatch(cfg)
	exec.MustExec(batch)[0].FinalizeAll()
	cpu := timeLoop(b, func() { exec.MustExec(batch)[0].FinalizeAll() })
	reportThroughput(b, FLOPsPerToken(cfg, benchT), cpu)
}

// matmulCase is one float32 product of BenchmarkMatMul: batch × ([m, k] × [k, n]).
type matmulCase struct {
	name    string
	batch   int
	m, k, n int
}

// stepProducts returns the products of one training step of decoder cfg on tokens = B·T tokens: the token
// projections [tokens, D] × [D, D], the FFN's [tokens, D] × [D, F], the LM head's [tokens, D] × [D, V], and the
// attention scores, batched over B·H: [T, D_h] × [D_h, T]. prefix names the model.
func stepProducts(prefix string, cfg Config, B, T int) []matmulCase {
	D, F, V, H := cfg.Width, cfg.FFNWidth(), cfg.VocabSize, cfg.Attention.NumHeads
	N, Dh := B*T, cfg.Attention.HeadSize(D)
	return []matmulCase{
		{fmt.Sprintf("%s_proj_%dx%dx%d", prefix, N, D, D), 1, N, D, D},
		{fmt.Sprintf("%s_ffn_%dx%dx%d", prefix, N, D, F), 1, N, D, F},
		{fmt.Sprintf("%s_lmhead_%dx%dx%d", prefix, N, D, V), 1, N, D, V},
		{fmt.Sprintf("%s_scores_%dx%dx%dx%d", prefix, B*H, T, Dh, T), B * H, T, Dh, T},
	}
}

// BenchmarkMatMul measures the backend's matmul roof in float32: a 1024³ product, and the products of one training
// step of the benchmark model (benchConfig at benchB × benchT = 2048 tokens; "baseline") and of the speed study's
// Small decoder (experiments/speed: D = 64, 4 heads, V = 2048, 4096 tokens per step, here at T = 256; "small").
// GFLOP/s counts 2·m·k·n per product.
func BenchmarkMatMul(b *testing.B) {
	small := DefaultConfig()
	small.VocabSize, small.Width, small.NumLayers = 2048, 64, 2
	small.Attention = attention.Config{NumHeads: 4, RoPEBase: 10_000}
	cases := []matmulCase{{"1024x1024x1024", 1, 1024, 1024, 1024}}
	cases = append(cases, stepProducts("baseline", benchConfig(), benchB, benchT)...)
	cases = append(cases, stepProducts("small", small, 4096/256, 256)...)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			run := wbtest.MatMulRunner(b, c.batch, c.m, c.k, c.n)
			cpu := timeLoop(b, run)
			reportRates(b, 2*float64(c.batch*c.m*c.k*c.n), cpu)
		})
	}
}
