//go:build !unix

package probe

// processCPUSeconds is unavailable on this platform; the benchmark then omits its cpu-ms/op metric.
func processCPUSeconds() float64 { return 0 }
