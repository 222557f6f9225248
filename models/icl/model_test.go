package icl

import (
	"math"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// trainOnTree trains model m for steps steps (tinyTrain) on contexts d of a depth-3 tree, seed 1, validating on val
// (nil: no validation), and returns it with its prior.
func trainOnTree(t *testing.T, m linattn.Config, d Data, steps int, val *Batch) (*Model, prior.Tree) {
	t.Helper()
	tree := prior.Tree{Depth: 3, Alpha: 0.6}
	model, err := Train(wbtest.Backend(t), Config{Model: m, Train: tinyTrain(steps), Data: d, Prior: tree, Seed: 1},
		nil, val)
	if err != nil {
		t.Fatal(err)
	}
	return model, tree
}

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
	d := Data{Tokens: 8, LabelNoise: 0.1, Batch: 4}
	m := linattn.Config{Kind: linattn.KindA, Measurements: 1, Hidden: 5, ReadoutHidden: 6,
		Activation: linattn.ReLU, InitScale: 1}
	small, err := Train(backend, Config{Model: m, Train: tinyTrain(3), Data: d, Prior: tree, Seed: 1}, nil, nil)
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

// TestTraining_PlateauStatistic checks the plateau criterion on a hand-made validation curve: the point nearest to
// (1 − tail)·steps is the reference, and the improvement is relative to the final value.
func TestTraining_PlateauStatistic(t *testing.T) {
	tr := &Model{History: &fit.History{Evals: []fit.EvalMetrics{{Step: 300, Loss: 0.5}, {Step: 600, Loss: 0.3},
		{Step: 900, Loss: 0.22}, {Step: 1000, Loss: 0.2}}}}
	r := tr.Record(1000, 16, 0.2) // (1 − 0.2)·1000 = 800: nearest point 900
	if r.From != 900 || math.Abs(r.Improvement-(0.22-0.2)/0.2) > 1e-12 || len(r.ValMSE) != 4 {
		t.Errorf("record = %+v, want from 900 and improvement 0.1", r)
	}
	if r := (&Model{History: &fit.History{}}).Record(10, 1, 0.2); !math.IsNaN(r.Improvement) {
		t.Errorf("no validation curve: improvement %g, want NaN", r.Improvement)
	}
}
