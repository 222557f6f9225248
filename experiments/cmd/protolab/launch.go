package main

import (
	"io"
	"os"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/launch"
	"github.com/protolab/protolab/workbench/run"
)

const launchSynopsis = "--devices 0,1,2,3 [--runs FILE] [--cuda-visible=false] -- COMMAND ARGS... [::: RUN...]"

// cmdLaunch runs a sweep as one process per device (workbench/launch): each run is COMMAND with its value put in
// place of every {} in the arguments (or, with no {}, split at spaces and appended), started on the first free device
// of --devices, at most one run per device at a time, in the order given. Several hosts are not supported (go-xla has
// no distributed runtime); within one process, train.devices uses several devices of a host instead.
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
	devices, err := launch.ParseDevices(*devicesFlag)
	if err != nil {
		return err
	}
	if _, err := run.ParseXLAOptions(os.Getenv(run.XLAOptionsEnv)); err != nil {
		return errors.WithMessage(err, "launch: the options every run is given")
	}
	command, runs := launch.SplitRuns(command)
	if len(command) == 0 {
		return errors.Errorf("launch: no command: give it after --, e.g. protolab launch --devices 0,1 -- "+
			"protolab train --preset small --set \"seed={}\" --out out/seed{} %s 1 2 3", launch.Separator)
	}
	if *runsFile != "" {
		more, err := launch.ReadRuns(*runsFile)
		if err != nil {
			return err
		}
		runs = append(runs, more...)
	}
	if len(runs) == 0 {
		return errors.Errorf("launch: no runs: give their values after %s at the end of the command, or in "+
			"--runs FILE", launch.Separator)
	}
	ctx, stop := interruptContext()
	defer stop()
	return launch.Run(ctx, stdout, command, runs, devices, *cudaVisible)
}
