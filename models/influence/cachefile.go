package influence

import (
	"math"
	"os"

	"github.com/pkg/errors"
)

// cacheLayout is the byte size of a cache file from its header: fixed bytes of magic and header, then arrays of
// count elements of size bytes each, every count and product checked for int64 overflow. Loaders compare it with
// the file's size before allocating anything, so that no header can claim more memory than the file holds.
type cacheLayout struct {
	bytes    int64
	overflow bool
}

// mul returns a·b, or marks the layout overflowed when the product does not fit in int64 (a, b ≥ 0).
func (l *cacheLayout) mul(a, b int64) int64 {
	if a < 0 || b < 0 || (b != 0 && a > math.MaxInt64/b) {
		l.overflow = true
		return 0
	}
	return a * b
}

// add appends an array of count elements of size bytes.
func (l *cacheLayout) add(count, size int64) {
	n := l.mul(count, size)
	if l.overflow || n > math.MaxInt64-l.bytes {
		l.overflow = true
		return
	}
	l.bytes += n
}

// check returns an error unless the layout equals the size of the open file f.
func (l *cacheLayout) check(f *os.File, header []int64) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if l.overflow {
		return errors.Errorf("header %v describes more than %d bytes", header, int64(math.MaxInt64))
	}
	if l.bytes != info.Size() {
		return errors.Errorf("header %v describes %d bytes, but the file has %d: truncated or corrupt", header,
			l.bytes, info.Size())
	}
	return nil
}

// checkOffsets returns an error unless offsets start at 0, never decrease and end at total.
func checkOffsets(what string, offsets []int64, total int64) error {
	if offsets[0] != 0 || offsets[len(offsets)-1] != total {
		return errors.Errorf("%s offsets run from %d to %d, want 0 to %d", what, offsets[0], offsets[len(offsets)-1],
			total)
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] {
			return errors.Errorf("%s offsets decrease at %d: %d after %d", what, i, offsets[i], offsets[i-1])
		}
	}
	return nil
}
