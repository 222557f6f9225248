package meanfield

import (
	"fmt"
	"testing"

	"github.com/protolab/protolab/theory/prior"
)

// TestPatchDelta_ReferenceTable reproduces §8 item 8: with shared noise ΔMSE is exactly 0 for j ≥ ℓ and matches the
// §7 table (K = 8, L = 6, α = 0.6, τ = 0.05) elsewhere, within the combined sampling error (the spec used ≥ 1000
// pairs per cell; we assume 1000).
func TestPatchDelta_ReferenceTable(t *testing.T) {
	table := [][]float64{
		{0, 0.297, 0.194, 0.082, 0.030, 0.008},
		{0, 0, 0.184, 0.083, 0.030, 0.008},
		{0, 0, 0, 0.082, 0.031, 0.008},
		{0, 0, 0, 0, 0.031, 0.008},
		{0, 0, 0, 0, 0, 0.0085},
	}
	c := PatchMC{Prior: prior.Tree{Depth: 8, Alpha: 0.6}, Tau: 0.05, Layers: 6, Pairs: contexts(2000, 20000), Seed: 77}
	got, err := PatchDelta(c)
	if err != nil {
		t.Fatal(err)
	}
	for j := 1; j <= 8; j++ {
		for l := 1; l <= 6; l++ {
			e := got[j-1][l-1]
			if j >= l {
				if e.Mean != 0 || e.StdErr != 0 {
					t.Errorf("j=%d ℓ=%d: ΔMSE = %v, want exactly 0", j, l, e)
				}
				continue
			}
			digits := 3 + b2i(table[j-1][l-1] == 0.0085)
			requireMatchesSpec(t, fmt.Sprintf("ΔMSE j=%d ℓ=%d", j, l), e, table[j-1][l-1], 1000, digits)
		}
	}
}

// TestPatchDelta_IndependentNoise checks the spec's statements for independent donor noise at τ = 0.05: exactly 0 at
// ℓ = 1 (every key is e_1), ≲ 1e−5 for j ≥ ℓ, ℓ ≤ 5, and ≈ 1e−4 at ℓ = 6 (rare decoding differences).
func TestPatchDelta_IndependentNoise(t *testing.T) {
	c := PatchMC{Prior: prior.Tree{Depth: 8, Alpha: 0.6}, Tau: 0.05, Layers: 6, IndependentNoise: true,
		Pairs: contexts(1500, 20000), Seed: 78}
	got, err := PatchDelta(c)
	if err != nil {
		t.Fatal(err)
	}
	for j := 1; j <= 8; j++ {
		if e := got[j-1][0]; e.Mean != 0 || e.StdErr != 0 {
			t.Errorf("j=%d ℓ=1: %v, want exactly 0", j, e)
		}
		for l := 2; l <= min(j, 6); l++ {
			// Allowance: the spec's orders of magnitude (1e−5 for ℓ ≤ 5, 1e−4 at ℓ = 6), doubled.
			bound := 2e-5
			if l == 6 {
				bound = 2e-4
			}
			requireEstimate(t, fmt.Sprintf("j=%d ℓ=%d", j, l), got[j-1][l-1], 0, bound)
		}
	}
	// Divergence before the patch still costs: the j = 1 row is far from 0.
	if e := got[0][2]; e.Mean < 0.1 {
		t.Errorf("j=1 ℓ=3: %v, want ≈ 0.19", e)
	}
}
