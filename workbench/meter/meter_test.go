package meter

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/wbtest"
)

func TestRatio_ZeroWhenUnmeasured(t *testing.T) {
	require.Equal(t, 2.0, Ratio(4, 2))
	require.Equal(t, 0.0, Ratio(4, 0))
	require.Equal(t, 0.0, Ratio(4, math.NaN()))
}

func TestStartMemory_SeesAnAllocation(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the resident set comes from /proc/self/status, which only Linux has")
	}
	m := StartMemory()
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	time.Sleep(20 * time.Millisecond)
	peak, base, heap := m.Stop()
	require.Greater(t, peak-base, 32.0, "a 64 MB buffer raises the resident set (buf[1]=%d)", buf[1])
	require.Greater(t, heap, 32.0)
}

func TestMeasureRates_Positive(t *testing.T) {
	r := MeasureRates(wbtest.Backend(t))
	require.Positive(t, r.MatMulGFLOPs)
	require.Positive(t, r.ElementwiseGops)
	require.Positive(t, r.RoofGFLOPs)
}

// The Linux clock resolves a millisecond of CPU time: spinning until CPUSeconds has advanced by 1 ms overshoots by
// microseconds, where getrusage's tick (4 or 10 ms) jumped straight from 0 to a whole tick.
func TestFormatResolved_HidesUnresolvedDigits(t *testing.T) {
	for _, c := range []struct {
		v, res float64
		want   string
	}{
		{3.3333333, 0.001, "3.33"},
		{0, 10.0 / 3, "<3.3"},         // three tokens timed with a 10 ms clock: no tick in the interval
		{3.3333333, 10.0 / 3, "<6.7"}, // one tick: the time was anywhere below two ticks
		{1234.6, 0.01, "1235"},
		{0.000123, 1e-9, "0.000123"},
		{1, 0, "?"},
	} {
		require.Equal(t, c.want, FormatResolved(c.v, c.res), "%g at resolution %g", c.v, c.res)
	}
}

// A clock that advances in 10 ms ticks, as getrusage does on tick-sampling kernels, has a 10 ms resolution
// whatever it declares; a clock that never advances within the budget resolves nothing shorter than it.
func TestGranularity_SeesTicks(t *testing.T) {
	t0 := time.Now()
	tick := func() float64 { return math.Floor(time.Since(t0).Seconds()/0.01) * 0.01 }
	require.InDelta(t, 0.01, granularity(tick, 200*time.Millisecond), 1e-9)
	require.Equal(t, 0.05, granularity(func() float64 { return 1 }, 50*time.Millisecond))
	require.Less(t, granularity(func() float64 { return time.Since(t0).Seconds() }, 50*time.Millisecond), 1e-3)
}
