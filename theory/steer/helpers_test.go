package steer

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
)

// The test helpers of workbench/wbtest that the controller tests use, with the same draws and tolerances: theory
// imports nothing of ProtoLab outside theory/, not even in tests (docs/STYLE.md §3).

// gradTol is the tolerance of analytic against finite-difference gradients in float64 (docs/STYLE.md §11.2).
const gradTol = 1e-6

// testRNG returns a seeded generator (wbtest.RNG's stream).
func testRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// normal returns n standard-normal draws scaled by std.
func normal(rng *rand.Rand, n int, std float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64() * std
	}
	return out
}

// requireClose fails at the first element where |got − want| > tol·(1+|want|), or when the lengths differ.
func requireClose(t *testing.T, name string, want, got []float64, tol float64) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: len(got)=%d, want %d", name, len(got), len(want))
	}
	for i := range want {
		if math.IsNaN(want[i]) || math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d]: got %.15g, want %.15g (|diff|=%.3g > %.3g·(1+|want|))", name, i, got[i], want[i],
				math.Abs(got[i]-want[i]), tol)
		}
	}
}

// requireGradient compares an analytic gradient with central finite differences of f at x (gonum's default step).
func requireGradient(t *testing.T, name string, f func(x []float64) float64, x, analytic []float64, tol float64) {
	t.Helper()
	numeric := fd.Gradient(nil, f, x, &fd.Settings{Formula: fd.Central})
	requireClose(t, name+" (analytic vs finite differences)", numeric, analytic, tol)
}
