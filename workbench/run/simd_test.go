package run

import (
	"strings"
	"testing"

	"github.com/gomlx/compute/support/envutil"
)

// simdKernels applies compute v0.1.2's registration rules: the build, GOMLX_DOT_MATMUL, then AVX-512 before AVX2,
// each with its switch.
func TestSIMDKernels_Rules(t *testing.T) {
	env := func(vals map[string]string) func(string, bool) (bool, error) {
		return func(name string, def bool) (bool, error) {
			v, ok := vals[name]
			if !ok {
				return def, nil
			}
			return v == "true", nil
		}
	}
	none := map[string]string{}
	for _, c := range []struct {
		name                string
		built, avx512, avx2 bool
		env                 map[string]string
		want, whyHas        string
	}{
		{"no simd build", false, true, true, none, "none", "GOEXPERIMENT=simd"},
		{"avx512 cpu", true, true, true, none, "AVX-512", "AVX-512"},
		{"avx2 cpu", true, false, true, none, "AVX2", "AVX2"},
		{"old cpu", true, false, false, none, "none", "neither"},
		{"avx512 off", true, true, true, map[string]string{envutil.SIMD_AVX512_Env: "false"}, "AVX2", envutil.SIMD_AVX512_Env},
		{"both off", true, true, true, map[string]string{envutil.SIMD_AVX512_Env: "false", envutil.SIMD_AVX2_Env: "false"}, "none", "switched off"},
		{"matmul off", true, true, true, map[string]string{matmulEnv: "false"}, "none", matmulEnv},
	} {
		got := simdKernels(c.built, c.avx512, c.avx2, env(c.env))
		if got.Kernels != c.want || got.Built != c.built || !strings.Contains(got.Why, c.whyHas) {
			t.Errorf("%s: got %+v, want kernels %s with a reason naming %q", c.name, got, c.want, c.whyHas)
		}
	}
}

// The tests are built with GOEXPERIMENT=simd (make test sets it): on an amd64 CPU with AVX2 the go backend's SIMD
// kernels are on, and the report says so.
func TestSIMD_ThisBuild(t *testing.T) {
	k := SIMD()
	if !simdBuilt {
		if k.Kernels != "none" || !strings.Contains(k.Why, SIMDEnv) {
			t.Errorf("a build without SIMD: %+v", k)
		}
		t.Skip("built without GOEXPERIMENT=simd (make test sets it): only the report of its absence is checked")
	}
	if cpuAVX2() && k.Kernels == "none" {
		t.Errorf("SIMD build on an AVX2 CPU reports no kernels: %+v", k)
	}
}
