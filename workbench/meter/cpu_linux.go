//go:build linux

package meter

import (
	"syscall"
	"unsafe"
)

// clockProcessCPUTime is CLOCK_PROCESS_CPUTIME_ID of clock_gettime(2): the CPU time of all the process's threads,
// from the scheduler's nanosecond accounting. getrusage(2) reports the same time sampled at the scheduler tick
// (4 or 10 ms), which left a few decoded tokens at 0 or one tick per step.
const clockProcessCPUTime = 2

// CPUSeconds returns the user + system CPU time this process has used so far, in seconds.
func CPUSeconds() float64 {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return rusageSeconds()
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

// cpuClockResolution returns the resolution clock_getres(2) declares for CPUSeconds (one tick if that fails).
func cpuClockResolution() float64 {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETRES, clockProcessCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return rusageResolution
	}
	return max(float64(ts.Sec)+float64(ts.Nsec)/1e9, 1e-9)
}
