package icl

import (
	"testing"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/workbench/stats"
)

// TestPatchKeys_LayerOneChangesNothing: the keys of model A's first layer depend on x alone, which target and donor
// share (PatchPairs), so patching layer 1 changes nothing, bit for bit, at every divergence level (spec §7); the
// matrices are [K][L] and the clean MSE is the unpatched target's.
func TestPatchKeys_LayerOneChangesNothing(t *testing.T) {
	d := Data{Tokens: 8, LabelNoise: 0.1, Batch: 8}
	m := linattn.Config{Kind: linattn.KindA, Measurements: 2, Hidden: 4, Activation: linattn.ReLU, InitScale: 1}
	model, tree := trainOnTree(t, m, d, 5, nil)
	var targets, donors []*Batch
	for j := 1; j <= tree.Depth; j++ {
		tg, dn := PatchPairs(tree, 12, d.Tokens, d.LabelNoise, j, 7)
		targets, donors = append(targets, tg), append(donors, dn)
	}
	p, err := model.PatchKeys(targets, donors)
	if err != nil {
		t.Fatal(err)
	}
	K := tree.Depth
	if len(p.Delta) != K || len(p.Delta[0]) != 2 || len(p.StdErr) != K || len(p.CleanMSE) != K {
		t.Fatalf("shapes: Delta %d×%d, StdErr %d, CleanMSE %d; want %d×2", len(p.Delta), len(p.Delta[0]),
			len(p.StdErr), len(p.CleanMSE), tree.Depth)
	}
	for j := range p.Delta {
		if p.Delta[j][0] != 0 || p.StdErr[j][0] != 0 {
			t.Errorf("j=%d: ΔMSE at layer 1 = %g ± %g, want exactly 0", j+1, p.Delta[j][0], p.StdErr[j][0])
		}
		clean, err := model.Evaluate(targets[j], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := stats.Mean(clean.SE); p.CleanMSE[j] != want {
			t.Errorf("j=%d: clean MSE %g, want %g", j+1, p.CleanMSE[j], want)
		}
	}
}
