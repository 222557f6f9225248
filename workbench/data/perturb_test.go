package data

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLetterWords(t *testing.T) {
	require.Equal(t, []WordSpan{{0, 3}, {4, 5}, {6, 10}, {14, 16}}, LetterWords("Don't stop, 9 ok."))
	require.Empty(t, LetterWords(" 42, !"))
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
