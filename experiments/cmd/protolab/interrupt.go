package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// caught is the number of the first interrupting signal (SIGINT for Ctrl-C, or SIGTERM), 0 before any.
var caught atomic.Int32

// holdFirstInterrupt, when true, leaves the context running after the first interrupt. It is a test seam only: the
// test of the second interrupt sets it in its child process so that the first one cannot end the command first.
var holdFirstInterrupt bool

// interruptContext returns a context that the first Ctrl-C (SIGINT) or SIGTERM cancels: every long phase (data
// preparation, tokenizer training, training, evaluation, sampling) checks it and returns, checkpointing first when it
// trains, and main then exits with 128 + the signal number (130 for Ctrl-C). A second signal exits at once with that
// status; every file ProtoLab writes is written to a temporary name and renamed, so no file is left half-written.
// stop ends the handling: a later signal has its default effect.
func interruptContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			caught.CompareAndSwap(0, signalNumber(s))
			fmt.Fprintln(os.Stderr, "protolab: interrupted; stopping at the next safe point (interrupt again to exit "+
				"at once)")
			if !holdFirstInterrupt {
				cancel()
			}
		case <-done:
			return
		}
		select {
		case <-ch:
			fmt.Fprintln(os.Stderr, "protolab: interrupted again; exiting at once")
			os.Exit(interruptExitCode())
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

// interruptExitCode is 128 + the number of the first interrupting signal (130 after Ctrl-C), or 0 when none came.
func interruptExitCode() int {
	if s := caught.Load(); s != 0 {
		return 128 + int(s)
	}
	return 0
}

func signalNumber(s os.Signal) int32 {
	if n, ok := s.(syscall.Signal); ok {
		return int32(n)
	}
	return int32(syscall.SIGINT)
}
