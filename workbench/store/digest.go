package store

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"

	"github.com/pkg/errors"
)

// Digest is the size and SHA-256 of a file, recorded next to it (a checkpoint's sidecar, a run's result.json) so
// that a reader can tell a damaged file from the one written.
type Digest struct {
	Size   int64  `json:"size"`   // bytes
	SHA256 string `json:"sha256"` // hex
}

// FileDigest returns the Digest of the file at path.
func FileDigest(path string) (Digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return Digest{}, errors.Wrap(err, "hashing")
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return Digest{}, errors.Wrapf(err, "hashing %s", path)
	}
	return Digest{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Verify checks the file at path against d. The error names the file, both digests and what the caller should
// do about a mismatch (fix, e.g. "restore it or retrain").
func (d Digest) Verify(path, fix string) error {
	got, err := FileDigest(path)
	if err != nil {
		return errors.WithMessagef(err, "%s is missing or unreadable; %s", path, fix)
	}
	if got != d {
		return errors.Errorf("%s is corrupt: %d bytes with sha256 %.12s…, but %d bytes with sha256 %.12s… were "+
			"written; %s", path, got.Size, got.SHA256, d.Size, d.SHA256, fix)
	}
	return nil
}
