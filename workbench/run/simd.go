package run

import (
	"fmt"

	"github.com/gomlx/compute/support/envutil"
)

// SIMDEnv is the build setting that compiles the pure-Go backend's SIMD matmul kernels (AVX-512 and AVX2, amd64
// only): GOEXPERIMENT=simd at build time. Every build ProtoLab does sets it (Makefile, the notebook kernel, Dockerfile,
// scripts/device_check.sh).
const SIMDEnv = "GOEXPERIMENT=simd"

// matmulEnv switches the pure-Go backend's packed matmul kernels (the SIMD ones among them) on and off at run time
// (github.com/gomlx/compute's internal/gobackend/dot/matmul.EnabledEnv, unexported there).
const matmulEnv = "GOMLX_DOT_MATMUL"

// SIMDKernels says which matmul kernels the pure-Go backend of this process uses and why.
type SIMDKernels struct {
	Built   bool   `json:"built"`   // compiled with GOEXPERIMENT=simd on amd64
	Kernels string `json:"kernels"` // "AVX-512", "AVX2" or "none"
	Why     string `json:"why"`     // the reason, and where to change it
}

// String is the one-line form the backend line and `protolab backend` print: "AVX-512 (…why…)".
func (k SIMDKernels) String() string { return fmt.Sprintf("%s (%s)", k.Kernels, k.Why) }

// SIMD reports the pure-Go backend's matmul kernels by the rules github.com/gomlx/compute v0.1.2 applies when it
// registers them: none without a GOEXPERIMENT=simd build on amd64 or with $GOMLX_DOT_MATMUL false; otherwise AVX-512
// when the CPU has it and $GOMLX_SIMD_AVX512 is not false, else AVX2 likewise ($GOMLX_SIMD_AVX2), else none.
func SIMD() SIMDKernels {
	return simdKernels(simdBuilt, cpuAVX512(), cpuAVX2(), envutil.ReadBool)
}

func simdKernels(built, avx512, avx2 bool, readBool func(string, bool) (bool, error)) SIMDKernels {
	k := SIMDKernels{Built: built, Kernels: "none"}
	if !built {
		k.Why = "this binary was built without " + SIMDEnv + ", so the pure-Go backend's matmuls are its portable " +
			"kernels, several times slower; rebuild with " + SIMDEnv + " (make and the notebook kernel set it)"
		return k
	}
	on := func(env string) bool {
		v, err := readBool(env, true)
		return err != nil || v // an unreadable value: gomlx itself then stops at start-up
	}
	switch {
	case !on(matmulEnv):
		k.Why = "$" + matmulEnv + " is false; unset it for the SIMD kernels"
	case avx512 && on(envutil.SIMD_AVX512_Env):
		k.Kernels, k.Why = "AVX-512", "the CPU has AVX-512; $"+envutil.SIMD_AVX512_Env+"=false selects AVX2"
	case avx2 && on(envutil.SIMD_AVX2_Env):
		k.Kernels, k.Why = "AVX2", "the CPU has AVX2"
		if avx512 {
			k.Why = "$" + envutil.SIMD_AVX512_Env + " is false; the CPU has AVX-512 too"
		}
	case avx2 || avx512:
		k.Why = "the SIMD kernels are switched off ($" + envutil.SIMD_AVX512_Env + ", $" + envutil.SIMD_AVX2_Env + ")"
	default:
		k.Why = "the CPU has neither AVX-512 nor AVX2"
	}
	return k
}
