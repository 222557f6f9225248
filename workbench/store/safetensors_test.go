package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestSave_ByteLayout decodes a saved file by hand, following the format description rather than Load.
func TestSave_ByteLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.safetensors")
	in := map[string]*tensors.Tensor{
		"b": tensors.FromFlatDataAndDimensions([]float32{1.5, -2}, 2),
		"a": tensors.FromScalar(int64(-7)),
	}
	if err := Save(path, in, map[string]string{"k": "v"}); err != nil {
		t.Fatalf("%+v", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(raw[:8])
	if n%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", n)
	}
	header := raw[8 : 8+n]
	if header[0] != '{' {
		t.Fatalf("header starts with %q", header[0])
	}
	var h map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimRight(header, " "), &h); err != nil {
		t.Fatalf("header %q: %v", header, err)
	}
	wantEntries := map[string]string{
		"a":            `{"dtype":"I64","shape":[],"data_offsets":[0,8]}`,
		"b":            `{"dtype":"F32","shape":[2],"data_offsets":[8,16]}`,
		"__metadata__": `{"k":"v"}`,
	}
	if len(h) != len(wantEntries) {
		t.Fatalf("header has %d entries, want %d: %s", len(h), len(wantEntries), header)
	}
	for k, want := range wantEntries {
		if string(h[k]) != want {
			t.Errorf("header[%q] = %s, want %s", k, h[k], want)
		}
	}
	data := raw[8+n:]
	if len(data) != 16 {
		t.Fatalf("data buffer has %d bytes, want 16", len(data))
	}
	if got := int64(binary.LittleEndian.Uint64(data[0:8])); got != -7 {
		t.Errorf("a = %d, want -7", got)
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(data[8:12])); got != 1.5 {
		t.Errorf("b[0] = %g, want 1.5", got)
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(data[12:16])); got != -2 {
		t.Errorf("b[1] = %g, want -2", got)
	}
}

// handWritten builds a safetensors file byte by byte, the way another writer (e.g. Python's) might: no padding,
// entries in arbitrary order.
func handWritten(header string, data []byte) []byte {
	var buf bytes.Buffer
	_ = binary.Write(&buf, binary.LittleEndian, uint64(len(header)))
	buf.WriteString(header)
	buf.Write(data)
	return buf.Bytes()
}

func le64(values ...float64) []byte {
	out := make([]byte, 0, 8*len(values))
	for _, v := range values {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
	}
	return out
}

func TestLoad_ForeignFile(t *testing.T) {
	header := `{"w":{"data_offsets":[8,40],"shape":[2,2],"dtype":"F64"},"__metadata__":{"format":"pt"},` +
		`"s":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},"e":{"dtype":"F32","shape":[0,3],"data_offsets":[8,8]}}`
	data := binary.LittleEndian.AppendUint32(nil, 42)
	data = binary.LittleEndian.AppendUint32(data, 0)
	data = append(data, le64(1, 2, 3, 4)...)
	path := filepath.Join(t.TempDir(), "foreign.safetensors")
	if err := os.WriteFile(path, handWritten(header, data), 0o644); err != nil {
		t.Fatal(err)
	}
	got, meta, err := Load(path)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if !reflect.DeepEqual(meta, map[string]string{"format": "pt"}) {
		t.Errorf("metadata = %v", meta)
	}
	if w := tensors.MustCopyFlatData[float64](got["w"]); !reflect.DeepEqual(w, []float64{1, 2, 3, 4}) ||
		!got["w"].Shape().Equal(shapes.Make(dtypes.Float64, 2, 2)) {
		t.Errorf("w = %v %s", w, got["w"].Shape())
	}
	if s := tensors.MustCopyFlatData[int32](got["s"]); !reflect.DeepEqual(s, []int32{42, 0}) {
		t.Errorf("s = %v", s)
	}
	if !got["e"].Shape().Equal(shapes.Make(dtypes.Float32, 0, 3)) {
		t.Errorf("e shape = %s", got["e"].Shape())
	}
}

func TestSaveLoad_RoundTripAllDTypes(t *testing.T) {
	in := map[string]*tensors.Tensor{
		"f64":    tensors.FromFlatDataAndDimensions([]float64{1, -2.5, math.Pi, 1e-300, math.Inf(1), 0}, 2, 3),
		"f32":    tensors.FromFlatDataAndDimensions([]float32{1, -2.5, 3.25}, 3),
		"f16":    float16Tensor(0x3e00, 0xc200), // IEEE half: 1.5, -3
		"bf16":   tensors.FromFlatDataAndDimensions([]bfloat16.BFloat16{bfloat16.FromFloat32(0.5), bfloat16.FromFloat32(-8)}, 1, 2),
		"i64":    tensors.FromFlatDataAndDimensions([]int64{math.MinInt64, 5, math.MaxInt64}, 3),
		"i32":    tensors.FromFlatDataAndDimensions([]int32{-1, 2}, 2),
		"i16":    tensors.FromFlatDataAndDimensions([]int16{-300, 7}, 2),
		"i8":     tensors.FromFlatDataAndDimensions([]int8{-128, 127}, 2),
		"u64":    tensors.FromFlatDataAndDimensions([]uint64{math.MaxUint64, 1}, 2),
		"u32":    tensors.FromFlatDataAndDimensions([]uint32{7}, 1),
		"u16":    tensors.FromFlatDataAndDimensions([]uint16{65535}, 1),
		"u8":     tensors.FromFlatDataAndDimensions([]uint8{0, 255, 3}, 3),
		"bool":   tensors.FromFlatDataAndDimensions([]bool{true, false, true}, 3),
		"scalar": tensors.FromScalar(float32(2.5)),
		"empty":  tensors.FromShape(shapes.Make(dtypes.Float32, 0, 4)),
	}
	path := filepath.Join(t.TempDir(), "all.safetensors")
	if err := Save(path, in, nil); err != nil {
		t.Fatalf("%+v", err)
	}
	got, meta, err := Load(path)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if len(meta) != 0 {
		t.Errorf("metadata = %v, want empty", meta)
	}
	if len(got) != len(in) {
		t.Fatalf("loaded %d tensors, want %d", len(got), len(in))
	}
	for name, want := range in {
		g := got[name]
		if g == nil {
			t.Errorf("%s: missing", name)
			continue
		}
		if !g.Shape().Equal(want.Shape()) {
			t.Errorf("%s: shape %s, want %s", name, g.Shape(), want.Shape())
			continue
		}
		if want.Size() == 0 {
			continue
		}
		want.MustConstFlatData(func(w any) {
			g.MustConstFlatData(func(gg any) {
				if !reflect.DeepEqual(w, gg) {
					t.Errorf("%s: got %v, want %v", name, gg, w)
				}
			})
		})
	}
	// ReadHeader agrees with Load without reading data.
	hdr, _, err := ReadHeader(path)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	for name, want := range in {
		if !hdr[name].Equal(want.Shape()) {
			t.Errorf("ReadHeader %s: %s, want %s", name, hdr[name], want.Shape())
		}
	}
}

func TestSave_Errors(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]map[string]*tensors.Tensor{
		"reserved":   {"__metadata__": tensors.FromScalar(float32(1))},
		"empty name": {"": tensors.FromScalar(float32(1))},
		"nil tensor": {"w": nil},
	}
	for what, in := range cases {
		path := filepath.Join(dir, "x.safetensors")
		err := Save(path, in, nil)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v, want an error naming %s", what, err, path)
		}
		if _, statErr := os.Stat(path); statErr == nil {
			t.Errorf("%s: a file was written despite the error", what)
		}
	}
	// A folder that does not exist.
	path := filepath.Join(dir, "missing", "x.safetensors")
	if err := Save(path, map[string]*tensors.Tensor{"w": tensors.FromScalar(1.0)}, nil); err == nil {
		t.Errorf("Save into a missing folder succeeded")
	}
	assertNoTempFiles(t, dir)
}

// TestLoad_Corrupt damages a valid file in each way Load must detect and checks the error names the file and the
// problem (and the tensor, where one is at fault).
func TestLoad_Corrupt(t *testing.T) {
	dir := t.TempDir()
	okHeader := `{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"b":{"dtype":"F64","shape":[1],"data_offsets":[16,24]}}`
	okData := le64(1, 2, 3)
	cases := []struct {
		name string
		file []byte
		want []string // substrings of the error
	}{
		{"empty file", nil, []string{"truncated"}},
		{"short length", []byte{1, 2, 3}, []string{"truncated"}},
		{"length past EOF", handWritten(okHeader, okData)[:30], []string{"runs past the end", "truncated"}},
		{"huge length", append(binary.LittleEndian.AppendUint64(nil, 1<<40), okData...), []string{"limit"}},
		{"not JSON", handWritten(`{"a":`, okData), []string{"not valid JSON"}},
		{"not an object", handWritten(`[1,2]`, nil), []string{"JSON object"}},
		{"duplicate", handWritten(`{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"a":{"dtype":"F64","shape":[1],"data_offsets":[16,24]}}`, okData), []string{"duplicate", `"a"`}},
		{"unknown dtype", handWritten(strings.Replace(okHeader, `"F64","shape":[1]`, `"F8_E4M3","shape":[1]`, 1), okData), []string{`"b"`, "F8_E4M3"}},
		{"offset past end", handWritten(strings.Replace(okHeader, "[16,24]", "[16,32]", 1), okData), []string{`"b"`, "out of range"}},
		{"overlap", handWritten(`{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"b":{"dtype":"F64","shape":[2],"data_offsets":[8,24]}}`, okData), []string{"overlap"}},
		{"hole", handWritten(`{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"b":{"dtype":"F64","shape":[1],"data_offsets":[16,24]}}`, okData), []string{`"b"`, "hole"}},
		{"size mismatch", handWritten(strings.Replace(okHeader, `"shape":[2]`, `"shape":[3]`, 1), okData), []string{`"a"`, "needs 24"}},
		{"trailing data", handWritten(okHeader, append(le64(1, 2, 3), 0, 0, 0, 0, 0, 0, 0, 0)), []string{"trailing"}},
		{"truncated data", handWritten(okHeader, okData[:20]), []string{`"b"`, "out of range"}},
		{"negative dim", handWritten(strings.Replace(okHeader, `"shape":[1]`, `"shape":[-1]`, 1), okData), []string{`"b"`, "negative"}},
		{"bad metadata", handWritten(`{"__metadata__":{"k":1}}`, nil), []string{"__metadata__"}},
		{"unknown field", handWritten(strings.Replace(okHeader, `"dtype":"F64","shape":[1]`, `"dtype":"F64","offsets":[1],"shape":[1]`, 1), okData), []string{`"b"`, "invalid header record"}},
	}
	for i, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".safetensors")
		if err := os.WriteFile(path, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := Load(path)
		if err == nil {
			t.Errorf("case %d %s: Load succeeded", i, c.name)
			continue
		}
		for _, want := range append(c.want, path) {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("case %d %s: error %q does not mention %q", i, c.name, err, want)
			}
		}
	}
	// The undamaged file loads, so the failures above are due to the damage.
	path := filepath.Join(dir, "ok.safetensors")
	if err := os.WriteFile(path, handWritten(okHeader, okData), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path); err != nil {
		t.Fatalf("undamaged file: %+v", err)
	}
	_, _, err := Load(filepath.Join(dir, "nope.safetensors"))
	if err == nil || !strings.Contains(err.Error(), "nope.safetensors") {
		t.Errorf("missing file: err = %v", err)
	}
}

// TestSave_ReadByPython reads a saved file with an independent reader written in Python's standard library
// (testdata/read_safetensors.py, following the format description), the closest check to a PyTorch user's load
// that needs no third-party packages.
func TestSave_ReadByPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the cross-language check needs it")
	}
	path := filepath.Join(t.TempDir(), "py.safetensors")
	in := map[string]*tensors.Tensor{
		"block_00.ffn.up.dense.weights": tensors.FromFlatDataAndDimensions([]float32{1, 2, 3, 4, 5, 6}, 2, 3),
		"embed.embeddings":              tensors.FromFlatDataAndDimensions([]float64{0.5, -1.25}, 1, 2),
		"step":                          tensors.FromScalar(int64(12)),
	}
	if err := Save(path, in, map[string]string{"note": "hello"}); err != nil {
		t.Fatalf("%+v", err)
	}
	out, err := exec.Command(python, "testdata/read_safetensors.py", path).CombinedOutput()
	if err != nil {
		t.Fatalf("python reader: %v\n%s", err, out)
	}
	want := strings.Join([]string{
		"__metadata__ note=hello",
		"block_00.ffn.up.dense.weights F32 [2, 3] [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]",
		"embed.embeddings F64 [1, 2] [0.5, -1.25]",
		"step I64 [] [12]",
	}, "\n") + "\n"
	if string(out) != want {
		t.Errorf("python reader printed:\n%s\nwant:\n%s", out, want)
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// float16Tensor builds a Float16 tensor [n] from raw IEEE half-precision bit patterns.
func float16Tensor(bits ...uint16) *tensors.Tensor {
	t := tensors.FromShape(shapes.Make(dtypes.Float16, len(bits)))
	_ = t.MutableBytes(func(data []byte) {
		for i, b := range bits {
			binary.LittleEndian.PutUint16(data[2*i:], b)
		}
	})
	return t
}
