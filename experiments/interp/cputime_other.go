//go:build !unix

package interp

// processCPUSeconds is not available on this platform; Result.CPUSeconds is then 0.
func processCPUSeconds() float64 { return 0 }
