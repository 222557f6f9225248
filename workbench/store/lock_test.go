package store

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkg/errors"
	"github.com/stretchr/testify/require"
)

// TestLock_ExcludesAndNamesTheHolder: a second Lock of a locked folder fails naming the holder (PID, host, command)
// and wrapping ErrLocked; Release removes the lock file, and the folder can be locked again.
func TestLock_ExcludesAndNamesTheHolder(t *testing.T) {
	dir := t.TempDir()
	l, err := Lock(dir)
	require.NoError(t, err)
	var h Holder
	b, err := os.ReadFile(filepath.Join(dir, LockFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &h))
	host, _ := os.Hostname()
	require.Equal(t, os.Getpid(), h.PID)
	require.Equal(t, host, h.Host)
	require.WithinDuration(t, time.Now(), h.Started, time.Minute)

	_, err = Lock(dir)
	require.ErrorIs(t, err, ErrLocked)
	require.ErrorContains(t, err, fmt.Sprintf("%s is in use by process %d on host %s", dir, os.Getpid(), host))
	require.ErrorContains(t, err, os.Args[0])

	require.NoError(t, l.Release())
	require.NoFileExists(t, filepath.Join(dir, LockFile))
	require.NoError(t, l.Release(), "a second Release is a no-op")
	l, err = Lock(dir)
	require.NoError(t, err)
	require.NoError(t, l.Release())

	_, err = Lock(filepath.Join(dir, "missing"))
	require.ErrorContains(t, err, "cannot create the lock file")
}

// TestLock_KilledHolderDoesNotBlock: a process holding the lock blocks Lock, naming its PID; once it is killed with
// SIGKILL (no cleanup runs, its lock file stays behind), Lock succeeds and records the new holder.
func TestLock_KilledHolderDoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLock_HelperProcess$")
	cmd.Env = append(os.Environ(), "STORE_LOCK_HELPER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)

	_, err = Lock(dir)
	require.ErrorIs(t, err, ErrLocked)
	require.ErrorContains(t, err, fmt.Sprintf("in use by process %d ", cmd.Process.Pid))

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	b, err := os.ReadFile(filepath.Join(dir, LockFile))
	require.NoError(t, err)
	require.Contains(t, string(b), fmt.Sprintf(`"pid":%d`, cmd.Process.Pid), "the killed holder's file stays")
	l, err := Lock(dir)
	require.NoError(t, err)
	b, err = os.ReadFile(filepath.Join(dir, LockFile))
	require.NoError(t, err)
	require.Contains(t, string(b), fmt.Sprintf(`"pid":%d`, os.Getpid()))
	require.NoError(t, l.Release())
}

// TestLock_HelperProcess is the lock holder of TestLock_KilledHolderDoesNotBlock; it does nothing in a normal run.
func TestLock_HelperProcess(t *testing.T) {
	dir := os.Getenv("STORE_LOCK_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process of TestLock_KilledHolderDoesNotBlock")
	}
	if _, err := Lock(dir); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	os.Exit(0)
}

// TestStaleTemp: temporary file names carry the writer's PID; only this process's, a dead process's and an hour-old
// legacy one are stale.
func TestStaleTemp(t *testing.T) {
	dir := t.TempDir()
	require.True(t, strings.HasPrefix(TempPattern("a.json"), fmt.Sprintf(".a.json.tmp-%d-", os.Getpid())))
	dead := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, dead.Run())
	for _, c := range []struct {
		name         string
		pid          int
		legacy, ok   bool
		stale, aging bool
	}{
		{name: fmt.Sprintf(".ckpt.json.tmp-%d-77", os.Getpid()), pid: os.Getpid(), ok: true, stale: true},
		{name: fmt.Sprintf(".ckpt.json.tmp-%d-77", dead.Process.Pid), pid: dead.Process.Pid, ok: true, stale: true},
		{name: fmt.Sprintf(".ckpt.json.tmp-%d-77", os.Getppid()), pid: os.Getppid(), ok: true},
		{name: ".ckpt.json.tmp-12345", legacy: true, ok: true},
		{name: ".ckpt.json.tmp-12346", legacy: true, ok: true, stale: true, aging: true},
		{name: "ckpt.json"},
		{name: ".ckpt.json.tmp-x-1"},
		{name: ".ckpt.json.tmp-"},
	} {
		path := filepath.Join(dir, c.name)
		require.NoError(t, os.WriteFile(path, nil, 0o644))
		if c.aging {
			old := time.Now().Add(-2 * time.Hour)
			require.NoError(t, os.Chtimes(path, old, old))
		}
		pid, legacy, ok := TempOwner(c.name)
		require.Equal(t, []any{c.pid, c.legacy, c.ok}, []any{pid, legacy, ok}, c.name)
		require.Equal(t, c.stale, StaleTemp(dir, c.name), c.name)
	}
}

// TestWriteFileAtomic_TempCarriesPIDAndVanishes: the temporary file is named with this process's PID, and a failed
// write leaves neither it nor the destination behind.
func TestWriteFileAtomic_TempCarriesPIDAndVanishes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.json")
	var seen []string
	err := WriteFileAtomic(path, func(w io.Writer) error {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			seen = append(seen, e.Name())
		}
		return errors.New("disk full")
	})
	require.ErrorContains(t, err, "disk full")
	require.Len(t, seen, 1)
	pid, _, ok := TempOwner(seen[0])
	require.True(t, ok, seen[0])
	require.Equal(t, os.Getpid(), pid)
	entries, _ := os.ReadDir(dir)
	require.Empty(t, entries)
}

// TestDigest_Verify: a flipped byte or a missing file is an error naming the file and the caller's fix.
func TestDigest_Verify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.safetensors")
	require.NoError(t, os.WriteFile(path, []byte("some weights"), 0o644))
	d, err := FileDigest(path)
	require.NoError(t, err)
	require.Equal(t, int64(12), d.Size)
	require.NoError(t, d.Verify(path, "retrain"))
	require.NoError(t, os.WriteFile(path, []byte("some weighte"), 0o644))
	err = d.Verify(path, "retrain it")
	require.ErrorContains(t, err, path+" is corrupt: 12 bytes with sha256")
	require.ErrorContains(t, err, "retrain it")
	require.NoError(t, os.Remove(path))
	require.ErrorContains(t, d.Verify(path, "retrain it"), "missing or unreadable; retrain it")
}
