//go:build !unix

package decoder

// processCPUSeconds is unavailable on this platform; the benchmarks then skip the per-CPU-second metric.
func processCPUSeconds() float64 { return 0 }
