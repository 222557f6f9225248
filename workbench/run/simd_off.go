//go:build !(amd64 && goexperiment.simd)

package run

const simdBuilt = false

func cpuAVX512() bool { return false }
func cpuAVX2() bool   { return false }
