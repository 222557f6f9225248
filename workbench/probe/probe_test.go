package probe

import (
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/wbtest"
)

const testB, testT = 2, 5

func mustRunner(t *testing.T, m Model, keep Filter, opts ...Option) *Runner {
	t.Helper()
	r, err := NewRunner(m, keep, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustRun(t *testing.T, r *Runner, tokens *tensors.Tensor, patches ...Patch) *Cache {
	t.Helper()
	c, err := r.Run(tokens, patches...)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	return c
}

func flat(t *testing.T, c *Cache, name string) ([]float64, []int) {
	t.Helper()
	v, d, err := c.Float64(name)
	if err != nil {
		t.Fatal(err)
	}
	return v, d
}

// requireErr fails unless err is non-nil and its message contains every want.
func requireErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not contain %q", err, w)
		}
	}
}

// positionsOf returns the values of a [B, T, …] tensor at positions t ∈ keep (or not, with invert).
func atPositions(x []float64, dims []int, keep func(t int) bool) []float64 {
	B, T := dims[0], dims[1]
	inner := len(x) / (B * T)
	var out []float64
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			if keep(t) {
				out = append(out, x[(b*T+t)*inner:(b*T+t+1)*inner]...)
			}
		}
	}
	return out
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		patterns []string
		name     string
		want     bool
	}{
		{nil, "anything.at.all", true},
		{[]string{"block_*.protot.pi"}, "block_03.protot.pi", true},
		{[]string{"block_*.protot.pi"}, "block_03.protot.rho", false},
		{[]string{"*.pi"}, "block_03.protot.pi", true}, // '*' crosses dots
		{[]string{"block_0[0-1].*"}, "block_01.resid_post", true},
		{[]string{"block_0[0-1].*"}, "block_02.resid_post", false},
		{[]string{"logits", "final_norm"}, "final_norm", true},
	} {
		if got := Match(c.patterns...)(c.name); got != c.want {
			t.Errorf("Match(%q)(%q) = %v, want %v", c.patterns, c.name, got, c.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Match accepted the malformed pattern \"block_[\"")
		}
	}()
	Match("block_[")
}

// Run caches exactly the filtered probes, in emission order, and leaves the output bit-identical to a plain
// forward pass; the cached values are the model's (block_01's input is block_00's output, logits is the output).
func TestRun_CachesFilteredProbes(t *testing.T) {
	m := newTestModel(t, testModel, 1)
	tokens := tokensOf(testB, testT, testModel.V)
	names, err := mustRunner(t, m, nil).Names(tokens)
	if err != nil {
		t.Fatal(err)
	}
	if want := testModel.allNames(); !slices.Equal(names, want) {
		t.Fatalf("Names = %v, want %v", names, want)
	}
	r := mustRunner(t, m, Match("block_*.resid_*", "logits"))
	c := mustRun(t, r, tokens)
	want := []string{"block_00.resid_pre", "block_00.resid_post", "block_01.resid_pre", "block_01.resid_post", "logits"}
	if !slices.Equal(c.Names, want) || len(c.Acts) != len(want) {
		t.Fatalf("cached %v (%d tensors), want %v", c.Names, len(c.Acts), want)
	}
	plain := plainForward(t, m, tokens)
	wbtest.RequireClose(t, "output vs plain forward", plain, wbtest.Flat64(c.Output), 0)
	logits, dims := flat(t, c, "logits")
	wbtest.RequireClose(t, "cached logits", plain, logits, 0)
	if !slices.Equal(dims, []int{testB, testT, testModel.V}) {
		t.Fatalf("logits dims %v", dims)
	}
	post, _ := flat(t, c, "block_00.resid_post")
	pre, _ := flat(t, c, "block_01.resid_pre")
	wbtest.RequireClose(t, "block_01 input", post, pre, 0)
	if _, _, err := c.Float64("block_00.resid_pots"); err == nil || !strings.Contains(err.Error(), "block_00.resid_post") {
		t.Fatalf("Float64 of a missing name: %v, want an error naming the nearest probe", err)
	}
}

// One graph per shape and patch layout: runs that change only patch values or positions reuse it, and the values
// are parameters (each run sees its own).
func TestRun_CompilesOncePerShapeAndLayout(t *testing.T) {
	m := newTestModel(t, testModel, 2)
	r := mustRunner(t, m, Match("block_01.resid_pre"))
	tokens := tokensOf(testB, testT, testModel.V)
	mustRun(t, r, tokens)
	mustRun(t, r, tokens)
	if r.builds != 1 {
		t.Fatalf("%d graph builds after two identical runs, want 1", r.builds)
	}
	dims := []int{testB, testT, testModel.D}
	for i, pos := range [][]int{{0}, {1, 3}, {4}} {
		v := wbtest.Tensor64(wbtest.Normal(wbtest.RNG(uint64(i)), testB*testT*testModel.D, 1), dims...)
		c := mustRun(t, r, tokens, Patch{Name: "block_00.resid_post", Value: v, Positions: pos})
		got, _ := flat(t, c, "block_01.resid_pre")
		in := func(t int) bool { return slices.Contains(pos, t) }
		wbtest.RequireClose(t, "patched positions", atPositions(wbtest.Flat64(v), dims, in), atPositions(got, dims, in), 0)
	}
	if r.builds != 2 {
		t.Fatalf("%d graph builds, want 2 (plain, then one patch layout)", r.builds)
	}
	mustRun(t, r, tokensOf(testB, testT+2, testModel.V))
	if r.builds != 3 {
		t.Fatalf("%d graph builds after a new token shape, want 3", r.builds)
	}
}

// Replace and Add at chosen positions: the patched positions hold the new values, the others are bit-identical,
// the model continues from the patch (causally: earlier outputs unchanged, later ones changed), and a [1, …] value
// applies to every row.
func TestRun_PatchReplaceAndAddAtPositions(t *testing.T) {
	m := newTestModel(t, testModel, 3)
	r := mustRunner(t, m, Match("block_00.resid_post", "block_01.resid_pre"))
	tokens := tokensOf(testB, testT, testModel.V)
	base := mustRun(t, r, tokens)
	basePost, dims := flat(t, base, "block_00.resid_post")
	baseOut := wbtest.Flat64(base.Output)
	const at = 2
	in, out := func(t int) bool { return t == at }, func(t int) bool { return t != at }
	before, after := func(t int) bool { return t < at }, func(t int) bool { return t >= at }
	delta := wbtest.Normal(wbtest.RNG(7), testT*testModel.D, 1)
	one := wbtest.Tensor64(delta, 1, testT, testModel.D) // broadcast over the batch

	for _, add := range []bool{false, true} {
		c := mustRun(t, r, tokens, Patch{Name: "block_00.resid_post", Value: one, Add: add, Positions: []int{at}})
		post, _ := flat(t, c, "block_00.resid_post")
		next, _ := flat(t, c, "block_01.resid_pre")
		wbtest.RequireClose(t, "continues from the patch", post, next, 0)
		wbtest.RequireClose(t, "unpatched positions", atPositions(basePost, dims, out), atPositions(post, dims, out), 0)
		want := make([]float64, 0, testB*testModel.D)
		for b := 0; b < testB; b++ {
			for d := 0; d < testModel.D; d++ {
				v := delta[at*testModel.D+d]
				if add {
					v += basePost[(b*testT+at)*testModel.D+d]
				}
				want = append(want, v)
			}
		}
		wbtest.RequireClose(t, "patched position", want, atPositions(post, dims, in), 1e-15)
		odims := []int{testB, testT, testModel.V}
		got := wbtest.Flat64(c.Output)
		wbtest.RequireClose(t, "outputs before the patch", atPositions(baseOut, odims, before), atPositions(got, odims, before), 0)
		if wbtest.MaxAbsDiff(atPositions(baseOut, odims, after), atPositions(got, odims, after)) < 1e-6 {
			t.Fatalf("add=%v: outputs from position %d on did not change", add, at)
		}
	}
}

// Replacing probes by their own cached values (all positions, or some) reproduces the run bit for bit.
func TestRun_PatchWithOwnValueIsIdentity(t *testing.T) {
	m := newTestModel(t, testModel, 4)
	tokens := tokensOf(testB, testT, testModel.V)
	base := mustRun(t, mustRunner(t, m, Match()), tokens)
	r := mustRunner(t, m, nil)
	for _, name := range []string{"block_00.resid_pre", "block_00.protot.mix_out", "block_01.resid_post", "logits"} {
		for _, pos := range [][]int{nil, {0, 3}} {
			c := mustRun(t, r, tokens, Patch{Name: name, Value: base.Acts[name], Positions: pos})
			if d := wbtest.MaxAbsDiff(wbtest.Flat64(base.Output), wbtest.Flat64(c.Output)); d != 0 {
				t.Fatalf("replacing %s (positions %v) with its own value changed the output by %g", name, pos, d)
			}
		}
	}
}

// StopAfter ends the model at the probe: the output is its value and later probes are not cached.
func TestRun_StopAfter(t *testing.T) {
	m := newTestModel(t, testModel, 5)
	tokens := tokensOf(testB, testT, testModel.V)
	full := mustRun(t, mustRunner(t, m, Match()), tokens)
	r := mustRunner(t, m, Match(), StopAfter("block_00.resid_post"))
	c := mustRun(t, r, tokens)
	want := []string{"block_00.resid_pre", "block_00.protot.pi", "block_00.attn.pattern", "block_00.protot.mix_out",
		"block_00.resid_post"}
	if !slices.Equal(c.Names, want) {
		t.Fatalf("cached %v, want %v", c.Names, want)
	}
	wbtest.RequireClose(t, "output", wbtest.Flat64(full.Acts["block_00.resid_post"]), wbtest.Flat64(c.Output), 0)
	// A patch before the stop applies; one after it is an error.
	zero := tensors.FromShape(full.Acts["block_00.resid_pre"].Shape())
	c = mustRun(t, r, tokens, Patch{Name: "block_00.resid_pre", Value: zero})
	if v := wbtest.Flat64(c.Acts["block_00.resid_pre"]); wbtest.MaxAbsDiff(v, make([]float64, len(v))) != 0 {
		t.Fatal("the patch before the stop did not apply")
	}
	_, err := r.Run(tokens, Patch{Name: "block_01.resid_pre", Value: zero})
	requireErr(t, err, `"block_01.resid_pre"`, "not reached before StopAfter")
	_, err = mustRunner(t, m, nil, StopAfter("block_09.resid_post")).Run(tokens)
	requireErr(t, err, `StopAfter "block_09.resid_post"`, "block_00.resid_post")
}

// Errors name the problem: unknown probes (with the nearest names), shapes, dtypes, positions, duplicates,
// observe-only probes, and a filter that matches nothing.
func TestRun_Errors(t *testing.T) {
	m := newTestModel(t, testModel, 6)
	r := mustRunner(t, m, Match("block_00.resid_post"))
	tokens := tokensOf(testB, testT, testModel.V)
	good := tensors.FromShape(shapes.Make(dtypes.Float64, testB, testT, testModel.D))
	for _, c := range []struct {
		name  string
		patch Patch
		want  []string
	}{
		{"unknown", Patch{Name: "block_00.resid_pots", Value: good}, []string{`"block_00.resid_pots": no such probe`, "nearest: block_00.resid_post"}},
		{"shape", Patch{Name: "block_00.resid_post", Value: tensors.FromShape(shapes.Make(dtypes.Float64, testB, testT, 3))}, []string{"value shape", "[2, 5, 3]", "[2, 5, 4]"}},
		{"batch", Patch{Name: "block_00.resid_post", Value: tensors.FromShape(shapes.Make(dtypes.Float64, 3, testT, testModel.D))}, []string{"value shape"}},
		{"dtype", Patch{Name: "block_00.resid_post", Value: tensors.FromShape(shapes.Make(dtypes.Float32, testB, testT, testModel.D))}, []string{"Float32", "dtype"}},
		{"position", Patch{Name: "block_00.resid_post", Value: good, Positions: []int{testT}}, []string{"position 5 outside [0, 5)"}},
		{"observe-only", Patch{Name: "block_00.protot.pi", Value: tensors.FromShape(shapes.Make(dtypes.Float64, testB, testT, testModel.R))}, []string{"observe-only"}},
		{"no value", Patch{Name: "block_00.resid_post"}, []string{"no value"}},
		{"no name", Patch{Value: good}, []string{"no name"}},
	} {
		_, err := r.Run(tokens, c.patch)
		t.Logf("%s: %v", c.name, err)
		requireErr(t, err, c.want...)
	}
	_, err := r.Run(tokens, Patch{Name: "block_00.resid_post", Value: good}, Patch{Name: "block_00.resid_post", Value: good})
	requireErr(t, err, "two patches")
	_, err = mustRunner(t, m, Match("block_*.rho")).Run(tokens)
	requireErr(t, err, "the filter matches none of the 11 probes")
	_, err = r.Run(tensors.FromValue([][]float32{{1}}))
	requireErr(t, err, "want Int32 [B, T]")
	// The Runner still works after the errors.
	mustRun(t, r, tokens, Patch{Name: "block_00.resid_post", Value: good})
}

func TestNewRunner_Validates(t *testing.T) {
	m := newTestModel(t, testModel, 7)
	bad := m
	bad.Attach = nil
	if _, err := NewRunner(bad, nil); err == nil {
		t.Fatal("NewRunner accepted a Model without Attach")
	}
	bad = m
	bad.NewState = nil
	if _, err := NewRunner(bad, nil); err == nil {
		t.Fatal("NewRunner accepted Step without NewState")
	}
	bad.Step = nil
	r := mustRunner(t, bad, nil)
	if _, _, err := r.Generate([]int32{1}, 2, nil); err == nil {
		t.Fatal("Generate ran without Step")
	}
}
