//go:build !unix

package run

// cpuTimes is the CPU time a process has spent, in seconds: in user mode and in the kernel on its behalf.
type cpuTimes struct{ user, system float64 }

// processCPU returns zeros: this system has no getrusage, so provenance records no CPU seconds.
func processCPU() cpuTimes { return cpuTimes{} }
