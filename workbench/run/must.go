package run

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Must returns v, or ends the program (a notebook cell) with err's message when err is not nil (Check). Notebooks
// use it for every call that can fail: run.Must(study.LoadOrRun(cfg, opts...)).
func Must[T any](v T, err error) T {
	Check(err)
	return v
}

// Check ends the program when err is not nil: it writes one line, "error: " and err's message (which says what
// failed, naming the key or file, and how to fix it), to stderr and exits with status 1. There is no panic and no
// stack trace: a user's mistake (an unknown key, a folder holding another run) is not a bug of the program. GoNB
// shows the line under the cell and reports the exit status, so scripts/nbcheck.py marks the cell failed.
// run.Check(plot.Display(chart)).
//
// This is the one exit outside cmd/ (docs/STYLE.md §3): notebook cells have no main of their own to return an error
// to.
func Check(err error) {
	if err == nil {
		return
	}
	writeError(os.Stderr, err)
	exit(1)
}

// exit is os.Exit; tests replace it.
var exit = os.Exit

// writeError writes err's message to w as one line, "error: <message>"; a message of several lines has its lines
// joined by "; " so that a cell's error is never split.
func writeError(w io.Writer, err error) {
	var parts []string
	for _, line := range strings.Split(fmt.Sprintf("%v", err), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	fmt.Fprintf(w, "error: %s\n", strings.Join(parts, "; "))
}
