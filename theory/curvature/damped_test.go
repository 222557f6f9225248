package curvature

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestDampedCondition_HandCases checks κ(A + λI) = (λ_max + λ)/(λ_min + λ) against the eigenvalues of the damped
// matrix itself (Damped, Eigenvalues, Condition), and its limits: λ = 0 gives Condition, λ_min + λ ≤ 0 gives +Inf.
func TestDampedCondition_HandCases(t *testing.T) {
	// Eigenvalues 1, 4 (first block) and 1, 3 (second block).
	H := mat.NewSymDense(4, []float64{1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2, 1, 0, 0, 1, 2})
	e, err := Eigenvalues(H)
	if err != nil {
		t.Fatal(err)
	}
	Hd, lambda := Damped(H, 0.1)
	ed, err := Eigenvalues(Hd)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := DampedCondition(e, lambda), Condition(ed); math.Abs(got-want) > 1e-12 {
		t.Fatalf("DampedCondition = %g, κ of the damped matrix = %g", got, want)
	}
	if got, want := DampedCondition([]float64{1, 4}, 0.5), 4.5/1.5; math.Abs(got-want) > 1e-15 {
		t.Fatalf("DampedCondition({1, 4}, 0.5) = %g, want %g", got, want)
	}
	if got := DampedCondition(e, 0); math.Abs(got-Condition(e)) > 1e-15 {
		t.Fatalf("DampedCondition(·, 0) = %g, want Condition = %g", got, Condition(e))
	}
	if got := DampedCondition([]float64{-1, 2}, 0.5); !math.IsInf(got, 1) {
		t.Fatalf("DampedCondition with λ_min + λ < 0 = %g, want +Inf", got)
	}
	if got := DampedCondition([]float64{-1, 2}, 2); math.Abs(got-4) > 1e-15 {
		t.Fatalf("DampedCondition({-1, 2}, 2) = %g, want 4", got)
	}
	if got := DampedCondition(nil, 1); !math.IsNaN(got) {
		t.Fatalf("DampedCondition(nil) = %g, want NaN", got)
	}
}

// TestBlockEigenRanges_HandCase checks the per-block extreme eigenvalues of a matrix whose blocks are known, and that
// the block condition numbers they give equal BlockConditions.
func TestBlockEigenRanges_HandCase(t *testing.T) {
	H := mat.NewSymDense(4, []float64{1, 0, 5, 0, 0, 4, 0, 0, 5, 0, 2, 1, 0, 0, 1, 2})
	lo, hi, err := BlockEigenRanges(H, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]float64{{1, 4}, {1, 3}} // the off-diagonal block (5) does not enter
	for j, w := range want {
		if math.Abs(lo[j]-w[0]) > 1e-12 || math.Abs(hi[j]-w[1]) > 1e-12 {
			t.Fatalf("block %d: range [%g, %g], want [%g, %g]", j, lo[j], hi[j], w[0], w[1])
		}
	}
	bc, err := BlockConditions(H, 2)
	if err != nil {
		t.Fatal(err)
	}
	for j := range bc {
		if got := DampedCondition([]float64{lo[j], hi[j]}, 0); math.Abs(got-bc[j]) > 1e-12 {
			t.Fatalf("block %d: κ from the range %g, BlockConditions %g", j, got, bc[j])
		}
	}
	if _, _, err := BlockEigenRanges(H, 3); err == nil {
		t.Fatal("BlockEigenRanges with a block size that does not divide 4: want an error")
	}
}
