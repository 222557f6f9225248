package meter

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/wbtest"
)

func TestCPUSeconds_CountsBusyWork(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("getrusage and /proc are what CPUSeconds reads on Linux; elsewhere it reports 0 by design")
	}
	c0 := CPUSeconds()
	x := 0.0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x += math.Sqrt(x + 1)
	}
	used := CPUSeconds() - c0
	require.Greater(t, used, 0.02, "50 ms of spinning uses CPU time (x=%g)", x)
	require.Less(t, used, 5.0)
	require.GreaterOrEqual(t, Load(), 0.0)
}

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
}
