// Package wbtest holds test helpers shared by ProtoLab's packages: the pure-Go backend with ProtoLab's gradient rules,
// tolerance comparisons written the way docs/STYLE.md §11 states them, seeded random inputs, and a finite-difference
// gradient check built on gonum's diff/fd.
//
// It imports only workbench/gradfix of ProtoLab (itself a leaf), so that layer tests run with the same gradient rules as
// training does.
package wbtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend" // the pure-Go backend
	"github.com/gomlx/gomlx/core/tensors"
	"gonum.org/v1/gonum/diff/fd"

	_ "github.com/protolab/protolab/workbench/gradfix" // gradient rules used everywhere in ProtoLab
)

// BackendConfig is the backend tests use: pure Go, unlimited parallelism (the default worker pool can deadlock on
// 2 cores; run.GoBackendConfig). A variable so that a benchmark binary can be built for another configuration
// (go test -c -ldflags "-X github.com/protolab/protolab/workbench/wbtest.BackendConfig=go:parallelism=4").
var BackendConfig = "go:parallelism=-1"

var (
	backendOnce sync.Once
	backend     compute.Backend
	backendErr  error
)

// Backend returns the process-wide pure-Go test backend, ignoring $GOMLX_BACKEND so that tests are reproducible.
func Backend(t testing.TB) compute.Backend {
	t.Helper()
	backendOnce.Do(func() {
		// The go backend prints "Go backend: parallelism set to N" to stdout, which would enter Examples' output.
		stdout := os.Stdout
		if null, err := os.Open(os.DevNull); err == nil {
			os.Stdout = null
			defer func() { os.Stdout = stdout; null.Close() }()
		}
		backend, backendErr = compute.NewWithConfig(BackendConfig)
	})
	if backendErr != nil {
		t.Fatalf("wbtest.Backend: %+v", backendErr)
	}
	return backend
}

// Close reports whether |got-want| ≤ tol·(1+|want|), the comparison of docs/STYLE.md §11 (two-sided, relative
// above 1).
func Close(want, got, tol float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return false
	}
	return math.Abs(got-want) <= tol*(1+math.Abs(want))
}

// RequireClose fails the test at the first element where |got-want| > tol·(1+|want|), or when the lengths differ.
// name labels the quantity in the failure message.
func RequireClose(t testing.TB, name string, want, got []float64, tol float64) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: len(got)=%d, want %d", name, len(got), len(want))
	}
	for i := range want {
		if !Close(want[i], got[i], tol) {
			t.Fatalf("%s[%d]: got %.15g, want %.15g (|diff|=%.3g > %.3g·(1+|want|))",
				name, i, got[i], want[i], math.Abs(got[i]-want[i]), tol)
		}
	}
}

// MaxAbsDiff returns max_i |a_i - b_i|; it panics when the lengths differ.
func MaxAbsDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("wbtest.MaxAbsDiff: lengths %d and %d", len(a), len(b)))
	}
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// RNG returns a deterministic random source for a test; the same seed gives the same stream.
func RNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// Normal returns n standard-normal draws scaled by std.
func Normal(rng *rand.Rand, n int, std float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64() * std
	}
	return out
}

// Tensor64 builds a float64 tensor with the given dimensions from flat row-major values; it panics on a size mismatch.
func Tensor64(values []float64, dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	if n != len(values) {
		panic(fmt.Sprintf("wbtest.Tensor64: %d values for dims %v", len(values), dims))
	}
	return tensors.FromFlatDataAndDimensions(values, dims...)
}

// Flat64 returns a tensor's values as float64, flattened in row-major order. It takes float64, float32, int32 and
// int64 tensors and panics on any other dtype.
func Flat64(t *tensors.Tensor) []float64 {
	var out []float64
	t.MustConstFlatData(func(data any) {
		switch d := data.(type) {
		case []float64:
			out = append(out, d...)
		case []float32:
			out = convert(d)
		case []int32:
			out = convert(d)
		case []int64:
			out = convert(d)
		default:
			panic(fmt.Sprintf("wbtest.Flat64: unsupported dtype %s", t.DType()))
		}
	})
	return out
}

func convert[T float32 | int32 | int64](d []T) []float64 {
	out := make([]float64, len(d))
	for i, v := range d {
		out[i] = float64(v)
	}
	return out
}

// FDGradient returns the central finite-difference gradient of f at x (gonum diff/fd), with step h (0 means gonum's
// default for the central formula).
func FDGradient(f func(x []float64) float64, x []float64, h float64) []float64 {
	return fd.Gradient(nil, f, x, &fd.Settings{Formula: fd.Central, Step: h})
}

// RequireGradient compares an analytic gradient with central finite differences of f at x using the tolerance
// |analytic-fd| ≤ tol·(1+|fd|) (docs/STYLE.md §11.2 uses tol = 1e-6 in float64).
func RequireGradient(t testing.TB, name string, f func(x []float64) float64, x, analytic []float64, tol float64) {
	t.Helper()
	numeric := FDGradient(f, x, 0)
	RequireClose(t, name+" (analytic vs finite differences)", numeric, analytic, tol)
}

// LongRun starts a test that runs a Small preset: it skips under -short with the reason given, and returns the
// output folder, $outEnv when set (so that trained models are reused between runs) or else a temporary folder.
func LongRun(t testing.TB, reason, outEnv string) string {
	t.Helper()
	if testing.Short() {
		t.Skip(reason)
	}
	if dir := os.Getenv(outEnv); dir != "" {
		return dir
	}
	return t.TempDir()
}
