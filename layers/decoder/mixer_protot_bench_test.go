package decoder

import (
	"fmt"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/workbench/wbtest"
)

// protoTBenchTokens is B·T of the training benchmarks: 2,048 tokens per step at every T.
const protoTBenchTokens = 2048

// protoTBenchConfig is the benchmark decoder (D=128, 4 layers, V=2048, float32) with ProtoT mixers: R=32, D_v=64,
// chunks of q tokens (the default is 64).
func protoTBenchConfig(q int) Config {
	cfg := benchConfig()
	cfg.Mixer = MixerProtoT
	cfg.ProtoT.ChunkSize = q
	return cfg
}

// BenchmarkProtoTForwardBackward times one loss-and-gradients evaluation (no optimizer update) of the benchmark
// decoder with ProtoT mixers at T=256 (B=8) and T=1024 (B=2), with the default chunks of 64 tokens and with
// chunks of 16 (faster on CPUs); tokens/s counts B·T tokens per step.
func BenchmarkProtoTForwardBackward(b *testing.B) {
	for _, T := range []int{256, 1024} {
		for _, q := range []int{64, 16} {
			b.Run(fmt.Sprintf("T=%d/Q=%d", T, q), func(b *testing.B) { benchProtoTTrain(b, T, q) })
		}
	}
}

// benchProtoTTrain times one training step (loss and gradients) at sequence length T with chunks of q tokens.
func benchProtoTTrain(b *testing.B, T, q int) {
	cfg := protoTBenchConfig(q)
	B := protoTBenchTokens / T
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
	perStep := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(protoTBenchTokens/perStep, "tokens/s")
	if cpu > 0 { // work per core-second: less sensitive to other load on a shared machine
		b.ReportMetric(protoTBenchTokens/cpu, "tokens/cpu-s")
	}
	reportRates(b, 3*FLOPsPerToken(cfg, T)*protoTBenchTokens, cpu)
}

// BenchmarkProtoTDecode times one decoding step (batch 1) of the benchmark decoder after a context of 256 or
// 1,024 tokens fed through Step; ProtoT's state does not grow, so both should cost the same.
func BenchmarkProtoTDecode(b *testing.B) {
	for _, context_ := range []int{256, 1024} {
		b.Run(fmt.Sprintf("context=%d", context_), func(b *testing.B) {
			cfg := protoTBenchConfig(protot.DefaultConfig().ChunkSize)
			vars := model.NewStore()
			vars.SetParam(model.ParamInitialSeed, int64(1))
			step := model.MustNewExec(wbtest.Backend(b), vars, func(scope *model.Scope, in []*Node) []*Node {
				logits, state := Step(scope, cfg, in[0], in[1], in[2:])
				return append([]*Node{logits}, state...)
			})
			tokens := randomTokens(8, 1, context_+1, cfg.VocabSize)[0]
			state := NewState(cfg, 1, 0)
			run := func(pos int) {
				args := []any{tensors.FromValue([][]int32{{tokens[pos%len(tokens)]}}), int32(pos)}
				for _, s := range state {
					args = append(args, s)
				}
				outs := step.MustExec(args...)
				outs[0].FinalizeAll()
				state = outs[1:]
			}
			for pos := 0; pos < context_; pos++ {
				run(pos)
			}
			pos := context_
			cpu := timeLoop(b, func() {
				run(pos)
				pos++
			})
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/token")
			b.ReportMetric(cpu*1e3, "cpu-ms/token")
		})
	}
}
