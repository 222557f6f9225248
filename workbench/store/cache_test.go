package store

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/pkg/errors"
	"github.com/stretchr/testify/require"
)

func TestLoadOrCompute_CachesByKey(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	compute := func(v int) func() (int, error) {
		return func() (int, error) { calls++; return v, nil }
	}
	v, hit, err := LoadOrCompute(dir, "x", map[string]int{"a": 1}, compute(7))
	require.NoError(t, err)
	require.Equal(t, 7, v)
	require.False(t, hit)
	v, hit, err = LoadOrCompute(dir, "x", map[string]int{"a": 1}, compute(8))
	require.NoError(t, err)
	require.Equal(t, 7, v) // cached value, compute not called
	require.True(t, hit)
	require.Equal(t, 1, calls)
	v, hit, err = LoadOrCompute(dir, "x", map[string]int{"a": 2}, compute(9))
	require.NoError(t, err)
	require.Equal(t, 9, v)
	require.False(t, hit)

	_, _, err = LoadOrCompute(dir, "x", 1, func() (int, error) { return 0, errors.New("boom") })
	require.ErrorContains(t, err, "boom")
	_, _, err = LoadOrCompute(dir, "x", func() {}, compute(1)) // a key JSON cannot encode
	require.ErrorContains(t, err, "encoding the key")

	files, _ := filepath.Glob(filepath.Join(dir, "x-*.json"))
	require.Len(t, files, 2)
	require.NoError(t, os.WriteFile(files[0], []byte("{"), 0o644))
	_, _, err = LoadOrCompute(dir, "x", map[string]int{"a": 1}, compute(1))
	_, _, err2 := LoadOrCompute(dir, "x", map[string]int{"a": 2}, compute(1))
	require.True(t, err != nil || err2 != nil, "a corrupt cache file is an error")

	v, hit, err = LoadOrCompute("", "x", 1, compute(5)) // no folder: compute only
	require.NoError(t, err)
	require.Equal(t, 5, v)
	require.False(t, hit)
}

func TestCompute_ReplacesTheCachedValue(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "made") // Compute creates the folder
	v, err := Compute(dir, "x", "k", func() (int, error) { return 1, nil })
	require.NoError(t, err)
	require.Equal(t, 1, v)
	v, err = Compute(dir, "x", "k", func() (int, error) { return 2, nil })
	require.NoError(t, err)
	require.Equal(t, 2, v)
	v, hit, err := LoadOrCompute(dir, "x", "k", func() (int, error) { return 3, nil })
	require.NoError(t, err)
	require.True(t, hit)
	require.Equal(t, 2, v, "Compute stored its value where LoadOrCompute looks")

	h, k, err := KeyHash("k")
	require.NoError(t, err)
	require.Equal(t, `"k"`, string(k))
	require.Len(t, h, 10)
	path, err := CachePath(dir, "x", "k")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "x-"+h+".json"), path)
	require.FileExists(t, path)
}

// A cached value gzip-compressed in place of its file (result-<hash>.json.gz, how a large shipped result is kept) is
// read like the file, and StoredPath names it; the plain file wins when both exist; a compressed file that is not
// gzip, or holds a syntax error, is an error naming it (the line of the uncompressed text), never a silent miss.
func TestLoadCached_Compressed(t *testing.T) {
	dir := t.TempDir()
	key := map[string]int{"a": 1}
	_, err := Compute(dir, "x", key, func() (int, error) { return 7, nil })
	require.NoError(t, err)
	plain, err := CachePath(dir, "x", key)
	require.NoError(t, err)
	data, err := os.ReadFile(plain)
	require.NoError(t, err)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(plain+CompressedExt, zb.Bytes(), 0o644))

	p, err := StoredPath(dir, "x", key)
	require.NoError(t, err)
	require.Equal(t, plain, p, "the plain file wins")
	require.NoError(t, os.WriteFile(plain, []byte(`{"key": {"a": 1}, "value": 8}`), 0o644))
	v, ok, err := LoadCached[int](dir, "x", key)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 8, v, "read from the plain file")

	require.NoError(t, os.Remove(plain))
	p, err = StoredPath(dir, "x", key)
	require.NoError(t, err)
	require.Equal(t, plain+CompressedExt, p)
	v, ok, err = LoadCached[int](dir, "x", key)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 7, v, "read from the compressed file")
	_, ok, err = LoadCached[int](dir, "x", map[string]int{"a": 2})
	require.NoError(t, err)
	require.False(t, ok, "another key: no file")

	require.NoError(t, os.WriteFile(plain+CompressedExt, data, 0o644))
	_, _, err = LoadCached[int](dir, "x", key)
	require.ErrorContains(t, err, plain+CompressedExt+": not a readable gzip file")
	zb.Reset()
	zw = gzip.NewWriter(&zb)
	_, _ = zw.Write([]byte("{\n\"key\": {\"a\": 1},\n\"value\": }"))
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(plain+CompressedExt, zb.Bytes(), 0o644))
	_, _, err = LoadCached[int](dir, "x", key)
	require.ErrorContains(t, err, plain+CompressedExt+":3:")
}
