//go:build unix

package run

import "syscall"

// cpuTimes is the CPU time a process has spent, in seconds: in user mode and in the kernel on its behalf.
type cpuTimes struct{ user, system float64 }

// processCPU returns the CPU time of the whole process so far (getrusage RUSAGE_SELF: every thread), or zeros when
// the call fails.
func processCPU() cpuTimes {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return cpuTimes{}
	}
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return cpuTimes{user: sec(u.Utime), system: sec(u.Stime)}
}
