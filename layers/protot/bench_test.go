package protot

import (
	"fmt"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

// BenchmarkMixer times the forward and backward pass of one ProtoT layer (layer 1: read query and convolution) at
// D=128, R=32, D_v=64, float32, 2,048 tokens per step, for the dense form (T=256 only: one T×T block per
// sequence is slow beyond) and chunks of Q = 16, 32, 64.
func BenchmarkMixer(b *testing.B) {
	for _, T := range []int{256, 1024} {
		for _, q := range []int{0, 16, 32, 64} { // 0: dense
			form, name := FormChunked, fmt.Sprintf("T=%d/Q=%d", T, q)
			if q == 0 {
				if T > 256 {
					continue
				}
				form, name, q = FormDense, fmt.Sprintf("T=%d/dense", T), 64
			}
			b.Run(name, func(b *testing.B) { benchMixer(b, form, q, T) })
		}
	}
}

// benchMixer times one forward and backward pass of a layer-1 mixer on 2,048 random tokens of width 128.
func benchMixer(b *testing.B, form string, q, T int) {
	const D, tokens = 128, 2048
	cfg := DefaultConfig()
	cfg.Form, cfg.ChunkSize = form, q
	B := tokens / T
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(1))
	exec := model.MustNewExec(wbtest.Backend(b), vars, func(scope *model.Scope, x *Node) []*Node {
		y, _ := Mixer(scope, cfg, 1, x)
		loss := ReduceAllSum(Square(y))
		return append([]*Node{loss}, scope.BuildTrainableVariablesGradientsGraph(loss)...)
	})
	x := tensors.FromFlatDataAndDimensions(make([]float32, B*T*D), B, T, D)
	tensors.MustMutableFlatData[float32](x, func(f []float32) {
		rng := wbtest.RNG(1)
		for i := range f {
			f[i] = float32(rng.NormFloat64())
		}
	})
	for _, t := range exec.MustExec(x) { // compile and initialise outside the timing
		t.FinalizeAll()
	}
	b.ResetTimer()
	cpu0 := processCPUSeconds()
	for i := 0; i < b.N; i++ {
		for _, t := range exec.MustExec(x) {
			t.FinalizeAll()
		}
	}
	reportTokenRates(b, tokens, processCPUSeconds()-cpu0)
}

// BenchmarkStep times one recurrent step of one ProtoT layer (layer 1: read query and convolution) at batch 1,
// D=128, R=32, D_v=64, float32.
func BenchmarkStep(b *testing.B) {
	const D = 128
	cfg := DefaultConfig()
	vars := model.NewStore()
	exec := model.MustNewExec(wbtest.Backend(b), vars, func(scope *model.Scope, in []*Node) []*Node {
		y, state, _ := Step(scope, cfg, 1, in[0], in[1], in[2:])
		return append([]*Node{y}, state...)
	})
	x := tensors.FromFlatDataAndDimensions(make([]float32, D), 1, 1, D)
	var state []any
	for _, s := range StateShapes(cfg, D, 1, 1, dtypes.Float32) {
		state = append(state, tensors.FromShape(s))
	}
	run := func(pos int) {
		outs := exec.MustExec(append([]any{x, int32(pos)}, state...)...)
		outs[0].FinalizeAll()
		for i := range state {
			state[i] = outs[1+i]
		}
	}
	run(0)
	b.ResetTimer()
	cpu0 := processCPUSeconds()
	for i := 0; i < b.N; i++ {
		run(i + 1)
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/token")
	b.ReportMetric((processCPUSeconds()-cpu0)*1e3/float64(b.N), "cpu-ms/token")
}

// reportTokenRates reports tokens/s (wall clock) and tokens/cpu-s (per core-second, less sensitive to other load
// on a shared machine) for b.N steps of `tokens` tokens that used cpu seconds of process CPU time.
func reportTokenRates(b *testing.B, tokens int, cpu float64) {
	n := float64(tokens) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "tokens/s")
	if cpu > 0 {
		b.ReportMetric(n/cpu, "tokens/cpu-s")
	}
}
