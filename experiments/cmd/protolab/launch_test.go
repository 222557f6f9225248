package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLaunch_OneRunPerDeviceAtATime runs a fake sweep of five runs on two devices: every run sees its device in
// CUDA_VISIBLE_DEVICES and PROTOLAB_LAUNCH_DEVICE and visible_devices=0 in PROTOLAB_XLA_OPTIONS (after the options
// already set), no two runs share a device at once (a lock folder per device), both devices work, and every output
// line carries its run's prefix.
func TestLaunch_OneRunPerDeviceAtATime(t *testing.T) {
	locks := t.TempDir()
	runs := filepath.Join(t.TempDir(), "runs.txt")
	require.NoError(t, os.WriteFile(runs, []byte("# more runs\nd\n\n e \n"), 0o644))
	t.Setenv("PROTOLAB_XLA_OPTIONS", "memory_fraction=0.5")
	t.Setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
	script := `mkdir ` + locks + `/dev$CUDA_VISIBLE_DEVICES || echo CLASH; ` +
		`echo "value={} cuda=$CUDA_VISIBLE_DEVICES dev=$PROTOLAB_LAUNCH_DEVICE opts=$PROTOLAB_XLA_OPTIONS"; ` +
		`echo to-stderr >&2; sleep 0.3; rmdir ` + locks + `/dev$CUDA_VISIBLE_DEVICES`
	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"launch", "--devices", "3,1", "--runs", runs, "--", "sh", "-c", script,
		":::", "a", "b c", "x"}, &buf))
	out := buf.String()
	require.NotRegexp(t, `(?m)\] CLASH$`, out, "two runs shared a device")
	re := regexp.MustCompile(`(?m)^\[dev (\d) run (\d)\] value=(.*) cuda=(\d) dev=(\d) opts=(.*)$`)
	matches := re.FindAllStringSubmatch(out, -1)
	require.Len(t, matches, 5, out)
	values, used := []string{}, map[string]int{}
	for _, m := range matches {
		require.Equal(t, m[1], m[4], "CUDA_VISIBLE_DEVICES is the run's device: %s", m[0])
		require.Equal(t, m[1], m[5], "PROTOLAB_LAUNCH_DEVICE is the run's device: %s", m[0])
		require.Equal(t, "memory_fraction=0.5,visible_devices=0", m[6], "CUDA numbers the one visible GPU 0")
		values = append(values, m[2]+":"+m[3])
		used[m[1]]++
	}
	sort.Strings(values)
	require.Equal(t, []string{"0:a", "1:b c", "2:x", "3:d", "4:e"}, values, "every run once, with its value")
	require.Len(t, used, 2, "both devices ran runs: %v", used)
	require.Regexp(t, `(?m)^\[dev \d run 0\] to-stderr$`, out, "stderr is streamed with the prefix")
	require.Contains(t, out, "5 of 5 runs finished")
	entries, err := os.ReadDir(locks)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// TestLaunch_FailedRunsAreNamed: the sweep goes on after a failure, and the error names each failed run, its value
// and its device, in run order.
func TestLaunch_FailedRunsAreNamed(t *testing.T) {
	var buf bytes.Buffer
	err := dispatch([]string{"launch", "--devices", "0", "--", "sh", "-c", "echo ran {}; exit {}", ":::", "3", "0",
		"1"}, &buf)
	require.ErrorContains(t, err, `launch: 2 of 3 runs failed: run 0 ("3") on device 0: exit status 3; `+
		`run 2 ("1") on device 0: exit status 1`)
	for _, line := range []string{"[dev 0 run 0] ran 3", "[dev 0 run 1] ran 0", "[dev 0 run 2] ran 1"} {
		require.Contains(t, buf.String(), line)
	}
	require.Contains(t, buf.String(), "1 of 3 runs finished")
	// A command that cannot start fails its run the same way.
	err = dispatch([]string{"launch", "--devices", "2", "--", "/nonexistent/protolab-child", ":::", "a"}, &buf)
	require.ErrorContains(t, err, `run 0 ("a") on device 2:`)
}

func TestLaunch_Arguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--", "true", ":::", "a"}, "--devices is required"},
		{[]string{"--devices", "0,x", "--", "true", ":::", "a"}, `--devices "0,x": "x" is not a device number`},
		{[]string{"--devices", "0,-1", "--", "true", ":::", "a"}, `"-1" is not a device number`},
		{[]string{"--devices", "1,1", "--", "true", ":::", "a"}, "device 1 is listed twice"},
		{[]string{"--devices", "0"}, "launch: no command: give it after --"},
		{[]string{"--devices", "0", "--", ":::", "a"}, "launch: no command"},
		{[]string{"--devices", "0", "--", "true"}, "launch: no runs: give their values after :::"},
		{[]string{"--devices", "0", "--runs", "/nonexistent/runs.txt", "--", "true"}, "launch: --runs"},
		{[]string{"--devices", "0", "stray", "--", "true", ":::", "a"}, `launch: unexpected argument "stray"`},
		{[]string{"--devices", "0", "a", "b", "--", "true", ":::", "a"}, `unexpected argument "b"`},
	} {
		var buf bytes.Buffer
		require.ErrorContains(t, dispatch(append([]string{"launch"}, c.args...), &buf), c.want, "%q", c.args)
		require.NotContains(t, buf.String(), "[dev", "%q: nothing runs", c.args)
	}
}

// TestLaunch_BadXLAOptions checks that options the backend would refuse stop the sweep before any run starts.
func TestLaunch_BadXLAOptions(t *testing.T) {
	t.Setenv("PROTOLAB_XLA_OPTIONS", "preallocate")
	marker := filepath.Join(t.TempDir(), "ran")
	var out bytes.Buffer
	err := dispatch([]string{"launch", "--devices", "0", "--", "touch", marker, ":::", "a"}, &out)
	require.ErrorContains(t, err, `launch: the options every run is given: PROTOLAB_XLA_OPTIONS="preallocate"`)
	require.NoFileExists(t, marker)
}
