package main

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

const launchSynopsis = "--devices 0,1,2,3 [--runs FILE] [--cuda-visible=false] -- COMMAND ARGS... [::: RUN...]"

// launchRunSep separates the command from the runs' values, as in GNU parallel.
const launchRunSep = ":::"

// launchRun is one run of a sweep: its index (from 0, in the order given) and its value.
type launchRun struct {
	index int
	value string
}

// cmdLaunch runs a sweep as one process per device: each run is COMMAND with its value put in place of every {} in
// the arguments (or, with no {}, split at spaces and appended), started on the first free device of --devices, at
// most one run per device at a time, in the order given. Several hosts are not supported (go-xla has no distributed
// runtime); within one process, train.devices uses several devices of a host instead.
func cmdLaunch(args []string, stdout io.Writer) error {
	fs := newFlags("launch", launchSynopsis, stdout)
	devicesFlag := fs.String("devices", "", "comma-separated device numbers to run on, one run at a time each "+
		"(required), e.g. 0,1,2,3")
	runsFile := fs.String("runs", "", "a file with one run value per line (blank lines and lines starting with # "+
		"skipped), after those given after :::")
	cudaVisible := fs.Bool("cuda-visible", true, "set CUDA_VISIBLE_DEVICES=<device> in each run, so that it sees "+
		"one GPU, which CUDA then numbers 0 (the run gets "+run.XLAOptionsEnv+" visible_devices=0); false leaves "+
		"CUDA_VISIBLE_DEVICES alone and passes visible_devices=<device>")
	pre, command := args, []string(nil) // the command follows the first "--"
	for i, a := range args {
		if a == "--" {
			pre, command = args[:i], args[i+1:]
			break
		}
	}
	words, err := parseArgs(fs, pre, "-- COMMAND")
	if err != nil {
		return err
	}
	if len(words) > 0 {
		return errors.Errorf("launch: unexpected argument %q (launch takes flags, then -- and the command; quote a "+
			"flag value that has spaces, e.g. --prompt \"The queen\")", words[0])
	}
	devices, err := parseDevices(*devicesFlag)
	if err != nil {
		return err
	}
	if _, err := run.ParseXLAOptions(os.Getenv(run.XLAOptionsEnv)); err != nil {
		return errors.WithMessage(err, "launch: the options every run is given")
	}
	var runs []launchRun
	for i, w := range command {
		if w == launchRunSep {
			for _, v := range command[i+1:] {
				runs = append(runs, launchRun{index: len(runs), value: v})
			}
			command = command[:i]
			break
		}
	}
	if len(command) == 0 {
		return errors.Errorf("launch: no command: give it after --, e.g. protolab launch --devices 0,1 -- "+
			"protolab train --preset small --set \"seed={}\" --out out/seed{} %s 1 2 3", launchRunSep)
	}
	if *runsFile != "" {
		more, err := readRuns(*runsFile)
		if err != nil {
			return err
		}
		for _, v := range more {
			runs = append(runs, launchRun{index: len(runs), value: v})
		}
	}
	if len(runs) == 0 {
		return errors.Errorf("launch: no runs: give their values after %s at the end of the command, or in "+
			"--runs FILE", launchRunSep)
	}
	ctx, stop := interruptContext()
	defer stop()
	return launch(ctx, stdout, command, runs, devices, *cudaVisible)
}

// parseDevices reads --devices: distinct non-negative integers.
func parseDevices(s string) ([]int, error) {
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

// readRuns reads a --runs file.
func readRuns(path string) ([]string, error) {
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

// runArgv is command with value in place of every {}, or, when no argument has {}, with value split at spaces and
// appended.
func runArgv(command []string, value string) []string {
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

// deviceEnv returns env with the variables that give a child process device d: CUDA_VISIBLE_DEVICES=d (with
// cudaVisible) and visible_devices in PROTOLAB_XLA_OPTIONS (d, or 0 when CUDA_VISIBLE_DEVICES already leaves one
// GPU, which CUDA numbers 0), added to the options already there (an existing visible_devices is replaced), plus
// PROTOLAB_LAUNCH_DEVICE=d for the run's own use.
func deviceEnv(env []string, d int, cudaVisible bool) ([]string, error) {
	var out []string
	opts := ""
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == run.XLAOptionsEnv:
			opts = v
		case k == "PROTOLAB_LAUNCH_DEVICE", cudaVisible && k == "CUDA_VISIBLE_DEVICES":
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
	return append(out, run.XLAOptionsEnv+"="+opts, "PROTOLAB_LAUNCH_DEVICE="+strconv.Itoa(d)), nil
}

// launchFailure is a run that did not succeed.
type launchFailure struct {
	run    launchRun
	device int
	err    error
}

// launch runs every run on the devices, one at a time per device, writing each output line of a run (stdout and
// stderr) to stdout as "[dev D run I] line". It returns an error naming every failed run, or the interruption.
func launch(ctx context.Context, stdout io.Writer, command []string, runs []launchRun, devices []int,
	cudaVisible bool) error {
	out := &lineWriter{w: stdout}
	free := make(chan int, len(devices))
	for _, d := range devices {
		free <- d
	}
	var (
		mu       sync.Mutex
		failures []launchFailure
		wg       sync.WaitGroup
	)
	start := time.Now()
	out.printf("launch: %d runs on devices %v: %s\n", len(runs), devices, strings.Join(command, " "))
	started := 0
	for _, r := range runs {
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
		go func(r launchRun, d int) {
			defer wg.Done()
			defer func() { free <- d }()
			if err := runOne(ctx, out, command, r, d, cudaVisible); err != nil {
				mu.Lock()
				failures = append(failures, launchFailure{run: r, device: d, err: err})
				mu.Unlock()
			}
		}(r, d)
	}
	wg.Wait()
	out.printf("launch: %d of %d runs finished in %.0f s, %d failed\n", started-len(failures), len(runs),
		time.Since(start).Seconds(), len(failures))
	if len(failures) > 0 {
		// In run order, so the message reads like the sweep.
		for i := 1; i < len(failures); i++ {
			for j := i; j > 0 && failures[j].run.index < failures[j-1].run.index; j-- {
				failures[j], failures[j-1] = failures[j-1], failures[j]
			}
		}
		var parts []string
		for _, f := range failures {
			parts = append(parts, fmt.Sprintf("run %d (%q) on device %d: %v", f.run.index, f.run.value, f.device,
				f.err))
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

// runOne runs r on device d and waits for it. An interruption reaches the child as SIGINT (it checkpoints and
// stops), then SIGKILL after a minute.
func runOne(ctx context.Context, out *lineWriter, command []string, r launchRun, d int, cudaVisible bool) error {
	argv := runArgv(command, r.value)
	prefix := fmt.Sprintf("[dev %d run %d] ", d, r.index)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	env, err := deviceEnv(os.Environ(), d, cudaVisible)
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
