package store

import (
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/norm"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

func TestName_SplitName(t *testing.T) {
	cases := []struct{ scope, name, key string }{
		{"/block_00/ffn/up", "weights", "block_00.ffn.up.weights"},
		{"/", "x", "x"},
		{"/", "#rngState", "#rngState"},
		{"/embed", "embeddings", "embed.embeddings"},
	}
	for _, c := range cases {
		key, err := Name(c.scope, c.name)
		if err != nil || key != c.key {
			t.Errorf("Name(%q, %q) = %q, %v; want %q", c.scope, c.name, key, err, c.key)
		}
		scope, name, err := SplitName(c.key)
		if err != nil || scope != c.scope || name != c.name {
			t.Errorf("SplitName(%q) = %q, %q, %v; want %q, %q", c.key, scope, name, err, c.scope, c.name)
		}
	}
	for _, bad := range [][2]string{{"/a.b", "w"}, {"/a", "w.x"}, {"/a", ""}, {"a", "w"}, {"/a//b", "w"}} {
		if _, err := Name(bad[0], bad[1]); err == nil {
			t.Errorf("Name(%q, %q) succeeded, want an error", bad[0], bad[1])
		}
	}
	for _, bad := range []string{"", "a..b", ".a", "a.", "a/b"} {
		if _, _, err := SplitName(bad); err == nil {
			t.Errorf("SplitName(%q) succeeded, want an error", bad)
		}
	}
}

// tinyModel: x [2, 3] → Dense(4) → RMSNorm → Dense(2) → [2, 2], under scopes "block_00/ffn/up", "block_00/norm",
// "head".
func tinyModel(scope *model.Scope, x *Node) *Node {
	block := scope.At("block_00")
	h := layers.Dense(block.At("ffn").At("up"), x, true, 4)
	h = norm.RMSNorm(block.At("norm"), h).Done()
	return layers.Dense(scope.At("head"), h, false, 2)
}

func runTiny(t *testing.T, s *model.Store, x *tensors.Tensor) []float64 {
	t.Helper()
	out, err := model.MustNewExec(wbtest.Backend(t), s, tinyModel).Call(x)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	return wbtest.Flat64(out[0])
}

func TestExportImportContext(t *testing.T) {
	x := wbtest.Tensor64(wbtest.Normal(wbtest.RNG(1), 6, 1), 2, 3)
	vars := seededStore(3)
	want := runTiny(t, vars, x)
	vars.VariableWithValue("/optimizer/step", int64(5)).SetTrainable(false)
	vars.VariableWithValue("/stats/mean", []float64{0.5, -1}).SetTrainable(false) // float, not trained

	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := ExportContext(vars, path, nil, map[string]string{"note": "tiny"}); err != nil {
		t.Fatalf("%+v", err)
	}
	hdr, meta, err := ReadHeader(path)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	var names []string
	for n := range hdr {
		names = append(names, n)
	}
	sort.Strings(names)
	wantNames := []string{"#rngState", "block_00.ffn.up.dense.biases", "block_00.ffn.up.dense.weights",
		"block_00.norm.rms_norm.scale", "head.dense.weights", "optimizer.step", "stats.mean"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("tensor names = %q, want %q", names, wantNames)
	}
	if got := hdr["block_00.ffn.up.dense.weights"].Dimensions; !reflect.DeepEqual(got, []int{3, 4}) {
		t.Errorf("Dense weights stored as %v, want [in, out] = [3 4]", got)
	}
	if meta["note"] != "tiny" || meta[MetaNonTrainable] != `["#rngState","optimizer.step","stats.mean"]` {
		t.Errorf("metadata = %v", meta)
	}

	// A fresh store with a different seed: after the import the model computes the same output.
	fresh := seededStore(99)
	if _, err := ImportContext(fresh, path); err != nil {
		t.Fatalf("%+v", err)
	}
	for _, key := range wantNames {
		scope, name, _ := SplitName(key)
		v := fresh.GetVariable(model.JoinPath(scope, name))
		if v == nil {
			t.Fatalf("variable %s/%s not imported", scope, name)
		}
		wantTrainable := !strings.Contains(meta[MetaNonTrainable], `"`+key+`"`)
		if v.Trainable != wantTrainable {
			t.Errorf("%s: Trainable = %v, want %v", key, v.Trainable, wantTrainable)
		}
	}
	got := runTiny(t, fresh, x)
	wbtest.RequireClose(t, "output after import", want, got, 0)

	// Trainable filter: only the model weights.
	path2 := filepath.Join(t.TempDir(), "weights.safetensors")
	if err := ExportContext(vars, path2, Trainable, nil); err != nil {
		t.Fatalf("%+v", err)
	}
	hdr2, meta2, err := ReadHeader(path2)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if len(hdr2) != 4 || meta2[MetaNonTrainable] != "[]" {
		t.Errorf("Trainable export: %d tensors, metadata %v; want 4 and []", len(hdr2), meta2)
	}
}

func TestImportContext_ShapeMismatchChangesNothing(t *testing.T) {
	dir := t.TempDir()
	src := map[string]*tensors.Tensor{
		"a.w": wbtest.Tensor64([]float64{1, 2, 3}, 3),
		"b.w": wbtest.Tensor64([]float64{1, 2}, 2),
	}
	path := filepath.Join(dir, "m.safetensors")
	if err := Save(path, src, nil); err != nil {
		t.Fatalf("%+v", err)
	}
	vars := model.NewStore()
	a := vars.RootScope().At("a").VariableWithValue("w", []float64{9, 9, 9})
	vars.RootScope().At("b").VariableWithValue("w", []float64{9, 9, 9}) // stored as [2]
	_, err := ImportContext(vars, path)
	if err == nil {
		t.Fatal("import with a shape mismatch succeeded")
	}
	for _, want := range []string{path, `"b.w"`, "(Float64)[2]", "(Float64)[3]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if got := wbtest.Flat64(a.MustValue()); !reflect.DeepEqual(got, []float64{9, 9, 9}) {
		t.Errorf("a/w changed to %v by a failed import", got)
	}
}

func TestExportContext_Errors(t *testing.T) {
	dir := t.TempDir()
	vars := model.NewStore()
	vars.RootScope().At("a").VariableWithShape("w", wbtest.Tensor64([]float64{1}, 1).Shape()) // no value yet
	err := ExportContext(vars, filepath.Join(dir, "x.safetensors"), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "/a/w") || !strings.Contains(err.Error(), "no value") {
		t.Errorf("uninitialised variable: err = %v", err)
	}
	ctx2 := model.NewStore()
	ctx2.RootScope().At("a.b").VariableWithValue("w", 1.0)
	err = ExportContext(ctx2, filepath.Join(dir, "y.safetensors"), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "a.b") {
		t.Errorf("scope with '.': err = %v", err)
	}
	assertNoTempFiles(t, dir)
}

func TestImportContext_BadMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := Save(path, map[string]*tensors.Tensor{"w": tensors.FromScalar(1.0)},
		map[string]string{MetaNonTrainable: "not json"}); err != nil {
		t.Fatal(err)
	}
	_, err := ImportContext(model.NewStore(), path)
	if err == nil || !strings.Contains(err.Error(), MetaNonTrainable) {
		t.Errorf("err = %v", err)
	}
}

// seededStore is run.NewStore (store's tests cannot import run, which imports store): a store whose variable
// initialisers are seeded from seed.
func seededStore(seed int64) *model.Store {
	s := model.NewStore()
	s.SetParam(model.ParamInitialSeed, seed)
	if err := s.SetRNGStateFromSeed(seed); err != nil {
		panic(err)
	}
	return s
}
