package probe

import (
	"testing"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/protolab/protolab/workbench/meter"
)

// BenchmarkRun measures the caching overhead of a Runner on a 4-block test model (V = 256, D = 64, R = 16) at
// B = 4, T = 64: a plain model.Exec forward pass, the Runner caching nothing, caching every block's π
// ("block_*.protot.pi", 4 × [4, 64, 16]) and caching all 21 probes. Besides wall time it reports the process CPU
// time per run (cpu-ms/op), which a busy machine distorts less.
func BenchmarkRun(b *testing.B) {
	m := tinyModel{V: 256, D: 64, R: 16, L: 4, S: 64}
	pm := newTestModel(b, m, 1)
	tokens := tokensOf(4, 64, m.V)
	b.Run("plain", func(b *testing.B) {
		exec := model.MustNewExec(pm.Backend, pm.Store, m.Forward)
		exec.MustExec(tokens)
		timed(b, func() { exec.MustExec(tokens) })
	})
	for _, c := range []struct {
		name string
		keep Filter
	}{{"runner_none", nil}, {"runner_pi", Match("block_*.protot.pi")}, {"runner_all", Match()}} {
		b.Run(c.name, func(b *testing.B) {
			r, err := NewRunner(pm, c.keep)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.Run(tokens); err != nil {
				b.Fatal(err)
			}
			timed(b, func() {
				if _, err := r.Run(tokens); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// timed runs fn b.N times and reports the CPU time per run.
func timed(b *testing.B, fn func()) {
	b.ResetTimer()
	start := meter.CPUSeconds()
	for range b.N {
		fn()
	}
	b.StopTimer()
	if cpu := meter.CPUSeconds() - start; cpu > 0 {
		b.ReportMetric(1e3*cpu/float64(b.N), "cpu-ms/op")
	}
}
