//go:build amd64 && goexperiment.simd

package run

import "simd/archsimd"

const simdBuilt = true

func cpuAVX512() bool { return archsimd.X86.AVX512() }
func cpuAVX2() bool   { return archsimd.X86.AVX2() }
