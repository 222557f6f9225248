//go:build unix

package attention

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

// The benchmark layer is the speed study's (experiments/speed Small): D = 64, 4 heads, float32, B·T = 4,096 tokens.
const benchD, benchTokens = 64, 4096

// BenchmarkMixer_ForwardBackward times one evaluation of a loss over Mixer's output and its gradients with respect
// to x and the four projections, for the full and the chunked form at several T (B = 4096/T, at least 1) and, for
// the chunked form, several block lengths. It reports tokens/s and tokens per CPU second; peak memory is the
// process's, so measure it one sub-benchmark per process, e.g.
//
//	go test -tags noxla -c -o /tmp/att.test ./layers/attention
//	/usr/bin/time -v /tmp/att.test -test.run '^$' -test.bench 'Mixer_ForwardBackward/chunked_C=256/T=4096$'
//
// The full form at T = 8192 keeps several [T, T] tensors per head for the backward pass, more than a 24 GB machine
// has, and is left out.
func BenchmarkMixer_ForwardBackward(b *testing.B) {
	type form struct {
		name  string
		kind  string
		block int
	}
	forms := []form{{"full", KindFull, 0}}
	for _, c := range []int{64, 128, 256, 512} {
		forms = append(forms, form{fmt.Sprintf("chunked_C=%d", c), KindChunked, c})
	}
	for _, f := range forms {
		for _, T := range []int{256, 512, 1024, 2048, 4096, 8192} {
			if f.kind == KindFull && T > 4096 {
				continue
			}
			b.Run(fmt.Sprintf("%s/T=%d", f.name, T), func(b *testing.B) {
				cfg := DefaultConfig()
				cfg.RoPEBase = 10_000
				cfg.Kind, cfg.BlockSize = f.kind, f.block
				benchMixer(b, cfg, max(1, benchTokens/T), T)
			})
		}
	}
}

func benchMixer(b *testing.B, cfg Config, B, T int) {
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(1))
	exec := model.MustNewExec(wbtest.Backend(b), vars, func(scope *model.Scope, x *Node) []*Node {
		y := Mixer(scope, cfg, x)
		loss := ReduceAllSum(Mul(y, Sin(y))) // a cotangent that depends on y
		return append([]*Node{loss}, Gradient(loss, x)...)
	})
	x := tensors.FromShape(shapes.Make(dtypes.Float32, B, T, benchD))
	run := func() {
		for _, t := range exec.MustExec(x) {
			t.FinalizeAll()
		}
	}
	run() // compile and initialise outside the timing
	b.ResetTimer()
	start := cpuSeconds()
	for i := 0; i < b.N; i++ {
		run()
	}
	b.StopTimer()
	tokens := float64(B * T * b.N)
	b.ReportMetric(tokens/b.Elapsed().Seconds(), "tokens/s")
	if cpu := cpuSeconds() - start; cpu > 0 {
		b.ReportMetric(tokens/cpu, "tokens/cpu-s")
	}
}

// cpuSeconds returns the user+system CPU time this process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
