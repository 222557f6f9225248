package fvec

import (
	"fmt"
	"testing"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/models/icl"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// BenchmarkTrainStep measures one training step (forward, backward, AdamW) of each model at the Small preset's
// sizes on the tree prior, M = 4, with independent tokens per context (16 contexts) and with shared tokens
// (Data.SharedTokens; 16 contexts as Quick, 32 as Small, 64); data generation overlaps.
func BenchmarkTrainStep(b *testing.B) {
	backend, err := run.Backend()
	if err != nil {
		b.Fatal(err)
	}
	cfg := Small()
	for _, v := range []struct {
		shared bool
		batch  int
	}{{false, 16}, {true, 16}, {true, 32}, {true, 64}} {
		for _, kind := range []string{linattn.KindA, linattn.KindAPrime, linattn.KindB, linattn.KindC} {
			d := cfg.Data
			d.SharedTokens, d.Batch = v.shared, v.batch
			b.Run(fmt.Sprintf("%s/shared=%v/batch=%d", kind, v.shared, d.Batch), func(b *testing.B) {
				m := cfg.Model
				m.Kind, m.Measurements = kind, 4
				const warm = 3
				tc := fit.DefaultConfig()
				tc.Steps, tc.WarmupSteps, tc.WeightDecay, tc.LR, tc.LogEvery = warm+20, 1, 0, 1e-2, 1
				for i := 0; i < b.N; i++ {
					tr, err := icl.Train(backend, icl.Config{Model: m, Train: tc, Data: d.Data, Prior: d.Tree, Seed: 1},
						nil, nil)
					if err != nil {
						b.Fatal(err)
					}
					st := tr.History.Steps
					// Elapsed after the warm-up steps (compilation) to the end, per step.
					var t0 float64
					for _, s := range st {
						if s.Step == warm {
							t0 = s.Elapsed
						}
					}
					b.ReportMetric((st[len(st)-1].Elapsed-t0)/20*1000, "ms/step")
				}
			})
		}
	}
}
