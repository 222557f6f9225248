package pair

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/naming"
)

// TestProbFloor_AttainedExactly: two occurrences (one word of one token, one of two) among ten scored positions
// (share 0.2). Lowering each word's probability by the factor 1 + ProbFloor(0.2, 1%) and touching nothing else gives
// ΔProb = the floor and ΔPPL = 1% exactly (Effect); any further drop moves perplexity past the bound. Hand values:
// ProbFloor(0.5, 21%) = 1.21⁻² − 1, and a target with no occurrence has floor −1.
func TestProbFloor_AttainedExactly(t *testing.T) {
	require.InDelta(t, 1/1.4641-1, ProbFloor(0.5, 0.21), 1e-15)
	require.Equal(t, -1.0, ProbFloor(0, 0.01))
	floor := ProbFloor(0.2, 0.01)
	require.InDelta(t, math.Pow(1.01, -5)-1, floor, 1e-15)
	base := []float64{-1, -2, -0.5, -3, -1, -2, -0.1, -4, -1, -1}
	occ := [][]naming.Occurrence{{{Pos: 0, Len: 1}, {Pos: 3, Len: 2}}}
	lower := func(factor float64) []float64 {
		lp := append([]float64(nil), base...)
		lp[0] += math.Log(factor)
		lp[3] += math.Log(factor) / 2
		lp[4] += math.Log(factor) / 2
		return lp
	}
	dProb, dPPL := Effect(base, lower(1+floor), occ)
	require.InDelta(t, floor, dProb[0], 1e-12)
	require.InDelta(t, 0.01, dPPL, 1e-12)
	_, dPPL = Effect(base, lower(1+floor-0.01), occ)
	require.Greater(t, dPPL, 0.01)
}

// TestClassLoss_HandCase: positions 0–3 with losses raised by 0.2, 0.4, 0, −0.1 nats; class {0, 1} has mean 0.3,
// class {2, 3} −0.05, the overlapping class {1} 0.4, an empty class 0.
func TestClassLoss_HandCase(t *testing.T) {
	base := []float64{-1, -1, -2, -0.5}
	lp := []float64{-1.2, -1.4, -2, -0.4}
	got := ClassLoss(base, lp, [][]int{{0, 1}, {2, 3}, {1}, nil})
	want := []float64{0.3, -0.05, 0.4, 0}
	for c := range want {
		require.InDelta(t, want[c], got[c], 1e-12, "class %d", c)
	}
}

// TestClassSelectivity_HandCase: three prototypes, classes gender (a quarter of the positions) and other. Prototype
// 1 costs gender tokens 0.4 nats and the others 0.02, so its mean loss change is 0.25·0.4 + 0.75·0.02 and
// ClassSelectivity recovers Outside = 0.02 from its ΔPPL (excess 0.38); prototype 0 costs gender 0.1 and nothing
// else (excess 0.1); prototype 2, a hub, costs every token 0.6 (excess 0) and is not chosen although it costs gender
// most. The gender targets' occurrences are 3% + 2% of the positions, so the concept's floor is ProbFloor(0.05, 1%);
// number's do not count.
func TestClassSelectivity_HandCase(t *testing.T) {
	iv := &Intervention{Prototypes: []string{"L0 P0", "L0 P1", "L0 P2"}, Classes: []string{"gender", naming.ClassOther},
		ClassShare: []float64{0.25, 0.75}, MaxPPLChange: 0.01,
		Effects: []TargetEffect{{Target: "gender=male", Share: 0.03}, {Target: "number=plural", Share: 0.4},
			{Target: "gender=female", Share: 0.02}},
		Sweeps: []Sweep{{Kind: InterveneWrite, ClassLoss: [][]float64{{0.1, 0}, {0.4, 0.02}, {0.6, 0.6}},
			PPL: []float64{math.Expm1(0.025), math.Expm1(0.25*0.4 + 0.75*0.02), math.Expm1(0.6)}}}}
	got := ClassSelectivity(iv)
	require.Len(t, got, 1)
	require.Equal(t, "gender", got[0].Class)
	require.Equal(t, "L0 P1", got[0].Prototype)
	require.InDelta(t, 0.4, got[0].Loss, 1e-15)
	require.InDelta(t, 0.02, got[0].Outside, 1e-12)
	require.InDelta(t, ProbFloor(0.05, 0.01), got[0].Floor, 1e-12)
	require.Nil(t, ClassSelectivity(nil))
	require.Equal(t, 0.0, OutsideLoss(1, 0.3, 0.5), "a class of every position leaves nothing outside")
}
