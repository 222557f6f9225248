//go:build unix

package prism

import "syscall"

// cpuSeconds returns the user+system CPU time this process has used: attribution reports it beside wall-clock
// time, because on a shared machine wall-clock time measures the other processes as much as the method.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
