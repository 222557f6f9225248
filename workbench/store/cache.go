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

// LoadOrCompute returns the value cached in dir/<name>-<hash of key>.json when that file exists and records the
// same key (compared as compact JSON), else computes it and, when dir is not empty, saves it there atomically
// (SaveJSON). The bool reports a cache hit. A cached file that cannot be read is an error naming it.
func LoadOrCompute[T any](dir, name string, key any, compute func() (T, error)) (T, bool, error) {
	type entry struct {
		Key   json.RawMessage `json:"key"`
		Value T               `json:"value"`
	}
	var zero T
	k, err := json.Marshal(key)
	if err != nil {
		return zero, false, errors.Wrapf(err, "store.LoadOrCompute %s: encoding the key", name)
	}
	sum := sha256.Sum256(k)
	var path string
	if dir != "" {
		path = filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:])[:10]+".json")
		if _, err := os.Stat(path); err == nil {
			var e entry
			if err := LoadJSON(path, &e); err != nil {
				return zero, false, err
			}
			var compact bytes.Buffer
			if json.Compact(&compact, e.Key) == nil && bytes.Equal(compact.Bytes(), k) {
				return e.Value, true, nil
			}
		}
	}
	v, err := compute()
	if err != nil || path == "" {
		return v, false, err
	}
	return v, false, SaveJSON(path, entry{Key: k, Value: v})
}
