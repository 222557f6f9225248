//go:build !unix

package protot

// processCPUSeconds is not available on this platform; benchmarks then report wall-clock rates only.
func processCPUSeconds() float64 { return 0 }
