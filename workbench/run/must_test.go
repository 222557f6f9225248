package run_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/pkg/errors"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/run"
)

// mustChildEnv makes the test binary, run again by TestMust_ExitsWithOneLine, play a notebook cell that fails.
const mustChildEnv = "PROTOLAB_TEST_MUST_CHILD"

func TestMust_ReturnsTheValue(t *testing.T) {
	require.Equal(t, 3, run.Must(3, nil))
	run.Check(nil) // returns
}

// TestMust_ExitsWithOneLine runs a cell that calls run.Must with a wrapped error in a child process: it exits with
// status 1, and its stderr is one line with the whole message (its lines joined) and no panic or stack trace.
func TestMust_ExitsWithOneLine(t *testing.T) {
	if os.Getenv(mustChildEnv) == "1" {
		err := errors.Wrapf(errors.New("unknown key \"train.stepz\"\n  `protolab keys baseline` lists the keys"),
			"baseline") // a message of two lines is joined into one
		run.Must(0, err)
		t.Fatal("run.Must returned after an error")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMust_ExitsWithOneLine$", "-test.count=1")
	cmd.Env = append(os.Environ(), mustChildEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	require.Equal(t, 1, exitErr.ExitCode())
	got := stderr.String()
	require.Equal(t, "error: baseline: unknown key \"train.stepz\"; `protolab keys baseline` lists the keys\n", got)
	for _, bad := range []string{"goroutine", "panic", ".go:"} {
		require.NotContains(t, got, bad)
	}
	require.Equal(t, 1, strings.Count(got, "\n"))
}
