//go:build !unix

package meter

// CPUSeconds is not available on this platform: it returns 0, and rates per CPU-second are then 0.
func CPUSeconds() float64 { return 0 }
