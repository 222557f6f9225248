package prism

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
)

// TestSentences splits a hand text: at '.', '!' and '?' before a space (after closing quotes), at line breaks, and
// after an abbreviation too (no list of them); never inside "3.5".
func TestSentences(t *testing.T) {
	text := "He said \"No.\" Then he left.\nVoters reject plan\nMr. Smith ate 3.5 loaves! Fine? yes"
	require.Equal(t, []string{`He said "No."`, "Then he left.", "Voters reject plan", "Mr.", "Smith ate 3.5 loaves!",
		"Fine?", "yes"}, Sentences(text))
	require.Empty(t, Sentences(" \n "))
}

func TestFirstWords(t *testing.T) {
	for _, tc := range []struct {
		s     string
		n     int
		want  string
		count int
	}{
		{"The Fulton County Grand Jury said Friday.", 3, "The Fulton County", 7},
		{"It was won.", 5, "It was won.", 3},
		{"It was won.", 3, "It was won.", 3},
		{"Atlanta's recent primary, they said.", 2, "Atlanta's", 6},
	} {
		got, count := firstWords(tc.s, tc.n)
		require.Equal(t, tc.want, got, tc.s)
		require.Equal(t, tc.count, count, tc.s)
	}
}

// TestKeywordFreePrompts makes prompts from two hand documents with the keywords bread and coffee: a sentence with a
// keyword is skipped, so is one of fewer than PromptMinWords words; prompts alternate between the documents and
// keep their first 3 words; asking for more prompts than the documents hold is an error that says how many they
// hold.
func TestKeywordFreePrompts(t *testing.T) {
	m, _ := qualityTinyPair(t)
	d, err := m.Data()
	require.NoError(t, err)
	texts := []string{
		"The bread was good today. We walked home slowly together. Voters reject plan. The old mill burned down.",
		"They sat by the river for hours. Then coffee came later in the day.",
	}
	kw := []string{"bread", "coffee"}
	got, err := KeywordFreePrompts(m, texts, 3, 3, kw)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, want := range []string{"We walked home", "They sat by", "The old mill"} {
		require.Equal(t, d.EOS, got[i][0])
		require.Equal(t, want, d.Tokenizer.DecodeString(got[i][1:]))
	}
	_, err = KeywordFreePrompts(m, texts, 4, 3, kw)
	require.ErrorContains(t, err, "hold 3 sentences")
	_, err = KeywordFreePrompts(m, texts, 1, 0, kw)
	require.ErrorContains(t, err, "0 words per prompt")
}

// TestSplitSequencesByKeywords packs fresh documents into sequences of T+1 tokens and sorts them by the keywords of
// topic "food": every sequence lands in one part, by whether its decoded text has a keyword; a cap keeps evenly
// spaced sequences of each part.
func TestSplitSequencesByKeywords(t *testing.T) {
	m, _ := qualityTinyPair(t)
	d, err := m.Data()
	require.NoError(t, err)
	kw, err := data.SyntheticWords("topic", "food")
	require.NoError(t, err)
	fresh, err := m.FreshCorpus(30, 3203)
	require.NoError(t, err)
	other, concept, err := SplitSequencesByKeywords(m, fresh.Texts, kw, 1_000_000)
	require.NoError(t, err)
	require.NotEmpty(t, other)
	require.NotEmpty(t, concept)
	docs := make([][]int32, len(fresh.Texts))
	for i, text := range fresh.Texts {
		docs[i] = d.Tokenizer.Encode(text)
	}
	p, err := data.Pack(docs, m.Config.Data.SeqLen, d.EOS)
	require.NoError(t, err)
	require.Equal(t, p.NumSequences(), len(other)+len(concept))
	set := keywordSet(kw)
	for _, part := range []struct {
		seqs [][]int32
		has  bool
	}{{other, false}, {concept, true}} {
		for _, s := range part.seqs {
			require.Len(t, s, m.Config.Data.SeqLen+1)
			require.Equal(t, part.has, hasKeyword(d.Tokenizer.DecodeString(s), set))
		}
	}
	capped, _, err := SplitSequencesByKeywords(m, fresh.Texts, kw, 3)
	require.NoError(t, err)
	require.Equal(t, [][]int32{other[0], other[len(other)/3], other[2*len(other)/3]}, capped)
}

// TestSpread keeps ⌊j·10/4⌋ = 0, 2, 5, 7 of ten sequences, and all of two.
func TestSpread(t *testing.T) {
	xs := make([][]int32, 10)
	for i := range xs {
		xs[i] = []int32{int32(i)}
	}
	require.Equal(t, [][]int32{{0}, {2}, {5}, {7}}, spread(xs, 4))
	require.Equal(t, xs[:2], spread(xs[:2], 4))
}
