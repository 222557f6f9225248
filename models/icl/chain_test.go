package icl

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/wbtest"
)

// tinyChain is a chain of model A at M = 1, 2 on a depth-3 tree, a few steps per model, grown, stored in dir.
func tinyChain(dir string, log *[]string) *Chain {
	tree := prior.Tree{Depth: 3, Alpha: 0.6}
	d := Data{Tokens: 8, LabelNoise: 0.1, Batch: 4}
	gen := func(b int, seed uint64) *Batch { return Generate(tree, b, d.Tokens, d.LabelNoise, seed, "eval") }
	c := &Chain{Prior: "tree", Row: "a", Index: 1, Seed: 2, Sampler: tree, Data: d, Grow: true, PlateauTail: 0.5,
		Sets: EvalSets{Val: gen(8, 3), Test: gen(16, 4), HeldOut: gen(16, 5)}, Dir: dir,
		Logf: func(format string, args ...any) { *log = append(*log, fmt.Sprintf(format, args...)) }}
	for _, m := range []int{1, 2} {
		mc := linattn.Config{Kind: linattn.KindA, Measurements: m, Hidden: 4, Activation: linattn.ReLU, InitScale: 1}
		tc := tinyTrain(4)
		tc.EvalEvery = 2
		c.Segments = append(c.Segments, Segment{Model: mc, Train: tc})
	}
	return c
}

// TestChain_StoresAndLoads: a chain run with a folder stores itself; a second Run loads it (one logged line,
// nothing trained) with the same scores, records and a last model that evaluates bit for bit alike; a folder without
// chain.json is retrained, and a chain.json of another chain is an error naming the folder to delete.
func TestChain_StoresAndLoads(t *testing.T) {
	backend := wbtest.Backend(t)
	dir := filepath.Join(t.TempDir(), "tree-a-seed1")
	var log []string
	first, err := tinyChain(dir, &log).Run(backend)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || len(first.Test) != 2 || first.Last.Config.Measurements != 2 {
		t.Fatalf("trained chain: log %q, %d scores, last M=%d; want two models", log, len(first.Test),
			first.Last.Config.Measurements)
	}
	log = nil
	again, err := tinyChain(dir, &log).Run(backend)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || !strings.Contains(log[0], "tree prior, a, seed 1: loaded from progress") {
		t.Errorf("second run logged %q, want one line loading the chain", log)
	}
	if again.Test[1].MSE != first.Test[1].MSE || !slices.Equal(again.Val, first.Val) ||
		again.Training[0].From != first.Training[0].From || again.Last.Seconds != first.Last.Seconds {
		t.Errorf("loaded chain %+v differs from the stored one %+v", again, first)
	}
	b := tinyChain("", &log).Sets.Test
	x, err := first.Last.Evaluate(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := again.Last.Evaluate(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.SE, y.SE) || !slices.Equal(x.Keys, y.Keys) {
		t.Error("the loaded model evaluates differently from the trained one")
	}

	if err := os.Remove(filepath.Join(dir, ChainFile)); err != nil {
		t.Fatal(err)
	}
	log = nil
	if _, err := tinyChain(dir, &log).Run(backend); err != nil {
		t.Fatal(err)
	}
	if len(log) != 3 || !strings.Contains(log[0], "has no chain.json") {
		t.Errorf("a folder without chain.json: log %q, want a line saying so and two models trained", log)
	}
	other := tinyChain(dir, &log)
	other.Row = "b"
	if _, err := other.Run(backend); err == nil || !strings.Contains(err.Error(), "delete the folder "+dir) {
		t.Errorf("another chain's chain.json: err = %v, want one naming the folder to delete", err)
	}
}
