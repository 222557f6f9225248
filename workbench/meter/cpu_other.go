//go:build !unix

package meter

import "math"

// CPUSeconds is not available on this platform: it returns 0, and rates per CPU-second are then 0.
func CPUSeconds() float64 { return 0 }

// cpuClockResolution is +Inf where CPUSeconds is not available: no CPU time is resolved.
func cpuClockResolution() float64 { return math.Inf(1) }
