package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Environment of the child process the interrupt tests start: the test binary itself, which then runs main() on its
// arguments (TestMain) — the same code as the protolab binary, without a 30-second link.
const (
	childEnv     = "PROTOLAB_TEST_RUN_MAIN"       // "1": run main() instead of the tests
	childHoldEnv = "PROTOLAB_TEST_HOLD_INTERRUPT" // "1": set holdFirstInterrupt in the child
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		holdFirstInterrupt = os.Getenv(childHoldEnv) == "1"
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// randomText writes n lines of random lower-case words, a blank line after every fifth, to path: a corpus whose
// tokenizer takes seconds to train at a few thousand tokens (the synthetic corpus supports too few merges).
func randomText(t *testing.T, path string, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 20000)
	for i := range words {
		b := make([]byte, 2+rng.IntN(8))
		for j := range b {
			b[j] = byte('a' + rng.IntN(26))
		}
		words[i] = string(b)
	}
	var sb strings.Builder
	for i := range n {
		for j := range 12 {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[rng.IntN(len(words))])
		}
		sb.WriteString(".\n")
		if i%5 == 4 {
			sb.WriteByte('\n')
		}
	}
	require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))
}

// startTrain starts `protolab train --preset tiny` on a large text file in a child process and returns it once it
// has logged that data preparation started, with the run folder and the child's stderr lines so far (the rest are
// appended until it exits, then the channel closes).
func startTrain(t *testing.T, hold bool) (cmd *exec.Cmd, dir string, stderr <-chan string) {
	t.Helper()
	tmp := t.TempDir()
	corpus := filepath.Join(tmp, "corpus.txt")
	randomText(t, corpus, 60000) // ~5 MB: a few seconds of tokenizer training on 2 cores
	dir = filepath.Join(tmp, "run")
	cmd = exec.Command(os.Args[0], "train", "--preset", "tiny", "--set", "data.source="+corpus,
		"--set", "data.tokenizer.vocab_size=6000;train.steps=100000", "--out", dir)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	if hold {
		cmd.Env = append(cmd.Env, childHoldEnv+"=1")
	}
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the child exited before preparing data")
			if strings.HasPrefix(l, "lm: preparing the data") {
				return cmd, dir, lines
			}
		case <-deadline:
			t.Fatal("no 'lm: preparing the data' line after 2 minutes")
		}
	}
}

// waitExit waits at most limit for cmd to exit and returns its exit status and the rest of its stderr.
func waitExit(t *testing.T, cmd *exec.Cmd, stderr <-chan string, limit time.Duration) (int, string) {
	t.Helper()
	var rest []string
	timeout := time.After(limit)
	for open := true; open; {
		select {
		case l, ok := <-stderr:
			if !ok {
				open = false
				break
			}
			rest = append(rest, l)
		case <-timeout:
			t.Fatalf("the child did not exit within %s of the interrupt; stderr:\n%s", limit,
				strings.Join(rest, "\n"))
		}
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	return cmd.ProcessState.ExitCode(), strings.Join(rest, "\n")
}

// requireOnlyConfig checks that the run folder, if it is left at all, holds nothing but a complete config.json and
// the folder's lock file: no tokenizer, checkpoint, weights or result, and no temporary file.
func requireOnlyConfig(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return // the interrupted call removed the folder it had created
	}
	require.NoError(t, err)
	for _, e := range entries {
		require.True(t, e.Name() == "config.json" || strings.HasSuffix(e.Name(), ".lock"),
			"data preparation was interrupted, yet %s is in the run folder", e.Name())
		if e.Name() == "config.json" {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			require.True(t, json.Valid(b), "config.json is not complete JSON: %s", b)
		}
	}
}

// TestInterrupt_DuringDataPreparationExits130 sends Ctrl-C (SIGINT) to `protolab train` while it prepares its data
// (tokenizer training on a 5 MB text file): it stops within a few seconds with exit status 130, and the run folder
// holds only its complete config.json.
func TestInterrupt_DuringDataPreparationExits130(t *testing.T) {
	cmd, dir, stderr := startTrain(t, false)
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	code, rest := waitExit(t, cmd, stderr, 3*time.Second)
	t.Logf("exited %.2f s after the interrupt", time.Since(start).Seconds())
	require.Equal(t, 130, code, "stderr:\n%s", rest)
	require.Contains(t, rest, "protolab: interrupted; stopping at the next safe point")
	require.Contains(t, rest, "context canceled")
	require.NotContains(t, rest, "data ready", "the interrupt did not land during data preparation")
	requireOnlyConfig(t, dir)
}

// TestInterrupt_SecondCtrlCExitsAtOnce holds the first interrupt (the child keeps working, as a phase that checks
// its context rarely would) and checks that a second one exits at once with status 130, leaving no file
// half-written.
func TestInterrupt_SecondCtrlCExitsAtOnce(t *testing.T) {
	cmd, dir, stderr := startTrain(t, true)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	time.Sleep(100 * time.Millisecond)
	var first []string // stderr after the first interrupt; its end would mean the child exited
	for drained := false; !drained; {
		select {
		case l, ok := <-stderr:
			require.True(t, ok, "the first interrupt was held, yet the child exited: %s", strings.Join(first, "\n"))
			first = append(first, l)
		default:
			drained = true
		}
	}
	require.Contains(t, strings.Join(first, "\n"), "protolab: interrupted; stopping at the next safe point")
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	code, rest := waitExit(t, cmd, stderr, 2*time.Second)
	t.Logf("exited %.2f s after the second interrupt", time.Since(start).Seconds())
	require.Equal(t, 130, code, "stderr:\n%s", rest)
	require.Contains(t, rest, "protolab: interrupted again; exiting at once")
	requireNothingHalfWritten(t, dir)
}

// requireNothingHalfWritten checks that no temporary file is left under dir and that every JSON file there parses.
func requireNothingHalfWritten(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if os.IsNotExist(err) && path == dir {
			return filepath.SkipDir // the folder was not created (or was removed)
		}
		require.NoError(t, err)
		require.NotContains(t, d.Name(), ".tmp", "a temporary file was left: %s", path)
		if !d.IsDir() && strings.HasSuffix(path, ".json") {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.True(t, json.Valid(b), "%s is not complete JSON", path)
		}
		return nil
	})
	require.NoError(t, err)
}

// TestInterrupt_ExitCodes checks the status main exits with: 128 + the signal's number.
func TestInterrupt_ExitCodes(t *testing.T) {
	defer caught.Store(0)
	require.Equal(t, 0, interruptExitCode())
	caught.Store(signalNumber(os.Interrupt))
	require.Equal(t, 130, interruptExitCode())
	caught.Store(signalNumber(syscall.SIGTERM))
	require.Equal(t, 143, interruptExitCode(), fmt.Sprint("SIGTERM is ", int(syscall.SIGTERM)))
}
