package run

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// cpuModelFrom reads the first "model name" of a /proc/cpuinfo text (an x86 excerpt with two processors), and
// nothing from one without (an ARM excerpt): CPUModel then falls back to GOARCH.
func TestCPUModelFrom_ProcCPUInfo(t *testing.T) {
	x86 := "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 106\n" +
		"model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz\nflags\t\t: fpu vme avx512f\n\n" +
		"processor\t: 1\nmodel name\t: Another CPU\n"
	require.Equal(t, "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", cpuModelFrom(x86))
	arm := "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"
	require.Equal(t, "", cpuModelFrom(arm))
	require.Equal(t, "", cpuModelFrom(""))
	require.NotEmpty(t, CPUModel())
	if runtime.GOOS != "linux" {
		require.Equal(t, runtime.GOARCH, CPUModel())
	}
}
