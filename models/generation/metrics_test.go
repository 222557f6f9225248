package generation

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/tokenizer"
)

// tinyTokenizer trains a small BPE tokenizer on a few sentences.
func tinyTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	tc := tokenizer.DefaultConfig()
	tc.VocabSize = 270
	tok, err := tokenizer.Train([]string{"the cat sat on the mat", "a dog and a cat", "the dog sat"}, tc)
	require.NoError(t, err)
	return tok
}

// The n-gram measures on texts small enough to count by hand:
//
//	"a b a b": unigrams a b a b, bigrams ab ba ab, trigrams aba bab, one 4-gram
//	"a c":     unigrams a c,     bigram  ac
//	"x":       unigram  x
func TestDistinctN_HandCase(t *testing.T) {
	texts := []string{"a b a b", "a  c\n", "x"}
	require.InDelta(t, 4.0/7, DistinctN(texts, 1), 1e-15) // {a, b, c, x} of 7 unigrams
	require.InDelta(t, 3.0/4, DistinctN(texts, 2), 1e-15) // {ab, ba, ac} of 4 bigrams
	require.InDelta(t, 1.0, DistinctN(texts, 3), 1e-15)   // {aba, bab} of 2
	require.InDelta(t, 1.0, DistinctN(texts, 4), 1e-15)
	require.Zero(t, DistinctN(texts, 5), "no 5-grams")
	require.Zero(t, DistinctN(nil, 1))
	require.Panics(t, func() { DistinctN(texts, 0) })
}

func TestRepetitionRate_HandCase(t *testing.T) {
	texts := []string{"a b a b", "a c", "x"}
	// n = 1: "a b a b" repeats 2 of 4 unigrams, "a c" 0 of 2, "x" 0 of 1: mean (1/2 + 0 + 0)/3.
	require.InDelta(t, 1.0/6, RepetitionRate(texts, 1), 1e-15)
	// n = 2: "a b a b" repeats 1 of 3 bigrams (ab), "a c" 0 of 1, "x" has none and is left out: (1/3 + 0)/2.
	require.InDelta(t, 1.0/6, RepetitionRate(texts, 2), 1e-15)
	// n = 3: aba, bab are distinct: 0; a fully looping text "the the the the" repeats 2 of 3 bigrams.
	require.Zero(t, RepetitionRate(texts, 3))
	require.InDelta(t, 2.0/3, RepetitionRate([]string{"the the the the"}, 2), 1e-15)
	require.Zero(t, RepetitionRate([]string{"x"}, 4), "no text has a 4-gram")
	require.Panics(t, func() { RepetitionRate(texts, 0) })
}

func TestSpanPerplexity_HandCase(t *testing.T) {
	losses := [][]float64{{1, 2, 3}, {4, 5, 6}}
	// Row 0 positions 1, 2 (losses 2, 3) and row 1 position 0 (loss 4): exp((2+3+4)/3) = e³.
	ppl, n, err := SpanPerplexity(losses, []int{1, 0}, []int{3, 1})
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.InDelta(t, math.Exp(3), ppl, 1e-12)

	ppl, n, err = SpanPerplexity(losses, []int{2, 0}, []int{2, 0})
	require.NoError(t, err)
	require.Zero(t, n)
	require.True(t, math.IsNaN(ppl))

	_, _, err = SpanPerplexity(losses, []int{0, 2}, []int{1, 4})
	require.ErrorContains(t, err, "row 1 span [2, 4) outside [0, 3)")
	_, _, err = SpanPerplexity(losses, []int{0}, []int{1, 1})
	require.Error(t, err)
}

func TestPrompts_SplitsWords(t *testing.T) {
	p, r, d := Prompts([]string{"too short", "one two three four", "a b c d e", "x y z w v"}, 2, 3)
	require.Equal(t, []string{"one two three", "a b c"}, p)
	require.Equal(t, []string{" four", " d e"}, r)
	require.Equal(t, []int{1, 2}, d)
}

func TestWordsAndEncodeText_TreatEOSAsOneToken(t *testing.T) {
	require.Equal(t, []string{"from", "Lyon.", EOSToken, "Mary", "is"}, Words(" from Lyon."+EOSToken+"Mary is"))
	tok := tinyTokenizer(t)
	eos, ok := tok.SpecialID(EOSToken)
	require.True(t, ok)
	ids := EncodeText(tok, "the cat"+EOSToken+"a dog")
	want := append(append(tok.Encode("the cat"), eos), tok.Encode("a dog")...)
	require.Equal(t, want, ids)
	require.Equal(t, "the cat"+EOSToken+"a dog", tok.DecodeString(ids))
}
