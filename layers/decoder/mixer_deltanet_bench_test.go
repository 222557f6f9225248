package decoder

import (
	"fmt"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

// Recurrent-mixer benchmarks: the 4-layer D=128 benchmark decoder (benchConfig) with the mixer in every block;
// training at 2,048 tokens per batch (B·T fixed), decoding one token at a time with B = 1. The helpers are shared
// with mixer_mamba_bench_test.go.

const benchTokens = 2048 // B·T of a training batch

// benchTrainStep times one loss-and-gradients evaluation (no optimizer update) at sequence length T and reports
// tokens/s (wall clock) and tokens per CPU-second.
func benchTrainStep(b *testing.B, mixer string, T int) {
	cfg := benchConfig()
	cfg.Mixer = mixer
	B := benchTokens / T
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(1))
	exec := model.MustNewExec(wbtest.Backend(b), vars, func(scope *model.Scope, batch *Node) []*Node {
		loss := NextTokenLoss(scope, cfg, batch)
		return append([]*Node{loss}, scope.BuildTrainableVariablesGradientsGraph(loss)...)
	})
	batch := tensors.FromValue(randomTokens(7, B, T+1, cfg.VocabSize))
	for _, t := range exec.MustExec(batch) { // compile and initialise outside the timing
		t.FinalizeAll()
	}
	cpu := timeLoop(b, func() {
		for _, t := range exec.MustExec(batch) {
			t.FinalizeAll()
		}
	})
	b.ReportMetric(benchTokens/(b.Elapsed().Seconds()/float64(b.N)), "tokens/s")
	if cpu > 0 {
		b.ReportMetric(benchTokens/cpu, "tokens/cpu-s")
	}
}

// benchDecode times one decoding step (B = 1) at position ctxLen−1, feeding the state back each time, and reports
// ms/token. A recurrent state has a fixed size, so the position changes nothing but is reported for comparison
// with attention's KV cache.
func benchDecode(b *testing.B, mixer string, ctxLen int) {
	cfg := benchConfig()
	cfg.Mixer = mixer
	vars := model.NewStore()
	backend := wbtest.Backend(b)
	model.MustExecOnce(backend, vars, func(scope *model.Scope, tokens *Node) *Node { // create the variables
		return Logits(scope, cfg, tokens)
	}, tensors.FromValue([][]int32{{1, 2}}))
	step := model.MustNewExec(backend, vars, func(scope *model.Scope, in []*Node) []*Node {
		logits, state := Step(scope, cfg, in[0], in[1], in[2:])
		return append([]*Node{logits}, state...)
	})
	state := NewState(cfg, 1, ctxLen)
	token := tensors.FromValue([][]int32{{3}})
	run := func() {
		args := []any{token, int32(ctxLen - 1)}
		for _, s := range state {
			args = append(args, s)
		}
		outs := step.MustExec(args...)
		outs[0].FinalizeAll()
		for _, s := range state {
			s.FinalizeAll()
		}
		state = outs[1:]
	}
	run()
	timeLoop(b, run)
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/token")
}

// BenchmarkDeltaNetForwardBackward: default DeltaNet (H = 4, chunk 32) at T = 256 (B = 8) and T = 1024 (B = 2).
func BenchmarkDeltaNetForwardBackward(b *testing.B) {
	for _, T := range []int{256, 1024} {
		b.Run(fmt.Sprintf("T=%d", T), func(b *testing.B) { benchTrainStep(b, MixerDeltaNet, T) })
	}
}

// BenchmarkDeltaNetDecode: one token at context 256 and 1024.
func BenchmarkDeltaNetDecode(b *testing.B) {
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprintf("ctx=%d", n), func(b *testing.B) { benchDecode(b, MixerDeltaNet, n) })
	}
}
