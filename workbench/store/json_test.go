package store

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// provenance has the kinds of fields run.Provenance has (store's tests cannot import run, which imports store).
type provenance struct {
	Config    any                `json:"config"`
	Overrides string             `json:"overrides"`
	Seed      uint64             `json:"seed"`
	Start     time.Time          `json:"start"`
	Timings   map[string]float64 `json:"timings_s"`
}

type result struct {
	Provenance *provenance `json:"provenance"`
	Losses     []float64   `json:"losses"`
	Name       string      `json:"name"`
}

func TestSaveJSON_LoadJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	prov := &provenance{Config: map[string]any{"steps": 3.0}, Overrides: "train.steps=3", Seed: 7, Start: time.Now(),
		Timings: map[string]float64{"train": 1.5}}
	in := result{Provenance: prov, Losses: []float64{2.5, 1.25, 0.125}, Name: "tiny"}
	if err := SaveJSON(path, in); err != nil {
		t.Fatalf("%+v", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "{\n  \"provenance\": {") || !strings.HasSuffix(string(raw), "}\n") {
		t.Errorf("not indented JSON with a trailing newline:\n%s", raw)
	}
	var out result
	if err := LoadJSON(path, &out); err != nil {
		t.Fatalf("%+v", err)
	}
	if !reflect.DeepEqual(out.Losses, in.Losses) || out.Name != in.Name {
		t.Errorf("round trip: got %+v", out)
	}
	p := out.Provenance
	if p.Seed != 7 || p.Overrides != "train.steps=3" || p.Timings["train"] != 1.5 ||
		!p.Start.Equal(prov.Start) || !reflect.DeepEqual(p.Config, map[string]any{"steps": 3.0}) {
		t.Errorf("provenance round trip: got %+v, want %+v", p, prov)
	}
	// Overwriting replaces the file and leaves no temporary files.
	if err := SaveJSON(path, result{Name: "second"}); err != nil {
		t.Fatalf("%+v", err)
	}
	if err := LoadJSON(path, &out); err != nil || out.Name != "second" {
		t.Errorf("after overwrite: %+v, %v", out, err)
	}
	assertNoTempFiles(t, dir)
}

func TestLoadJSON_Errors(t *testing.T) {
	dir := t.TempDir()
	var v result
	missing := filepath.Join(dir, "missing.json")
	if err := LoadJSON(missing, &v); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: err = %v", err)
	}
	cases := map[string]struct{ content, want string }{
		"empty":     {"  \n", "empty"},
		"syntax":    {"{\n  \"name\": \"x\",\n  oops\n}", ":3:3: invalid character 'o'"},
		"type":      {"{\n  \"losses\": \"not a list\"}", ":2:24: json: cannot unmarshal string into Go struct field result.losses"},
		"truncated": {"{\n  \"name\": \"x\",\n  \"losses\": [1, 2", ":3:18: unexpected end of JSON input (truncated file)"},
		"cut after": {"{\"name\": \"x\"", "unexpected end of JSON input (truncated file)"},
		"null":      {"null\n", "file holds null, not a *store.result"},
		"zeros":     {"\x00\x00\x00\x00", ":1:1: invalid character '\\x00'"},
		"trailing":  {"{\"name\": \"x\"} {}", ":1:15: invalid character '{' after top-level value"},
	}
	for name, c := range cases {
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		err := LoadJSON(path, &v)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to name %s and mention %q", name, err, path, c.want)
		}
	}
	if err := SaveJSON(filepath.Join(dir, "f.json"), func() {}); err == nil {
		t.Errorf("SaveJSON of a func succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "f.json")); err == nil {
		t.Errorf("SaveJSON wrote a file despite the encoding error")
	}
}
