package influence

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cacheFile is a cache file of the given magic and header with body appended: the size claims in the header are
// whatever the test writes.
func cacheFile(magic [8]byte, header []int64, body ...any) []byte {
	var b bytes.Buffer
	b.Write(magic[:])
	_ = binary.Write(&b, binary.LittleEndian, header)
	for _, x := range body {
		_ = binary.Write(&b, binary.LittleEndian, x)
	}
	return b.Bytes()
}

// craftedCodeCaches are code-cache files whose header or arrays lie, and a substring of each one's error.
func craftedCodeCaches() []struct {
	name string
	file []byte
	err  string
} {
	// A valid cache: K=3, D=1, k=1; one sequence of two tokens using columns 0 and 2; postings of columns 0 and 2.
	ok := func(seqStart, idx []int64, postStart []int64, postSeq, postTok []int32) []byte {
		return cacheFile(codeMagic, []int64{3, 1, 1, int64(len(seqStart) - 1), seqStart[len(seqStart)-1], int64(len(postSeq))},
			seqStart, toI32(idx), []float32{1, 2}, []float32{0.5, -1}, postStart, postSeq, postTok, []float32{1, 2}[:len(postSeq)])
	}
	return []struct {
		name string
		file []byte
		err  string
	}{
		{"valid", ok([]int64{0, 2}, []int64{0, 2}, []int64{0, 1, 1, 2}, []int32{0, 0}, []int32{0, 1}), ""},
		{"tokens times k overflows", cacheFile(codeMagic, []int64{4, 1, 4, 0, 1 << 62, 0}), "bad header"},
		// 2^62·(k+D) = 2^64 wrapped to 0 and passed the old size bound; make([]int32, 2^62) then panicked.
		{"tokens times k+D wraps to 0", cacheFile(codeMagic, []int64{1, 3, 1, 0, 1 << 62, 0}), "bad header"},
		{"tokens times D times 4 overflows", cacheFile(codeMagic, []int64{1, 1<<31 - 1, 1, 0, 1<<31 - 1, 0}), "more than"},
		{"K 2^40", cacheFile(codeMagic, []int64{1 << 40, 1, 1, 0, 0, 0}), "bad header"},
		{"K 2^30", cacheFile(codeMagic, []int64{1 << 30, 1, 1, 0, 0, 0}), "describes 8589934664 bytes, but the file has 56"},
		{"sequences 2^30", cacheFile(codeMagic, []int64{3, 1, 1, 1 << 30, 0, 0}), "but the file has 56"},
		{"tokens 2^30 in a small file", cacheFile(codeMagic, []int64{3, 1, 1, 0, 1 << 30, 0}), "but the file has 56"},
		{"index outside K", ok([]int64{0, 2}, []int64{0, 7}, []int64{0, 1, 1, 2}, []int32{0, 0}, []int32{0, 1}), "index 7 outside [0, 3)"},
		{"sequence offsets decrease", ok([]int64{0, 3, 2}, []int64{0, 2}, []int64{0, 1, 1, 2}, []int32{0, 0}, []int32{0, 1}), "sequence offsets decrease at 2"},
		{"posting offsets decrease", ok([]int64{0, 2}, []int64{0, 2}, []int64{0, 2, 1, 2}, []int32{0, 0}, []int32{0, 1}), "posting offsets decrease at 2"},
		{"posting sequence outside", ok([]int64{0, 2}, []int64{0, 2}, []int64{0, 1, 1, 2}, []int32{0, 5}, []int32{0, 1}), "posting 1: token 1 of sequence 5"},
		{"posting token outside", ok([]int64{0, 2}, []int64{0, 2}, []int64{0, 1, 1, 2}, []int32{0, 0}, []int32{0, 9}), "posting 1: token 9 of sequence 0"},
	}
}

func toI32(x []int64) []int32 {
	out := make([]int32, len(x))
	for i, v := range x {
		out[i] = int32(v)
	}
	return out
}

func TestLoadCodeCache_Crafted(t *testing.T) {
	dir := t.TempDir()
	for _, c := range craftedCodeCaches() {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".bin")
		if err := os.WriteFile(path, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := LoadCodeCache(path)
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %+v", c.name, err)
			} else if got.NumTokens() != 2 {
				t.Errorf("%s: %d tokens", c.name, got.NumTokens())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v, want one naming the file and mentioning %q", c.name, err, c.err)
		}
	}
}

// TestLoadColumnCache_Crafted loads column caches whose header claims more than the file holds.
func TestLoadColumnCache_Crafted(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		header []int64
		err    string
	}{
		{"postings times D overflows", []int64{2, 1<<31 - 1, 1<<31 - 1, 1<<31 - 1}, "more than"},
		{"K 2^30", []int64{1 << 30, 1, 1, 0}, "but the file has 40"},
		{"K 2^40", []int64{1 << 40, 1, 1, 0}, "bad header"},
		{"postings 2^30 in a small file", []int64{2, 1, 1 << 30, 1 << 30}, "but the file has 40"},
		{"postings beyond sequences × K", []int64{2, 1, 1, 3}, "bad header"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".bin")
		if err := os.WriteFile(path, cacheFile(columnMagic, c.header), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadColumnCache(path); err == nil || !strings.Contains(err.Error(), c.err) ||
			!strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v, want one naming the file and mentioning %q", c.name, err, c.err)
		}
	}
}

// FuzzLoadCodeCache feeds arbitrary bytes to LoadCodeCache (through a file): it must return a cache or an error,
// never panic, and a cache it returns must score without panicking.
func FuzzLoadCodeCache(f *testing.F) {
	for _, c := range craftedCodeCaches() {
		f.Add(c.file)
	}
	path := filepath.Join(f.TempDir(), "codes.bin")
	f.Fuzz(func(t *testing.T, file []byte) {
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadCodeCache(path)
		if err != nil {
			return
		}
		if c.D > 1<<16 { // a width the file need not back when it holds no tokens; the caller checks it
			return
		}
		c.Scores([]int32{0}, [][]float64{make([]float64, c.D)})
		c.scoresScan([]int32{0}, [][]float64{make([]float64, c.D)})
		for s := range c.NumSeqs() {
			c.SequenceColumns(s)
		}
	})
}
