package launch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/run"
)

// Separator separates the command from the runs' values, as in GNU parallel.
const Separator = ":::"

// DeviceVar is the environment variable that tells each run the number of its device.
const DeviceVar = "PROTOLAB_LAUNCH_DEVICE"

// SplitRuns splits command at the first Separator: the command before it, and the runs' values after it (none when
// command has no Separator). Both share command's array, capped so that appending to either copies.
func SplitRuns(command []string) (cmd, values []string) {
	for i, w := range command {
		if w == Separator {
			return command[:i:i], command[i+1 : len(command) : len(command)]
		}
	}
	return command, nil
}

// ParseDevices reads a list of devices ("0,1,2,3"): distinct non-negative integers, in the order given. An empty list
// is an error.
func ParseDevices(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("launch: --devices is required, e.g. --devices 0,1,2,3 (the GPUs of this host, as " +
			"nvidia-smi numbers them)")
	}
	var out []int
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d < 0 {
			return nil, errors.Errorf("launch: --devices %q: %q is not a device number (an integer ≥ 0)", s, f)
		}
		if seen[d] {
			return nil, errors.Errorf("launch: --devices %q: device %d is listed twice", s, d)
		}
		seen[d] = true
		out = append(out, d)
	}
	return out, nil
}

// ReadRuns reads a file of run values: one per line, trimmed, skipping blank lines and lines starting with #.
func ReadRuns(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrap(err, "launch: --runs")
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out, nil
}

// Argv is command with value in place of every {}, or, when no argument has {}, with value split at spaces and
// appended.
func Argv(command []string, value string) []string {
	argv := make([]string, 0, len(command)+1)
	placed := false
	for _, a := range command {
		if strings.Contains(a, "{}") {
			placed = true
			a = strings.ReplaceAll(a, "{}", value)
		}
		argv = append(argv, a)
	}
	if !placed {
		argv = append(argv, strings.Fields(value)...)
	}
	return argv
}

// DeviceEnv returns env with the variables that give a child process device d: CUDA_VISIBLE_DEVICES=d (with
// cudaVisible) and visible_devices in PROTOLAB_XLA_OPTIONS (d, or 0 when CUDA_VISIBLE_DEVICES already leaves one
// GPU, which CUDA numbers 0), added to the options already there (an existing visible_devices is replaced), plus
// DeviceVar=d for the run's own use. Options that workbench/run cannot parse are an error.
func DeviceEnv(env []string, d int, cudaVisible bool) ([]string, error) {
	var out []string
	opts := ""
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == run.XLAOptionsEnv:
			opts = v
		case k == DeviceVar, cudaVisible && k == "CUDA_VISIBLE_DEVICES":
		default:
			out = append(out, kv)
		}
	}
	ordinal := d
	if cudaVisible {
		out = append(out, "CUDA_VISIBLE_DEVICES="+strconv.Itoa(d))
		ordinal = 0
	}
	opts, err := run.SetXLAOption(opts, "visible_devices", []int64{int64(ordinal)})
	if err != nil {
		return nil, errors.WithMessage(err, "launch")
	}
	return append(out, run.XLAOptionsEnv+"="+opts, DeviceVar+"="+strconv.Itoa(d)), nil
}

// failure is a run that did not succeed: its index in the runs, its value, its device and its error.
type failure struct {
	index  int
	value  string
	device int
	err    error
}

// Run runs command once per value of runs (run i has value runs[i]; see Argv) on the devices, at most one run per
// device at a time, each started on the first free device in the order of runs, with DeviceEnv's environment. It
// writes each output line of a run (stdout and stderr) to stdout as "[dev D run I] line", with a line when each run
// starts and ends and a summary of the sweep. It waits for every started run and returns an error naming every failed
// run (index, value, device and error, in run order), or, once ctx is cancelled, the interruption and the number of
// runs not started; nil when every run succeeded. An empty command or device list is an error, before any output.
func Run(ctx context.Context, stdout io.Writer, command, runs []string, devices []int, cudaVisible bool) error {
	if len(command) == 0 || len(devices) == 0 {
		return errors.Errorf("launch: %d command words and %d devices, want at least one of each", len(command),
			len(devices))
	}
	out := &lineWriter{w: stdout}
	free := make(chan int, len(devices))
	for _, d := range devices {
		free <- d
	}
	var (
		mu       sync.Mutex
		failures []failure
		wg       sync.WaitGroup
	)
	start := time.Now()
	out.printf("launch: %d runs on devices %v: %s\n", len(runs), devices, strings.Join(command, " "))
	started := 0
	for i, value := range runs {
		var d int
		select {
		case d = <-free:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		started++
		wg.Add(1)
		go func(i int, value string, d int) {
			defer wg.Done()
			defer func() { free <- d }()
			if err := runOne(ctx, out, command, i, value, d, cudaVisible); err != nil {
				mu.Lock()
				failures = append(failures, failure{index: i, value: value, device: d, err: err})
				mu.Unlock()
			}
		}(i, value, d)
	}
	wg.Wait()
	out.printf("launch: %d of %d runs finished in %.0f s, %d failed\n", started-len(failures), len(runs),
		time.Since(start).Seconds(), len(failures))
	if len(failures) > 0 {
		// In run order, so the message reads like the sweep.
		for i := 1; i < len(failures); i++ {
			for j := i; j > 0 && failures[j].index < failures[j-1].index; j-- {
				failures[j], failures[j-1] = failures[j-1], failures[j]
			}
		}
		var parts []string
		for _, f := range failures {
			parts = append(parts, fmt.Sprintf("run %d (%q) on device %d: %v", f.index, f.value, f.device, f.err))
		}
		msg := fmt.Sprintf("launch: %d of %d runs failed: %s", len(failures), len(runs), strings.Join(parts, "; "))
		if ctx.Err() != nil {
			msg += fmt.Sprintf("; interrupted, %d runs not started", len(runs)-started)
		}
		return errors.New(msg)
	}
	if ctx.Err() != nil {
		return errors.Errorf("launch: interrupted; %d of %d runs not started", len(runs)-started, len(runs))
	}
	return nil
}

// runOne runs run i (value) on device d and waits for it. Cancelling ctx reaches the child as SIGINT (it checkpoints
// and stops), then SIGKILL after a minute.
func runOne(ctx context.Context, out *lineWriter, command []string, i int, value string, d int,
	cudaVisible bool) error {
	argv := Argv(command, value)
	prefix := fmt.Sprintf("[dev %d run %d] ", d, i)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	env, err := DeviceEnv(os.Environ(), d, cudaVisible)
	if err != nil {
		return err
	}
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
		for sc.Scan() {
			out.printf("%s%s\n", prefix, sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr) // a line over the limit: keep the child from blocking
	}()
	out.printf("%sstart: %s\n", prefix, strings.Join(argv, " "))
	t0 := time.Now()
	err = cmd.Run()
	_ = pw.Close()
	<-done
	if err != nil {
		out.printf("%sfailed after %.0f s: %v\n", prefix, time.Since(t0).Seconds(), err)
		return err
	}
	out.printf("%sdone in %.0f s\n", prefix, time.Since(t0).Seconds())
	return nil
}

// lineWriter serialises whole lines from several goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}
