package meanfield

import (
	"math"
	"testing"
)

// TestSharedPrefixAndPatchDecay_KnownMatrices checks the two patching statistics on matrices with known values.
func TestSharedPrefixAndPatchDecay_KnownMatrices(t *testing.T) {
	for _, c := range []struct {
		delta      [][]float64
		prefix     float64
		decay      float64
		decayValid bool
	}{
		{[][]float64{{0, 0.4, 0.1}, {0, 0.02, 0.1}, {0, 0, -0.01}}, 0.05, 0.25, true},
		{[][]float64{{0, 0, 0}, {0, 0, 0}}, 1, 0, false},        // no effect anywhere
		{[][]float64{{0, 0.1, 0.1}, {0, 0.3, 0.1}}, 1, 1, true}, // more effect with a shared prefix: capped
	} {
		if got := SharedPrefix(c.delta); math.Abs(got-c.prefix) > 1e-12 {
			t.Errorf("SharedPrefix(%v) = %g, want %g", c.delta, got, c.prefix)
		}
		if got, ok := PatchDecay(c.delta); ok != c.decayValid || (ok && math.Abs(got-c.decay) > 1e-12) {
			t.Errorf("PatchDecay(%v) = %g, %v; want %g, %v", c.delta, got, ok, c.decay, c.decayValid)
		}
	}
}
