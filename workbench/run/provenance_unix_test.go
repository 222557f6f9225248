//go:build unix

package run_test

import (
	"encoding/json"
	"math"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/run"
)

// cpuSeconds is the process's user plus system CPU time so far.
func cpuSeconds(t *testing.T) float64 {
	t.Helper()
	var u syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	sec := func(v syscall.Timeval) float64 { return float64(v.Sec) + float64(v.Usec)/1e6 }
	return sec(u.Utime) + sec(u.Stime)
}

// The CPU seconds are the process's CPU time between NewProvenance and Finish: at least what a busy loop between them
// spent, at most what the process spent around them (not the process's total), written under snake_case keys
// beside the wall seconds (End − Start); a result stored before the fields existed loads with zeros.
func TestProvenance_CPUAndWallSeconds(t *testing.T) {
	x := 1.0
	busy := func(until func() bool) {
		for !until() {
			for range 10000 {
				x = math.Sqrt(x + 1)
			}
		}
	}
	busy(func() bool { return cpuSeconds(t) > 0.1 }) // a process total that the difference is not
	before := cpuSeconds(t)
	p := run.NewProvenance(expCfg{}, "", 0)
	start := cpuSeconds(t)
	busy(func() bool { return cpuSeconds(t)-start >= 0.2 })
	inner := cpuSeconds(t) - start
	p.Finish()
	outer := cpuSeconds(t) - before
	require.Greater(t, x, 1.0)
	got := p.CPUUserSeconds + p.CPUSystemSeconds
	require.GreaterOrEqual(t, got, inner-0.01, "the busy loop's CPU time (getrusage counts in µs; 10 ms slack)")
	require.LessOrEqual(t, got, outer+0.01, "the difference since NewProvenance, not the process's total")
	require.InDelta(t, p.End.Sub(p.Start).Seconds(), p.WallSeconds, 1e-9, "wall seconds are End − Start")
	b, err := json.Marshal(p)
	require.NoError(t, err)
	for _, key := range []string{`"cpu_model":`, `"wall_s":`, `"cpu_user_s":`, `"cpu_system_s":`} {
		require.Contains(t, string(b), key)
	}
	var old run.Provenance
	require.NoError(t, json.Unmarshal([]byte(`{"git_commit":"abc","num_cpu":2,"start":"2025-01-02T03:04:05Z"}`), &old))
	require.Equal(t, "abc", old.GitCommit)
	require.Zero(t, old.WallSeconds+old.CPUUserSeconds+old.CPUSystemSeconds)
	require.Empty(t, old.CPUModel)
}
