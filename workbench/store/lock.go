package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pkg/errors"
)

// LockFile is the name of the file Lock creates in the folder it locks. It exists while a process holds the lock
// (or after that process was killed, until the next Lock takes it over) and records the holder as JSON.
const LockFile = "protolab.lock"

// ErrLocked is wrapped by Lock's error when another live process holds the lock.
var ErrLocked = errors.New("folder in use by another process")

// Holder describes the process holding a folder's lock, as its lock file records it.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"` // when the lock was taken
	Command string    `json:"command"` // the holder's command line
}

// String names the holder for error messages: "process 123 on host h (since 15:04:05, `protolab train …`)".
func (h Holder) String() string {
	return fmt.Sprintf("process %d on host %s (since %s, `%s`)", h.PID, h.Host,
		h.Started.Local().Format("2006-01-02 15:04:05"), h.Command)
}

// DirLock is an exclusive lock on a folder, held by this process until Release.
type DirLock struct {
	dir  string
	file *os.File
}

// Lock takes the exclusive lock of dir (which must exist) for this process and records this process in
// dir/LockFile. Where the OS supports flock(2) the lock is the kernel's, so a holder that dies (even by kill -9)
// releases it and its leftover LockFile does not block; elsewhere a LockFile naming a dead process of this host is
// taken over. When another live process holds the lock, the error wraps ErrLocked and names the holder (PID, host,
// start time and command). Two Locks of one folder in the same process also exclude each other.
func Lock(dir string) (*DirLock, error) {
	f, err := lockFile(filepath.Join(dir, LockFile))
	if err != nil {
		return nil, err
	}
	l := &DirLock{dir: dir, file: f}
	if err := l.record(); err != nil {
		_ = l.Release()
		return nil, err
	}
	return l, nil
}

// record writes this process as the holder into the (locked) lock file.
func (l *DirLock) record() error {
	host, _ := os.Hostname()
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC(),
		Command: strings.Join(os.Args, " ")})
	if err := l.file.Truncate(0); err != nil {
		return errors.Wrapf(err, "store.Lock: writing %s", l.file.Name())
	}
	if _, err := l.file.WriteAt(append(b, '\n'), 0); err != nil {
		return errors.Wrapf(err, "store.Lock: writing %s", l.file.Name())
	}
	return nil
}

// Dir returns the locked folder.
func (l *DirLock) Dir() string { return l.dir }

// Release removes the lock file and releases the lock. It is safe to call on a nil or released lock.
func (l *DirLock) Release() error {
	if l == nil || l.file == nil {
		return nil
	}
	// Removing while still holding the lock: a process that opened the file before the removal finds, once it
	// gets the lock, that the path no longer names its file, and starts again (lockFile).
	rmErr := os.Remove(l.file.Name())
	err := unlockFile(l.file)
	l.file = nil
	if rmErr != nil && !os.IsNotExist(rmErr) {
		return errors.Wrap(rmErr, "store.DirLock.Release")
	}
	return err
}

// readHolder reads the holder recorded in a lock file; the holder writes it right after taking the lock, so an
// empty file is read again for a moment.
func readHolder(path string) (Holder, bool) {
	var h Holder
	for range 20 {
		b, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(b, &h) == nil && h.PID > 0 {
			return h, true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return h, false
}

// LockedError is Lock's error when another process holds the lock; errors.Is(err, ErrLocked) holds for it.
type LockedError struct {
	Dir    string
	Holder *Holder // nil when the lock file names no holder yet
}

// Error names the folder, the holder and the fix.
func (e *LockedError) Error() string {
	if e.Holder == nil {
		return fmt.Sprintf("%s is in use by another process (its lock file %s names no holder yet); try again in a "+
			"moment", e.Dir, filepath.Join(e.Dir, LockFile))
	}
	return fmt.Sprintf("%s is in use by %s; wait for it to finish or stop it (kill %d), then try again", e.Dir,
		e.Holder, e.Holder.PID)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// lockedError is the error of a lock held by someone else.
func lockedError(path string) error {
	e := &LockedError{Dir: filepath.Dir(path)}
	if h, ok := readHolder(path); ok {
		e.Holder = &h
	}
	return errors.WithStack(e)
}

// TempPattern is the os.CreateTemp pattern of this process's temporary files for path: ".<base>.tmp-<pid>-*".
// The PID lets a cleanup tell its own leftovers, and those of dead processes, from another process's file in
// progress (see TempOwner).
func TempPattern(base string) string {
	return "." + base + ".tmp-" + strconv.Itoa(os.Getpid()) + "-*"
}

// TempOwner parses the name of a temporary file made with TempPattern and returns the PID that made it. ok is
// false for other names; legacy is true (with pid 0) for the ".<base>.tmp-<random>" names of older versions,
// which record no PID.
func TempOwner(name string) (pid int, legacy, ok bool) {
	i := strings.LastIndex(name, ".tmp-")
	if !strings.HasPrefix(name, ".") || i < 1 {
		return 0, false, false
	}
	rest := name[i+len(".tmp-"):]
	p, random, found := strings.Cut(rest, "-")
	if !found {
		if _, err := strconv.ParseUint(rest, 10, 64); err != nil {
			return 0, false, false
		}
		return 0, true, true
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || random == "" {
		return 0, false, false
	}
	return n, false, true
}

// legacyTempAge is how old a temporary file without a PID must be before StaleTemp calls it abandoned: no write
// of ours takes that long, so nobody is still writing it.
const legacyTempAge = time.Hour

// StaleTemp reports whether the file name in dir is a temporary file (TempPattern) that nobody is writing: one of
// this process (its writes are sequential, so a leftover is from a failed write), one of a process of this host
// that no longer runs, or a legacy one untouched for an hour. Another live process's temporary file is never stale.
func StaleTemp(dir, name string) bool {
	pid, legacy, ok := TempOwner(name)
	switch {
	case !ok:
		return false
	case legacy:
		info, err := os.Stat(filepath.Join(dir, name))
		return err == nil && time.Since(info.ModTime()) > legacyTempAge
	case pid == os.Getpid():
		return true
	}
	return !ProcessAlive(pid)
}
