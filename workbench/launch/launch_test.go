package launch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitRuns_AtTheFirstSeparator(t *testing.T) {
	cmd, values := SplitRuns([]string{"echo", "{}", ":::", "a", ":::", "b"})
	require.Equal(t, []string{"echo", "{}"}, cmd)
	require.Equal(t, []string{"a", ":::", "b"}, values, "a later ::: is a value")
	cmd = append(cmd, "x")
	require.Equal(t, []string{"a", ":::", "b"}, values, "appending to the command leaves the values alone")
	cmd, values = SplitRuns([]string{"true"})
	require.Equal(t, []string{"true"}, cmd)
	require.Empty(t, values)
}

func TestParseDevices_DistinctNonNegative(t *testing.T) {
	got, err := ParseDevices(" 3, 1,0 ")
	require.NoError(t, err)
	require.Equal(t, []int{3, 1, 0}, got, "in the order given")
	for s, want := range map[string]string{
		"":     "--devices is required",
		"  ":   "--devices is required",
		"0,x":  `--devices "0,x": "x" is not a device number`,
		"0,-1": `"-1" is not a device number`,
		"0,":   `"" is not a device number`,
		"1,1":  "device 1 is listed twice",
	} {
		_, err := ParseDevices(s)
		require.ErrorContains(t, err, want, "%q", s)
	}
}

func TestReadRuns_SkipsBlankLinesAndComments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.txt")
	require.NoError(t, os.WriteFile(path, []byte("# more runs\nd\n\n e f \n  # indented comment\ng"), 0o644))
	got, err := ReadRuns(path)
	require.NoError(t, err)
	require.Equal(t, []string{"d", "e f", "g"}, got)
	_, err = ReadRuns(filepath.Join(t.TempDir(), "missing.txt"))
	require.ErrorContains(t, err, "launch: --runs")
}

func TestArgv_PlacesOrAppendsValue(t *testing.T) {
	require.Equal(t, []string{"protolab", "train", "--set", "seed=7", "--out", "out/s7"},
		Argv([]string{"protolab", "train", "--set", "seed={}", "--out", "out/s{}"}, "7"))
	require.Equal(t, []string{"protolab", "train", "--preset", "tiny", "--out", "o"},
		Argv([]string{"protolab", "train"}, " --preset tiny  --out o"), "no {}: the value's words are appended")
}

func TestDeviceEnv_GivesOneDevice(t *testing.T) {
	deviceEnv := func(env []string, d int, cudaVisible bool) []string {
		out, err := DeviceEnv(env, d, cudaVisible)
		require.NoError(t, err)
		return out
	}
	env := []string{"HOME=/h", "CUDA_VISIBLE_DEVICES=0,1", "PROTOLAB_XLA_OPTIONS=visible_devices=5, preallocate=false",
		"PROTOLAB_LAUNCH_DEVICE=9"}
	require.Equal(t, []string{"HOME=/h", "CUDA_VISIBLE_DEVICES=2", "PROTOLAB_XLA_OPTIONS=preallocate=false," +
		"visible_devices=0", "PROTOLAB_LAUNCH_DEVICE=2"}, deviceEnv(env, 2, true))
	require.Equal(t, []string{"HOME=/h", "CUDA_VISIBLE_DEVICES=0,1", "PROTOLAB_XLA_OPTIONS=preallocate=false," +
		"visible_devices=2", "PROTOLAB_LAUNCH_DEVICE=2"}, deviceEnv(env, 2, false))
	require.Equal(t, []string{"CUDA_VISIBLE_DEVICES=4", "PROTOLAB_XLA_OPTIONS=visible_devices=0",
		"PROTOLAB_LAUNCH_DEVICE=4"}, deviceEnv(nil, 4, true))
	got := strings.Join(deviceEnv(nil, 1, false), " ")
	require.Equal(t, "PROTOLAB_XLA_OPTIONS=visible_devices=1 PROTOLAB_LAUNCH_DEVICE=1", got)
}

func TestDeviceEnv_BadOptions(t *testing.T) {
	_, err := DeviceEnv([]string{"PROTOLAB_XLA_OPTIONS=a=1,a=2"}, 0, true)
	require.ErrorContains(t, err, "a is given twice")
}

// TestRun_FailedRunsAreNamed: the sweep goes on after a failure, and the error names each failed run, its value and
// its device, in run order; a command that cannot start fails its run the same way.
func TestRun_FailedRunsAreNamed(t *testing.T) {
	var buf bytes.Buffer
	err := Run(context.Background(), &buf, []string{"sh", "-c", "echo ran {}; exit {}"}, []string{"3", "0", "1"},
		[]int{0}, true)
	require.ErrorContains(t, err, `launch: 2 of 3 runs failed: run 0 ("3") on device 0: exit status 3; `+
		`run 2 ("1") on device 0: exit status 1`)
	for _, line := range []string{"launch: 3 runs on devices [0]: sh -c echo ran {}; exit {}",
		"[dev 0 run 0] start: sh -c echo ran 3; exit 3", "[dev 0 run 0] ran 3", "[dev 0 run 0] failed after",
		"[dev 0 run 1] ran 0", "[dev 0 run 1] done in", "[dev 0 run 2] ran 1", "1 of 3 runs finished"} {
		require.Contains(t, buf.String(), line)
	}
	err = Run(context.Background(), &buf, []string{"/nonexistent/protolab-child"}, []string{"a"}, []int{2}, false)
	require.ErrorContains(t, err, `launch: 1 of 1 runs failed: run 0 ("a") on device 2:`)
	buf.Reset()
	require.ErrorContains(t, Run(context.Background(), &buf, nil, []string{"a"}, []int{0}, true), "0 command words")
	require.ErrorContains(t, Run(context.Background(), &buf, []string{"true"}, []string{"a"}, nil, true), "0 devices")
	require.Empty(t, buf.String())
}

// startWatcher is a writer that closes started when a run's output first contains "] started".
type startWatcher struct {
	once    sync.Once
	started chan struct{}
	buf     bytes.Buffer
}

func (w *startWatcher) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("] started")) {
		w.once.Do(func() { close(w.started) })
	}
	return w.buf.Write(p) // Run serialises its writes
}

// TestRun_CancelStopsTheSweep: cancelling the context interrupts the running child (SIGINT) and starts no further
// run; with the context cancelled before Run, no run starts.
func TestRun_CancelStopsTheSweep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &startWatcher{started: make(chan struct{})}
	go func() {
		<-w.started
		cancel()
	}()
	err := Run(ctx, w, []string{"sh", "-c", "echo started; exec sleep 30"}, []string{"a", "b"}, []int{0}, true)
	require.EqualError(t, err, `launch: 1 of 2 runs failed: run 0 ("a") on device 0: signal: interrupt; `+
		`interrupted, 1 runs not started`)
	require.NotContains(t, w.buf.String(), "[dev 0 run 1]")

	marker := filepath.Join(t.TempDir(), "ran")
	var buf bytes.Buffer
	err = Run(ctx, &buf, []string{"touch", marker}, []string{"a", "b", "c"}, []int{0, 1}, true)
	require.EqualError(t, err, "launch: interrupted; 3 of 3 runs not started")
	require.Contains(t, buf.String(), "launch: 0 of 3 runs finished")
	require.NoFileExists(t, marker)
}
