package pair

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSelectPrototype_HandCase: three prototypes, two targets. Target 0: prototype 1 lowers it most (−30%) but
// moves perplexity by 2%, so the selective choice under a 1% bound is prototype 2 (−10%); target 1: prototype 0
// (−5%) is both. With no prototype under the bound, selective is −1. Equal ΔProb: the lower index.
func TestSelectPrototype_HandCase(t *testing.T) {
	prob := [][]float64{{-0.05, -0.05}, {-0.30, 0.01}, {-0.10, 0}}
	ppl := []float64{0.005, 0.02, -0.009}
	best, sel := SelectPrototype(prob, ppl, 0, 0.01)
	require.Equal(t, []int{1, 2}, []int{best, sel})
	best, sel = SelectPrototype(prob, ppl, 1, 0.01)
	require.Equal(t, []int{0, 0}, []int{best, sel})
	best, sel = SelectPrototype(prob, ppl, 0, 0.001)
	require.Equal(t, []int{1, -1}, []int{best, sel})
	best, sel = SelectPrototype([][]float64{{-0.1}, {-0.1}}, []float64{0, 0}, 0, 0.01)
	require.Equal(t, []int{0, 0}, []int{best, sel})
}
