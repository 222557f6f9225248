package fvec

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// tinyTrain returns a short training configuration.
func tinyTrain(steps int) fit.Config {
	tc := fit.DefaultConfig()
	tc.Steps, tc.WarmupSteps, tc.WeightDecay, tc.LR, tc.LogEvery = steps, 1, 0, 1e-2, 1
	return tc
}

// TestGrow_CopiesTrainedVariables checks the warm start of Sweep.Grow: growing model A from 1 to 2 layers keeps
// layer 1's key MLP and the readout's first row, and gives the new layer and row fresh (non-zero) weights.
func TestGrow_CopiesTrainedVariables(t *testing.T) {
	backend, err := run.Backend()
	if err != nil {
		t.Fatal(err)
	}
	tree := prior.Tree{Depth: 3, Alpha: 0.6}
	d := DataConfig{Tokens: 8, LabelNoise: 0.1, Batch: 4}
	m := linattn.Config{Kind: linattn.KindA, Measurements: 1, Hidden: 5, ReadoutHidden: 6,
		Activation: linattn.ReLU, InitScale: 1}
	small, err := train(backend, m, tinyTrain(3), tree, d, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Measurements = 2
	vars := run.NewStore(2)
	forward := func(scope *model.Scope, x, y *graph.Node) linattn.Output { return linattn.Model(scope, m, x, y, nil) }
	if err := grow(backend, vars, forward, small, tree.Dim(), d.Tokens); err != nil {
		t.Fatal(err)
	}
	value := func(s *model.Store, scope, name string) []float32 {
		v := s.GetVariable(model.JoinPath(scope, name))
		if v == nil {
			t.Fatalf("no variable %s/%s", scope, name)
		}
		return tensors.MustCopyFlatData[float32](v.MustValue())
	}
	l1 := "/" + linattn.Scope + "/" + linattn.LayerScope(1) + "/" + linattn.ScopeKey
	if !slices.Equal(value(vars, l1, linattn.VarWX), value(small.vars, l1, linattn.VarWX)) {
		t.Error("layer 1's w_x was not copied")
	}
	ro := "/" + linattn.Scope + "/" + linattn.ScopeReadout
	oldW1, newW1 := value(small.vars, ro, linattn.VarW1), value(vars, ro, linattn.VarW1) // [1, H], [2, H]
	if !slices.Equal(newW1[:len(oldW1)], oldW1) {
		t.Error("the readout's first row was not copied")
	}
	if slices.Equal(newW1[len(oldW1):], make([]float32, len(oldW1))) {
		t.Error("the readout's new row is all zeros, want a fresh initialisation")
	}
	l2 := "/" + linattn.Scope + "/" + linattn.LayerScope(2) + "/" + linattn.ScopeKey
	if slices.Equal(value(vars, l2, linattn.VarWX), value(vars, l1, linattn.VarWX)) {
		t.Error("layer 2 copies layer 1")
	}
}

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
				for i := 0; i < b.N; i++ {
					tr, err := train(backend, m, tinyTrain(warm+20), d.Tree, d, 1, nil, nil)
					if err != nil {
						b.Fatal(err)
					}
					st := tr.hist.Steps
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
