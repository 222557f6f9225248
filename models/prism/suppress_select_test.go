package prism

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/wbtest"
)

// TestSelectPrototypes_KeywordRule builds activations with a known answer: prototype 0 fires on keyword tokens
// (hit rate 1), prototype 1 on 2 keyword tokens out of 6 (1/3), prototype 2 on keyword tokens but only twice (too
// little evidence); only prototype 0 is selected at min_hit_rate 0.5, min_contexts 3, and top_contexts = 4 keeps
// prototype 1's four largest activations.
func TestSelectPrototypes_KeywordRule(t *testing.T) {
	const k, K = 2, 3
	keyword := map[int]bool{0: true, 1: true, 2: true, 3: true}
	var idx []int32
	var acts []float64
	add := func(a0 float64, i0 int32, a1 float64, i1 int32) {
		idx, acts = append(idx, i0, i1), append(acts, a0, a1)
	}
	add(0.9, 0, 0.8, 2) // token 0 (keyword)
	add(0.7, 0, 0.1, 1) // token 1 (keyword)
	add(0.6, 0, 0.5, 2) // token 2 (keyword)
	add(0.2, 0, 0.3, 1) // token 3 (keyword)
	add(0.9, 1, 0, 0)   // tokens 4–7: prototype 1 only, no keyword; a = 0 is not an activation
	add(0.8, 1, 0, 0)
	add(0.7, 1, 0, 0)
	add(0.6, 1, -0.1, 2)
	per := selectTopContexts(idx, acts, k, K, 4)
	require.Len(t, per[0], 4)
	require.Len(t, per[1], 4, "top 4 of prototype 1's 6 activations")
	require.Equal(t, 4, per[1][0].tok, "largest first")
	require.Len(t, per[2], 2)
	sel := selectPrototypes(per, 3, 0.5, false, func(tok int) bool { return keyword[tok] })
	require.Equal(t, []SelectedPrototype{{Prototype: 0, HitRate: 1, Contexts: 4}}, sel)
	per = selectTopContexts(idx, acts, k, K, 6)
	sel = selectPrototypes(per, 3, 0.3, false, func(tok int) bool { return keyword[tok] })
	require.Len(t, sel, 2)
	require.Equal(t, 1, sel[1].Prototype)
	require.InDelta(t, 2.0/6, sel[1].HitRate, 1e-15)
	// Rule "mass": prototype 1's keyword mass is (0.1+0.3)/(0.1+0.3+0.9+0.8+0.7+0.6) = 0.4/3.4.
	sel = selectPrototypes(per, 3, 0.1, true, func(tok int) bool { return keyword[tok] })
	require.Len(t, sel, 2)
	require.InDelta(t, 0.4/3.4, sel[1].HitRate, 1e-15)
	// With keywords at tokens 1 and 3 only: prototype 0 has 0.9/2.4 of its mass there, prototype 1 0.4/3.4.
	sel = selectPrototypes(per, 3, 0.2, true, func(tok int) bool { return tok == 1 || tok == 3 })
	require.Len(t, sel, 1)
	require.InDelta(t, 0.9/2.4, sel[0].HitRate, 1e-15)
}

// TestKeywordTokens uses a hand-written encoder: " market" and " morning" share their first token 7, so market has
// no token of its own; " soup" (5) and " bread" (3) start no other word of the texts.
func TestKeywordTokens(t *testing.T) {
	enc := map[string][]int32{" soup": {5}, " market": {7, 8}, " morning": {7, 9}, " bread": {3}, " the": {1},
		" The": {2}}
	encode := func(s string) []int32 { return enc[s] }
	got := selectKeywordTokens(encode, []string{"soup", "market", "bread"}, []string{"The morning bread.", "the soup"})
	require.Equal(t, []int32{3, 5}, got)
	got = selectKeywordTokens(encode, []string{"soup", "market", "bread"}, []string{"the soup"})
	require.Equal(t, []int32{3, 5, 7}, got, "without morning in the texts, 7 starts only a keyword")
}

// TestSignatureHits: row 0 promotes tokens 3, 1, 2 most (1 and 2 tie; the lower token comes first), two of which
// are keyword tokens {1, 3}; row 1 promotes 2, 0, 4, none of them.
func TestSignatureHits(t *testing.T) {
	sig := []float64{
		0.5, 0.7, 0.7, 0.9, 0.1,
		0.8, -1, 0.9, -2, 0.3,
	}
	hits, promoted := selectSignatureHits(sig, 5, []int32{1, 3}, 3)
	require.Equal(t, [][]int32{{3, 1, 2}, {2, 0, 4}}, promoted)
	wbtest.RequireClose(t, "hits", []float64{2.0 / 3, 0}, hits, 1e-15)
}
