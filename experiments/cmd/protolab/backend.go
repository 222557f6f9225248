package main

import (
	"fmt"
	"io"
	"time"

	"github.com/gomlx/go-xla/installer"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // gomlx's graph API reads best unqualified
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/run"
)

// cmdBackend shows which backend ProtoLab would use and why, lists the PJRT plugins found, and optionally installs
// go-xla's plugins or starts the backend and runs one small computation on it.
func cmdBackend(args []string, stdout io.Writer) error {
	fs := newFlags("backend", "[--check] [--install [--dir DIR]]", stdout)
	check := fs.Bool("check", false, "start the backend and run a 512×512 float32 matmul on it; print the devices and the time")
	install := fs.Bool("install", false, "download go-xla's PJRT plugins (the CPU plugin, and the CUDA plugin when an NVIDIA "+
		"GPU is present) into DIR/go-xla; needs network access")
	dir := fs.String("dir", "", "with --install: the lib folder to install into (default ~/.local/lib)")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if *dir != "" && !*install {
		return errors.New("backend: --dir is for --install")
	}
	if *install {
		fmt.Fprintf(stdout, "installing go-xla v0.4.1's PJRT plugins (CPU plugin pjrt-cpu-binaries v0.114.0; CUDA from "+
			"the jax-cuda13-pjrt wheel when a GPU is present)...\n")
		if err := installer.AutoInstall(*dir, true, installer.Normal); err != nil {
			return errors.Wrap(err, "backend --install: go-xla's installer failed (it needs access to api.github.com "+
				"and, for CUDA, pypi.org); on an offline machine copy a plugin .so over and set GOMLX_BACKEND="+
				"xla:/abs/path/plugin.so")
		}
	}
	fmt.Fprint(stdout, run.DescribeBackend())
	if !*check {
		return nil
	}
	b, err := run.Backend()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "started: %s (%s), %d device(s)\n", run.BackendName(), b.Description(), b.NumDevices())
	e, err := NewExec(b, func(x *Node) *Node { return ReduceAllSum(MatMul(x, x)) })
	if err != nil {
		return err
	}
	const n = 512
	ones := make([]float32, n*n)
	for i := range ones {
		ones[i] = 1
	}
	in := tensors.FromFlatDataAndDimensions(ones, n, n)
	start := time.Now()
	out, err := e.Exec(in)
	if err != nil {
		return errors.Wrap(err, "backend --check: the matmul failed")
	}
	got := out[0].Value().(float32)
	if want := float32(n * n * n); got != want {
		return errors.Errorf("backend --check: sum of ones(%d,%d)² is %g, want %g: this backend computes wrongly",
			n, n, got, want)
	}
	fmt.Fprintf(stdout, "check: sum(ones(%d,%d)·ones(%d,%d)) = %g, correct, in %v (first run, includes compilation)\n",
		n, n, n, n, got, time.Since(start).Round(time.Millisecond))
	return nil
}
