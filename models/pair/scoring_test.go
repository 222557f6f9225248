package pair

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/naming"
)

// TestEffect_HandCase: p = (0.5, 0.25, 0.1) → p′ = (0.25, 0.25, 0.1): target 0 (one-token words at positions 0
// and 1) changes by mean(−½, 0) = −¼, target 1 (position 2) by 0; perplexity by (Π p / Π p′)^(1/3) − 1 = 2^(1/3) − 1.
// A two-token word at positions 0–1 has p = 0.5·0.25 → 0.25·0.25: ΔProb = −½ (the product, not the token mean −¼);
// with p′ = (0.25, 0.5, 0.1) its product is unchanged, ΔProb = 0, while each token moved by ±100%/−50%.
func TestEffect_HandCase(t *testing.T) {
	lg := func(xs ...float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = math.Log(x)
		}
		return out
	}
	one := func(ps ...int) []naming.Occurrence {
		var out []naming.Occurrence
		for _, p := range ps {
			out = append(out, naming.Occurrence{Pos: p, Len: 1})
		}
		return out
	}
	dp, dppl := Effect(lg(0.5, 0.25, 0.1), lg(0.25, 0.25, 0.1), [][]naming.Occurrence{one(0, 1), one(2)})
	require.InDeltaSlice(t, []float64{-0.25, 0}, dp, 1e-15)
	require.InDelta(t, math.Cbrt(2)-1, dppl, 1e-15)
	dp, dppl = Effect(lg(0.5, 0.25, 0.1), lg(0.25, 0.25, 0.2), [][]naming.Occurrence{one(0, 1), one(2)})
	require.InDeltaSlice(t, []float64{-0.25, 1}, dp, 1e-15)
	require.InDelta(t, 0, dppl, 1e-15) // equal products

	word := [][]naming.Occurrence{{{Pos: 0, Len: 2}}}
	dp, _ = Effect(lg(0.5, 0.25, 0.1), lg(0.25, 0.25, 0.1), word)
	require.InDeltaSlice(t, []float64{-0.5}, dp, 1e-15)
	dp, _ = Effect(lg(0.5, 0.25, 0.1), lg(0.25, 0.5, 0.1), word)
	require.InDeltaSlice(t, []float64{0}, dp, 1e-15)
	require.InDelta(t, 0.5*0.25, wordProb(lg(0.5, 0.25, 0.1), word[0]), 1e-15)
	require.InDelta(t, (0.125+0.1)/2, wordProb(lg(0.5, 0.25, 0.1), []naming.Occurrence{{Pos: 0, Len: 2},
		{Pos: 2, Len: 1}}), 1e-15)
}
