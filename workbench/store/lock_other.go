//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

import (
	"os"

	"github.com/pkg/errors"
)

// lockFile creates path exclusively; an existing lock file is refused, naming its holder (without flock a dead
// holder cannot be told from a live one here: the error's fix is to delete the file once that process is gone).
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if os.IsExist(err) {
		return nil, errors.WithMessagef(lockedError(path), "if that process no longer runs, delete %s", path)
	}
	if err != nil {
		return nil, errors.Wrapf(err, "store.Lock: cannot create the lock file %s (is the folder writable?)", path)
	}
	return f, nil
}

func unlockFile(f *os.File) error { return errors.Wrap(f.Close(), "store.DirLock.Release") }

// ProcessAlive reports whether a process with this PID may run; without a portable check it says yes, so that
// nothing of a live process is ever taken for stale.
func ProcessAlive(pid int) bool { return pid > 0 }
