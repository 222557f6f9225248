package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/pkg/errors"
)

// KeyHash returns the cache key of v: the first 10 hex digits of the SHA-256 of its compact JSON encoding, with the
// encoding itself. Run folders (models/…/<name>-<hash>) and cached values (<name>-<hash>.json) are both named by
// it, so one rule decides when two configurations are the same.
func KeyHash(v any) (string, []byte, error) {
	k, err := json.Marshal(v)
	if err != nil {
		return "", nil, errors.Wrap(err, "store.KeyHash: encoding the key")
	}
	sum := sha256.Sum256(k)
	return hex.EncodeToString(sum[:])[:10], k, nil
}

// cacheEntry is the JSON of a cached value: the key it was computed for, and the value.
type cacheEntry[T any] struct {
	Key   json.RawMessage `json:"key"`
	Value T               `json:"value"`
}

// CachePath returns the file LoadOrCompute uses for key under dir: dir/<name>-<KeyHash(key)>.json.
func CachePath(dir, name string, key any) (string, error) {
	h, _, err := KeyHash(key)
	if err != nil {
		return "", errors.WithMessagef(err, "store: cache %s", name)
	}
	return filepath.Join(dir, name+"-"+h+".json"), nil
}

// CompressedExt is the extension of a cached value stored gzip-compressed: <name>-<hash>.json.gz, which LoadCached
// reads when <name>-<hash>.json is absent (a large shipped result, run.ShippedDir). Nothing here writes one.
const CompressedExt = ".gz"

// StoredPath returns the file LoadCached reads for key under dir: dir/<name>-<KeyHash(key)>.json (CachePath), or
// that path with CompressedExt when only the compressed file exists.
func StoredPath(dir, name string, key any) (string, error) {
	path, err := CachePath(dir, name, key)
	if err != nil {
		return "", err
	}
	return storedFile(path), nil
}

// storedFile returns path, or path+CompressedExt when path does not exist and that does.
func storedFile(path string) string {
	if _, err := os.Stat(path); err != nil {
		if _, err := os.Stat(path + CompressedExt); err == nil {
			return path + CompressedExt
		}
	}
	return path
}

// LoadCached returns the value cached for key in dir (the file LoadOrCompute writes, or its gzip-compressed copy:
// StoredPath) and true, or false when there is none (no folder, no file, or a file recording another key). A cached
// file that cannot be read is an error naming it.
func LoadCached[T any](dir, name string, key any) (T, bool, error) {
	var zero T
	if dir == "" {
		return zero, false, nil
	}
	h, k, err := KeyHash(key)
	if err != nil {
		return zero, false, errors.WithMessagef(err, "store.LoadCached %s", name)
	}
	path := storedFile(filepath.Join(dir, name+"-"+h+".json"))
	if _, err := os.Stat(path); err != nil {
		return zero, false, nil
	}
	var e cacheEntry[T]
	if err := LoadJSON(path, &e); err != nil {
		return zero, false, err
	}
	var compact bytes.Buffer
	if json.Compact(&compact, e.Key) != nil || !bytes.Equal(compact.Bytes(), k) {
		return zero, false, nil
	}
	return e.Value, true, nil
}

// LoadOrCompute returns the value cached in dir/<name>-<hash of key>.json when that file exists and records the
// same key (compared as compact JSON), else computes it and, when dir is not empty, saves it there atomically
// (SaveJSON). The bool reports a cache hit. A cached file that cannot be read is an error naming it.
func LoadOrCompute[T any](dir, name string, key any, compute func() (T, error)) (T, bool, error) {
	v, hit, err := LoadCached[T](dir, name, key)
	if err != nil || hit {
		return v, hit, err
	}
	v, err = Compute(dir, name, key, compute)
	return v, false, err
}

// Compute computes a value and, when dir is not empty, saves it where LoadOrCompute finds it (creating dir),
// replacing any value cached for the same key.
func Compute[T any](dir, name string, key any, compute func() (T, error)) (T, error) {
	_, k, err := KeyHash(key)
	if err != nil {
		var zero T
		return zero, errors.WithMessagef(err, "store.Compute %s", name)
	}
	v, err := compute()
	if err != nil || dir == "" {
		return v, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return v, errors.Wrapf(err, "store: creating %s", dir)
	}
	path, err := CachePath(dir, name, key)
	if err != nil {
		return v, err
	}
	return v, SaveJSON(path, cacheEntry[T]{Key: k, Value: v})
}
