//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"os"
	"syscall"

	"github.com/pkg/errors"
)

// lockFile opens (creating it) and flocks path without blocking. Where the file system does not support flock it
// falls back to the holder recorded in the file (lockByPID).
func lockFile(path string) (*os.File, error) {
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, errors.Wrapf(err, "store.Lock: cannot create the lock file %s (is the folder writable?)", path)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == syscall.EWOULDBLOCK:
			_ = f.Close()
			return nil, lockedError(path)
		case err == syscall.ENOLCK || err == syscall.EOPNOTSUPP || err == syscall.ENOSYS:
			_ = f.Close()
			return lockByPID(path)
		case err != nil:
			_ = f.Close()
			return nil, errors.Wrapf(err, "store.Lock: flock %s", path)
		}
		// The previous holder may have removed the file (Release) after we opened it: then we hold a lock on a
		// file nobody else sees, and must start again.
		var fst, pst syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &fst) == nil && syscall.Stat(path, &pst) == nil && fst.Dev == pst.Dev &&
			fst.Ino == pst.Ino {
			return f, nil
		}
		_ = f.Close()
	}
	return nil, errors.Errorf("store.Lock: %s keeps being replaced; another process is locking and releasing it", path)
}

// lockByPID takes a lock file without flock: it refuses when the file names a live process of this host (or any
// process of another host), and otherwise replaces it.
func lockByPID(path string) (*os.File, error) {
	if h, ok := readHolder(path); ok && h.PID != os.Getpid() {
		host, _ := os.Hostname()
		if h.Host != host || ProcessAlive(h.PID) {
			return nil, lockedError(path)
		}
	}
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}

func unlockFile(f *os.File) error {
	// Closing the descriptor releases the flock.
	return errors.Wrap(f.Close(), "store.DirLock.Release")
}

// ProcessAlive reports whether a process with this PID runs on this host (signal 0 reaches it, or exists but
// belongs to another user).
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
