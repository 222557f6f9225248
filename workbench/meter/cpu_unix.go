//go:build unix

package meter

import "syscall"

// rusageResolution is the resolution assumed for getrusage(2): most kernels sample user and system time at the
// scheduler tick, at most every 10 ms.
const rusageResolution = 0.01

// rusageSeconds returns the user + system CPU time of getrusage(2) in seconds, or 0.
func rusageSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
