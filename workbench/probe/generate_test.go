package probe

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/wbtest"
)

const tolStep = 1e-12 // Step against Forward, float64: the running sum and the causal-mean matmul round differently

// requireStepCache checks that a generation cache equals a Run cache over all positions: [B, T, …] probes
// exactly in layout, the "*.pattern" probes [1, 1, T, S] on their first T keys (and 0 beyond).
func requireStepCache(t *testing.T, run, gen *Cache) {
	t.Helper()
	if !slices.Equal(run.Names, gen.Names) {
		t.Fatalf("Generate cached %v, Run %v", gen.Names, run.Names)
	}
	for _, name := range run.Names {
		want, wd := flat(t, run, name)
		got, gd := flat(t, gen, name)
		if len(wd) == 4 { // pattern [1, 1, T, S]
			T, S := wd[2], gd[3]
			if gd[2] != T || S < T {
				t.Fatalf("%s: Generate dims %v, Run dims %v", name, gd, wd)
			}
			for q := 0; q < T; q++ {
				wbtest.RequireClose(t, fmt.Sprintf("%s row %d", name, q), want[q*T:(q+1)*T], got[q*S:q*S+T], tolStep)
				wbtest.RequireClose(t, fmt.Sprintf("%s row %d beyond T", name, q), make([]float64, S-T), got[q*S+T:(q+1)*S], 0)
			}
			continue
		}
		if !slices.Equal(wd, gd) {
			t.Fatalf("%s: Generate dims %v, Run dims %v", name, gd, wd)
		}
		wbtest.RequireClose(t, name, want, got, tolStep)
	}
	wbtest.RequireClose(t, "output", wbtest.Flat64(run.Output), wbtest.Flat64(gen.Output), tolStep)
}

// Generate feeds the prompt and its greedy picks through Step: the tokens are the argmax of Run's logits, and the
// per-step cache concatenated over positions equals Run's cache on the generated tokens; the Step graph is built
// once.
func TestGenerate_CacheMatchesRun(t *testing.T) {
	m := newTestModel(t, testModel, 11)
	keep := Match("block_*.protot.pi", "block_01.resid_post", "*.pattern", "logits")
	r := mustRunner(t, m, keep)
	prompt := []int32{3, 1, 4}
	const n = 4
	tokens, gen, err := r.Generate(prompt, n, nil)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if len(tokens) != len(prompt)+n || !slices.Equal(tokens[:len(prompt)], prompt) {
		t.Fatalf("tokens %v: want the prompt %v and %d more", tokens, prompt, n)
	}
	if r.builds != 1 {
		t.Fatalf("%d graph builds for %d steps, want 1", r.builds, len(tokens))
	}
	run := mustRun(t, r, tensors.FromValue([][]int32{tokens}))
	requireStepCache(t, run, gen)
	logits, _ := flat(t, run, "logits")
	V := testModel.V
	for pos := len(prompt) - 1; pos < len(tokens)-1; pos++ {
		row := make([]float32, V)
		for i := range row {
			row[i] = float32(logits[pos*V+i])
		}
		if want := Greedy(row); tokens[pos+1] != want {
			t.Fatalf("token %d = %d, want the argmax of Run's logits at %d: %d", pos+1, tokens[pos+1], pos, want)
		}
	}
}

// Patches during generation act at their positions like Run's on the same tokens; a value with a time axis of T
// gives each step its own position. pick sees every step's logits.
func TestGenerate_PatchesMatchRun(t *testing.T) {
	m := newTestModel(t, testModel, 12)
	r := mustRunner(t, m, Match("block_00.resid_post", "block_01.protot.pi", "*.pattern"))
	prompt := []int32{2, 5}
	const n = 3
	T := len(prompt) + n
	fixed := func(logits []float32) int32 { return int32(len(logits)-1) - 2 } // ignores the logits
	D := testModel.D
	perPos := wbtest.Tensor64(wbtest.Normal(wbtest.RNG(3), T*D, 1), 1, T, D)
	same := wbtest.Tensor64(wbtest.Normal(wbtest.RNG(4), D, 1), 1, 1, D)
	for _, c := range []struct {
		name    string
		gen     Patch
		runWith Patch
	}{
		{"per-position replace", Patch{Name: "block_00.resid_post", Value: perPos, Positions: []int{1, 3}},
			Patch{Name: "block_00.resid_post", Value: perPos, Positions: []int{1, 3}}},
		{"same value added everywhere", Patch{Name: "block_00.resid_post", Value: same, Add: true},
			Patch{Name: "block_00.resid_post", Value: broadcastT(t, same, T), Add: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tokens, gen, err := r.Generate(prompt, n, fixed, c.gen)
			if err != nil {
				t.Fatalf("%+v", err)
			}
			if want := []int32{2, 5, 4, 4, 4}; !slices.Equal(tokens, want) {
				t.Fatalf("tokens %v, want %v", tokens, want)
			}
			run := mustRun(t, r, tensors.FromValue([][]int32{tokens}), c.runWith)
			requireStepCache(t, run, gen)
			plain := mustRun(t, r, tensors.FromValue([][]int32{tokens}))
			if wbtest.MaxAbsDiff(wbtest.Flat64(plain.Output), wbtest.Flat64(gen.Output)) < 1e-6 {
				t.Fatal("the patch did not change the generation's outputs")
			}
		})
	}
	_, _, err := r.Generate(prompt, n, fixed, Patch{Name: "block_00.resid_post", Value: wbtest.Tensor64(make([]float64, 2*D), 1, 2, D)})
	requireErr(t, err, "want 1 or ≥ 5 positions")
	_, _, err = r.Generate(prompt, n, fixed, Patch{Name: "block_00.resid_pots", Value: same})
	requireErr(t, err, "no such probe", "block_00.resid_post")
	_, _, err = r.Generate(prompt, n, func([]float32) int32 { return 99 })
	requireErr(t, err, "pick returned token 99")
	_, _, err = r.Generate(nil, n, nil)
	requireErr(t, err, "prompt of 0 tokens")
}

// broadcastT repeats a [1, 1, D] float64 tensor T times along axis 1.
func broadcastT(t *testing.T, x *tensors.Tensor, T int) *tensors.Tensor {
	v := wbtest.Flat64(x)
	var out []float64
	for range T {
		out = append(out, v...)
	}
	return wbtest.Tensor64(out, 1, T, len(v))
}

// The host-side tensor plumbing of Generate keeps row-major order.
func TestConcatAndSliceAxis(t *testing.T) {
	a := wbtest.Tensor64([]float64{1, 2, 3, 4, 5, 6}, 2, 1, 3)
	b := wbtest.Tensor64([]float64{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, 2, 2, 3)
	c, err := concatAxis([]*tensors.Tensor{a, b}, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 2, 3, 7, 8, 9, 10, 11, 12, 4, 5, 6, 13, 14, 15, 16, 17, 18}
	wbtest.RequireClose(t, "concat", want, wbtest.Flat64(c), 0)
	if d := c.Shape().Dimensions; !slices.Equal(d, []int{2, 3, 3}) {
		t.Fatalf("concat dims %v", d)
	}
	s, err := sliceAxis(c, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	wbtest.RequireClose(t, "slice", []float64{10, 11, 12, 16, 17, 18}, wbtest.Flat64(s), 0)
	if _, err := concatAxis([]*tensors.Tensor{a, wbtest.Tensor64([]float64{1, 2}, 1, 1, 2)}, 1); err == nil {
		t.Fatal("concatAxis accepted mismatched shapes")
	}
}
