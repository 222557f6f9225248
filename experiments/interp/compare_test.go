package interp

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTopKOverlapAndTop1(t *testing.T) {
	p, q := []float64{0.4, 0.3, 0.2, 0.1}, []float64{0.1, 0.2, 0.3, 0.4}
	require.Zero(t, TopKOverlap(p, q, 2))
	require.InDelta(t, 2.0/3, TopKOverlap(p, q, 3), 1e-15)
	require.Equal(t, 1.0, TopKOverlap(p, p, 2))
	require.False(t, Top1Agree(p, q))
	require.True(t, Top1Agree(p, []float64{0.9, 0.05, 0.03, 0.02}))
}

func TestSpearmanTopK(t *testing.T) {
	p, q := []float64{0.4, 0.3, 0.2, 0.1}, []float64{0.1, 0.2, 0.3, 0.4}
	require.InDelta(t, -1, SpearmanTopK(p, q, 4), 1e-15)
	require.InDelta(t, 1, SpearmanTopK(p, []float64{0.5, 0.25, 0.15, 0.1}, 4), 1e-15)
	// k = 1: union {0, 3}; p ranks (2, 1), q ranks (1, 2): −1.
	require.InDelta(t, -1, SpearmanTopK(p, q, 1), 1e-15)
	// Union {0, 1, 2} (k = 2, q = (0.5, 0.1, 0.4)): p ranks (3, 2, 1), q ranks (3, 1, 2): ρ = 0.5.
	require.InDelta(t, 0.5, SpearmanTopK([]float64{0.5, 0.3, 0.2}, []float64{0.5, 0.1, 0.4}, 2), 1e-15)
	require.Zero(t, SpearmanTopK([]float64{1, 0}, []float64{1, 0}, 1), "a union of one token has no ranking")
}

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
	one := func(ps ...int) []Occurrence {
		var out []Occurrence
		for _, p := range ps {
			out = append(out, Occurrence{Pos: p, Len: 1})
		}
		return out
	}
	dp, dppl := Effect(lg(0.5, 0.25, 0.1), lg(0.25, 0.25, 0.1), [][]Occurrence{one(0, 1), one(2)})
	require.InDeltaSlice(t, []float64{-0.25, 0}, dp, 1e-15)
	require.InDelta(t, math.Cbrt(2)-1, dppl, 1e-15)
	dp, dppl = Effect(lg(0.5, 0.25, 0.1), lg(0.25, 0.25, 0.2), [][]Occurrence{one(0, 1), one(2)})
	require.InDeltaSlice(t, []float64{-0.25, 1}, dp, 1e-15)
	require.InDelta(t, 0, dppl, 1e-15) // equal products

	word := [][]Occurrence{{{Pos: 0, Len: 2}}}
	dp, _ = Effect(lg(0.5, 0.25, 0.1), lg(0.25, 0.25, 0.1), word)
	require.InDeltaSlice(t, []float64{-0.5}, dp, 1e-15)
	dp, _ = Effect(lg(0.5, 0.25, 0.1), lg(0.25, 0.5, 0.1), word)
	require.InDeltaSlice(t, []float64{0}, dp, 1e-15)
	require.InDelta(t, 0.5*0.25, wordProb(lg(0.5, 0.25, 0.1), word[0]), 1e-15)
	require.InDelta(t, (0.125+0.1)/2, wordProb(lg(0.5, 0.25, 0.1), []Occurrence{{0, 2}, {2, 1}}), 1e-15)
}

func TestPerturb_Typos(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		out, word, ok, err := Perturb("An apple falls.", PerturbSwap, rng, nil)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "apple", word, "the last word and words of < 3 letters are never changed")
		require.True(t, strings.HasPrefix(out, "An ") && strings.HasSuffix(out, " falls."))
		w := strings.TrimSuffix(strings.TrimPrefix(out, "An "), " falls.")
		require.NotEqual(t, "apple", w)
		diff := []int{}
		for i := range w {
			if w[i] != "apple"[i] {
				diff = append(diff, i)
			}
		}
		require.Len(t, diff, 2)
		require.Equal(t, diff[0]+1, diff[1], "an adjacent swap")

		out, _, ok, err = Perturb("An apple falls.", PerturbDrop, rng, nil)
		require.NoError(t, err)
		require.True(t, ok)
		require.Len(t, out, len("An apple falls.")-1)
		out, _, ok, err = Perturb("An apple falls.", PerturbInsert, rng, nil)
		require.NoError(t, err)
		require.True(t, ok)
		require.Len(t, out, len("An apple falls.")+1)
	}
	out, _, ok, err := Perturb("An ox.", PerturbDrop, rng, nil)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, "An ox.", out)
	_, _, _, err = Perturb("An apple falls.", "shout", rng, nil)
	require.Error(t, err)
	_, _, _, err = Perturb("An apple falls.", PerturbSynonym, rng, nil)
	require.Error(t, err)
}

func TestPerturb_Synonym(t *testing.T) {
	syn := map[string][]string{"big": {"big", "very large", "large"}, "dog": {"hound"}}
	lookup := func(w string) []string { return syn[w] }
	rng := rand.New(rand.NewPCG(5, 6))
	out, word, ok, err := Perturb("Big dog ran.", PerturbSynonym, rng, lookup)
	require.NoError(t, err)
	require.True(t, ok)
	if word == "Big" {
		require.Equal(t, "Large dog ran.", out, "one-word synonyms only, capitalised like the original")
	} else {
		require.Equal(t, "Big hound ran.", out)
	}
	_, _, ok, err = Perturb("The cat sat.", PerturbSynonym, rng, lookup)
	require.NoError(t, err)
	require.False(t, ok)
}

func TestTable_StringAndHTML(t *testing.T) {
	tb := &Table{Title: "T", Header: []string{"a", "bb"}, Rows: [][]string{{"xyz", "<1>"}}, Note: "n"}
	require.Equal(t, "T\na    bb\nxyz  <1>\nn\n", tb.String())
	s := tb.RenderSnippet()
	require.Contains(t, s.Element, "&lt;1&gt;")
	require.Contains(t, s.Element, `id="table_`)
	require.Contains(t, s.Option, `"text":"T"`)
}
