package store

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pkg/errors"
)

// WriteFileAtomic creates or replaces path with what write produces. The bytes go to a temporary file in the same
// folder (named by TempPattern, ".<base>.tmp-<pid>-*", so listings can skip it and cleanups can tell whose it is),
// which is synced, closed and renamed over path; on any error the temporary file is removed and path is untouched.
// The folder must exist.
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, TempPattern(base))
	if err != nil {
		return errors.Wrapf(err, "writing %s", path)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return errors.Wrapf(err, "writing %s", path)
	}
	if err = tmp.Sync(); err != nil {
		return errors.Wrapf(err, "writing %s: sync", path)
	}
	if err = tmp.Close(); err != nil {
		return errors.Wrapf(err, "writing %s: close", path)
	}
	// CreateTemp makes the file 0600; results and weights are ordinary files.
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return errors.Wrapf(err, "writing %s: chmod", path)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return errors.Wrapf(err, "writing %s: rename", path)
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename durable where the OS supports syncing a folder; failures are ignored (some file systems
// refuse it, and the rename itself has succeeded).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// SaveJSON writes v as indented JSON (two spaces, trailing newline) to path, atomically.
func SaveJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errors.Wrapf(err, "store.SaveJSON %s: encoding %T", path, v)
	}
	data = append(data, '\n')
	if err := WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}); err != nil {
		return errors.WithMessage(err, "store.SaveJSON")
	}
	return nil
}

// LoadJSON reads the JSON file at path into v (a pointer); a path ending in CompressedExt is gunzipped first. Fields
// of the file that v lacks are ignored, so results written by older code still load. Errors name the file; a syntax
// or type error also gives the line and column (of the uncompressed text), and an empty file, a file that ends
// inside the value (truncated), one holding only null, or a compressed file that is not valid gzip says so.
func LoadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return errors.Wrap(err, "store.LoadJSON")
	}
	if strings.HasSuffix(path, CompressedExt) {
		if data, err = gunzip(data); err != nil {
			return errors.Wrapf(err, "store.LoadJSON %s: not a readable gzip file (re-copy it, or remove it and "+
				"recompute the result)", path)
		}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return errors.Errorf("store.LoadJSON %s: file is empty", path)
	}
	if string(trimmed) == "null" { // json.Unmarshal would leave v as it is
		return errors.Errorf("store.LoadJSON %s: file holds null, not a %T", path, v)
	}
	if err := json.Unmarshal(data, v); err != nil {
		// The offsets count the bytes read up to and including the offending one; line:col names that byte.
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			if syn.Offset >= int64(len(data)) {
				line, col := lineCol(data, int64(len(data)))
				return errors.Errorf("store.LoadJSON %s:%d:%d: %v (truncated file)", path, line, col, err)
			}
			line, col := lineCol(data, syn.Offset-1)
			return errors.Errorf("store.LoadJSON %s:%d:%d: %v", path, line, col, err)
		}
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			line, col := lineCol(data, typ.Offset-1)
			return errors.Errorf("store.LoadJSON %s:%d:%d: %v", path, line, col, err)
		}
		return errors.Wrapf(err, "store.LoadJSON %s", path)
	}
	return nil
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, offset int64) (line, col int) {
	offset = max(0, min(offset, int64(len(data))))
	before := data[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// gunzip returns the uncompressed content of the gzip data.
func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	return out, zr.Close()
}
