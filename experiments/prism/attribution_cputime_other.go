//go:build !unix

package prism

// cpuSeconds returns 0 where the process CPU time is not available; CPU-time fields are then 0.
func cpuSeconds() float64 { return 0 }
