//go:build unix && !linux

package meter

// CPUSeconds returns the user + system CPU time this process has used so far, in seconds (getrusage(2)).
func CPUSeconds() float64 { return rusageSeconds() }

// cpuClockResolution is the scheduler tick of getrusage(2).
func cpuClockResolution() float64 { return rusageResolution }
