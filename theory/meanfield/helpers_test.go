package meanfield

import (
	"math"
	"math/rand/v2"
	"testing"
)

// requireWithin fails unless |got − want| ≤ tol, naming what was compared.
func requireWithin(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol) {
		t.Errorf("%s: got %.6g, want %.6g ± %.3g (off by %.3g)", what, got, want, tol, math.Abs(got-want))
	}
}

// requireClose fails unless |got − want| ≤ rel·(1 + |want|).
func requireClose(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	requireWithin(t, what, got, want, rel*(1+math.Abs(want)))
}

// requireEstimate fails unless a Monte Carlo estimate lies within 4 standard errors (plus a stated allowance) of a
// closed form.
func requireEstimate(t *testing.T, what string, e Estimate, want, allowance float64) {
	t.Helper()
	requireWithin(t, what, e.Mean, want, 4*e.StdErr+allowance)
}

// requireMatchesSpec compares our Monte Carlo estimate with a value the spec computed by its own Monte Carlo over
// specSamples contexts and printed with `digits` decimals. Both carry sampling error, so the tolerance is 4 combined
// standard errors (the spec's is estimated from our per-context spread: se·√(ours/theirs)) plus half a unit in the
// spec's last printed digit.
func requireMatchesSpec(t *testing.T, what string, e Estimate, spec float64, specSamples, digits int) {
	t.Helper()
	seSpec := e.StdErr * math.Sqrt(float64(e.Samples)/float64(specSamples))
	tol := 4*math.Hypot(e.StdErr, seSpec) + 0.5*math.Pow(10, -float64(digits))
	requireWithin(t, what, e.Mean, spec, tol)
}

// requirePrinted fails unless a closed form rounds to the spec's printed value (half a unit in the last digit).
func requirePrinted(t *testing.T, what string, got, spec float64, digits int) {
	t.Helper()
	requireWithin(t, what, got, spec, 0.5*math.Pow(10, -float64(digits))+1e-12)
}

// contexts returns the short-mode count, or long in the full run (make test-long).
func contexts(short, long int) int {
	if testing.Short() {
		return short
	}
	return long
}

// newTestRNG returns a seeded generator for test-side simulations.
func newTestRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// tanh is math.Tanh (kept short for formulas).
func tanh(x float64) float64 { return math.Tanh(x) }

// pow10 returns 10^e.
func pow10(e int) float64 { return math.Pow(10, float64(e)) }
