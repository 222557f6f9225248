package store

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// craftedFile is a hostile or damaged safetensors file and the substrings its Load error must contain (besides the
// path). These are the seeds of FuzzLoad as well.
type craftedFile struct {
	name string
	file []byte
	want []string
}

// tensorHeader is the header of one tensor "w" with the given dtype, shape and offsets (JSON fragments).
func tensorHeader(dtype, shape, offsets string) string {
	return `{"w":{"dtype":"` + dtype + `","shape":` + shape + `,"data_offsets":` + offsets + `}}`
}

// lengthOnly is an 8-byte header length n followed by body.
func lengthOnly(n uint64, body []byte) []byte {
	return append(binary.LittleEndian.AppendUint64(nil, n), body...)
}

func craftedFiles() []craftedFile {
	one := le64(1)
	return []craftedFile{
		// 8·(2^61+1) wraps to 8 in int64, so the offsets "match" and FromShape allocated 2^61+1 float64s.
		{"elements times dtype size wraps to the span", handWritten(tensorHeader("F64", "[2305843009213693953]", "[0,8]"), one),
			[]string{`"w"`, "too large", "overflows"}},
		// 8·2^62 wraps to 0: an "empty" tensor of 2^62 elements.
		{"elements times dtype size wraps to zero", handWritten(tensorHeader("F64", "[4611686018427387904]", "[0,0]"), nil),
			[]string{`"w"`, "too large"}},
		{"product of dims overflows", handWritten(tensorHeader("F32", "[4294967296,4294967296,4294967296]", "[0,8]"), one),
			[]string{`"w"`, "too large"}},
		{"product wraps to exactly 2^64", handWritten(tensorHeader("U8", "[4294967296,4294967296]", "[0,0]"), nil),
			[]string{`"w"`, "too large"}},
		{"huge dims before a zero", handWritten(tensorHeader("F32", "[4611686018427387904,4611686018427387904,0]", "[0,0]"), nil),
			[]string{`"w"`, "too large"}},
		{"huge dims after a zero", handWritten(tensorHeader("F32", "[0,4611686018427387904,4611686018427387904]", "[0,0]"), nil),
			[]string{`"w"`, "too large"}},
		{"dim beyond int", handWritten(tensorHeader("F32", "[1e30]", "[0,8]"), one),
			[]string{`"w"`, "invalid header record"}},
		{"fractional dim", handWritten(tensorHeader("F32", "[2.5]", "[0,8]"), one),
			[]string{`"w"`, "invalid header record"}},
		{"negative dim", handWritten(tensorHeader("F32", "[-2]", "[0,8]"), one),
			[]string{`"w"`, "negative"}},
		{"negative dims cancel", handWritten(tensorHeader("F32", "[-1,-2]", "[0,8]"), one),
			[]string{`"w"`, "negative"}},
		{"size larger than the file", handWritten(tensorHeader("F64", "[1000000000]", "[0,8]"), one),
			[]string{`"w"`, "needs 8000000000"}},
		{"missing shape", handWritten(`{"w":{"dtype":"F64","data_offsets":[0,8]}}`, one),
			[]string{`"w"`, "no shape"}},
		{"null shape", handWritten(tensorHeader("F64", "null", "[0,8]"), one),
			[]string{`"w"`, "no shape"}},
		{"negative begin", handWritten(tensorHeader("F64", "[1]", "[-8,0]"), one),
			[]string{`"w"`, "out of range"}},
		{"end before begin", handWritten(tensorHeader("F64", "[1]", "[8,0]"), one),
			[]string{`"w"`, "out of range"}},
		{"end at max int64", handWritten(tensorHeader("U8", "[9223372036854775807]", "[0,9223372036854775807]"), one),
			[]string{`"w"`, "out of range"}},
		{"offset beyond int64", handWritten(tensorHeader("F64", "[1]", "[0,18446744073709551616]"), one),
			[]string{`"w"`, "invalid header record"}},
		{"three offsets", handWritten(tensorHeader("F64", "[1]", "[0,8,16]"), one),
			[]string{`"w"`, "3 values"}},
		{"one offset", handWritten(tensorHeader("F64", "[1]", "[8]"), one),
			[]string{`"w"`, "1 values"}},
		{"missing offsets", handWritten(`{"w":{"dtype":"F64","shape":[1]}}`, one),
			[]string{`"w"`, "0 values"}},
		{"overlapping tensors", handWritten(`{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},`+
			`"b":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, one),
			[]string{"overlap"}},
		{"offsets not covering the data", handWritten(tensorHeader("F64", "[1]", "[0,8]"), le64(1, 2)),
			[]string{"trailing"}},
		{"unknown dtype", handWritten(tensorHeader("F8_E5M2", "[8]", "[0,8]"), one),
			[]string{`"w"`, "F8_E5M2"}},
		{"lower-case dtype", handWritten(tensorHeader("f64", "[1]", "[0,8]"), one),
			[]string{`"w"`, `"f64"`}},
		{"record not an object", handWritten(`{"w":5}`, nil),
			[]string{`"w"`, "invalid header record"}},
		{"duplicate names", handWritten(`{"w":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},`+
			`"w":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}`, nil),
			[]string{"duplicate", `"w"`}},
		{"duplicate metadata", handWritten(`{"__metadata__":{},"__metadata__":{}}`, nil),
			[]string{"duplicate", "__metadata__"}},
		{"metadata value a number", handWritten(`{"__metadata__":{"k":1}}`, nil),
			[]string{"__metadata__", "object of strings"}},
		{"metadata an array", handWritten(`{"__metadata__":["k","v"]}`, nil),
			[]string{"__metadata__", "object of strings"}},
		{"metadata nested", handWritten(`{"__metadata__":{"k":{"x":"y"}}}`, nil),
			[]string{"__metadata__", "object of strings"}},
		{"BOOL byte 2", handWritten(tensorHeader("BOOL", "[2]", "[0,2]"), []byte{1, 2}),
			[]string{`"w"`, "BOOL element 1 is byte 2"}},
		{"header length past the end", lengthOnly(64, []byte(`{}`)),
			[]string{"runs past the end", "truncated"}},
		{"header length over 100 MB", lengthOnly(MaxHeaderBytes+1, []byte(`{}`)),
			[]string{"exceeds", "limit"}},
		{"header length 2^63", lengthOnly(1<<63, []byte(`{}`)),
			[]string{"exceeds", "limit"}},
		{"header length 2^64-1", lengthOnly(1<<64-1, []byte(`{}`)),
			[]string{"exceeds", "limit"}},
		{"header length zero", lengthOnly(0, nil),
			[]string{"not a JSON object"}},
		{"header all spaces", handWritten("        ", nil),
			[]string{"not a JSON object"}},
		{"header truncated JSON", handWritten(`{"w":{"dtype":"F64"`, nil),
			[]string{"not valid JSON"}},
		{"header trailing garbage", handWritten(`{} {}`, nil),
			[]string{"trailing data"}},
		{"seven bytes", []byte{8, 0, 0, 0, 0, 0, 0},
			[]string{"truncated"}},
	}
}

// TestLoad_Crafted loads each crafted file: every one is an error naming the file and the problem, not a panic or
// an allocation the file cannot back.
func TestLoad_Crafted(t *testing.T) {
	dir := t.TempDir()
	for i, c := range craftedFiles() {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".safetensors")
		if err := os.WriteFile(path, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		for fn, load := range map[string]func(string) error{
			"Load":       func(p string) error { _, _, err := Load(p); return err },
			"ReadHeader": func(p string) error { _, _, err := ReadHeader(p); return err },
		} {
			err := load(path)
			if err == nil {
				if fn == "ReadHeader" && strings.HasPrefix(c.name, "BOOL") {
					continue // ReadHeader reads no data, so it cannot see a bad BOOL byte
				}
				t.Errorf("case %d %s: %s succeeded", i, c.name, fn)
				continue
			}
			for _, want := range append(c.want, path) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("case %d %s: %s error %q does not mention %q", i, c.name, fn, err, want)
				}
			}
		}
	}
}

// TestTensorBytes checks the overflow-safe size against products written out, at the int64 boundary.
func TestTensorBytes(t *testing.T) {
	const max = 1<<63 - 1
	for _, c := range []struct {
		dims     []int
		elemSize int
		want     int64
		ok       bool
	}{
		{[]int{}, 8, 8, true},
		{[]int{2, 3}, 4, 2 * 3 * 4, true},
		{[]int{0}, 8, 0, true},
		{[]int{3, 0, 5}, 2, 0, true},
		{[]int{max}, 1, max, true},
		{[]int{max}, 2, 0, false},
		{[]int{1 << 62}, 2, 0, false}, // 2^63 is one past the largest int64
		{[]int{1 << 61}, 4, 0, false},
		{[]int{1 << 60}, 4, 1 << 62, true},
		{[]int{1 << 31, 1 << 31}, 2, 0, false},
		{[]int{1 << 31, 1 << 31}, 1, 1 << 62, true},
		{[]int{1<<61 + 1}, 8, 0, false}, // 8·(2^61+1) = 2^64 + 8 would wrap to 8
		{[]int{1 << 62, 1 << 62, 0}, 4, 0, false},
	} {
		got, ok := tensorBytes(c.dims, c.elemSize)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("tensorBytes(%v, %d) = %d, %v; want %d, %v", c.dims, c.elemSize, got, ok, c.want, c.ok)
		}
	}
}

// FuzzLoad feeds arbitrary bytes to Load's reader: it must return tensors or an error, never panic, and a
// successful load must account for every data byte.
func FuzzLoad(f *testing.F) {
	valid := filepath.Join(f.TempDir(), "valid.safetensors")
	if err := Save(valid, map[string]*tensors.Tensor{
		"w": tensors.FromFlatDataAndDimensions([]float32{1, 2, 3, 4, 5, 6}, 2, 3),
		"b": tensors.FromFlatDataAndDimensions([]bool{true, false}, 2),
		"s": tensors.FromScalar(int64(7)),
	}, map[string]string{"k": "v"}); err != nil {
		f.Fatalf("%+v", err)
	}
	data, err := os.ReadFile(valid)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(handWritten(`{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"e":{"dtype":"BF16","shape":[0,3],"data_offsets":[16,16]}}`, le64(1, 2)))
	for _, c := range craftedFiles() {
		f.Add(c.file)
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		got, _, err := load(bytes.NewReader(file), int64(len(file)))
		entries, _, _, hdrErr := readHeader(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			return
		}
		if hdrErr != nil {
			t.Fatalf("load succeeded but readHeader failed: %v", hdrErr)
		}
		if len(entries) != len(got) {
			t.Fatalf("load returned %d tensors, the header has %d", len(got), len(entries))
		}
		var total int64
		for _, e := range entries {
			if !got[e.name].Shape().Equal(e.shape) {
				t.Fatalf("tensor %q: shape %s, header says %s", e.name, got[e.name].Shape(), e.shape)
			}
			total += int64(e.shape.Memory())
		}
		n := binary.LittleEndian.Uint64(file[:8])
		if want := int64(len(file)) - 8 - int64(n); total != want {
			t.Fatalf("tensors hold %d bytes, the data buffer has %d", total, want)
		}
	})
}
