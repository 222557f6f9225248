package meter

import (
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCPUSeconds_CountsBusyWork(t *testing.T) {
	// Spin until getrusage (an independent kernel counter of the same process's CPU time) has seen 50 ms, so that a
	// loaded machine stretching the wall clock cannot starve the check; CPUSeconds must agree with it.
	rusage := func() float64 {
		var ru syscall.Rusage
		require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	c0, r0 := CPUSeconds(), rusage()
	x := 0.0
	for rusage()-r0 < 0.05 {
		for i := 0; i < 10_000; i++ {
			x += math.Sqrt(x + 1)
		}
	}
	used, ref := CPUSeconds()-c0, rusage()-r0
	require.InDelta(t, ref, used, 0.02, "CPUSeconds against getrusage over ≥ 50 ms of spinning (x=%g)", x)
	require.Less(t, used, 5.0)
	require.GreaterOrEqual(t, Load(), 0.0)
}

func TestCPUSeconds_ResolvesAMillisecond(t *testing.T) {
	if r := CPUResolution(); r > 1e-4 {
		t.Skipf("this system's CPU clock advances in steps of %.3g s (a sandbox or a tick-sampling kernel)", r)
	}
	c0 := CPUSeconds()
	x, used := 0.0, 0.0
	for used < 1e-3 {
		x += math.Sqrt(x + 1)
		used = CPUSeconds() - c0
	}
	require.Less(t, used, 3e-3, "CPU time advances smoothly, not by ticks (x=%g)", x)
	require.True(t, CPUResolved(used))
	require.False(t, CPUResolved(0))
}
