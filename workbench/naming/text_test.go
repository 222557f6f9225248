package naming

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/lmdata"
)

// tinySyntheticText prepares the synthetic corpus at the size of models/pair's Tiny preset and labels 40
// validation sequences (seed 1, with labels) with the marked values of four concepts, as experiments/interp's
// Tiny preset does.
func tinySyntheticText(t *testing.T) (lmdata.Config, *lmdata.Prepared, *Text) {
	t.Helper()
	dc, prep := tinySynthetic(t)
	es, err := LabelText(valText(prep), Labelling{Kind: LabelsMarked, Concepts: syntheticConcepts, MinCount: 1,
		None: true}, 0, prep.ValSeqs.NumSequences(), 40)
	require.NoError(t, err)
	return dc, prep, es
}

// syntheticConcepts are the synthetic corpus's lexical concepts that experiments/interp labels.
var syntheticConcepts = []string{"gender", "country", "topic", "number"}

// tinySynthetic prepares the synthetic corpus with the data settings of models/pair's Tiny preset.
func tinySynthetic(t *testing.T) (lmdata.Config, *lmdata.Prepared) {
	t.Helper()
	dc := lmdata.DefaultConfig()
	dc.Source = lmdata.SourceSynthetic
	dc.Synthetic.NumDocs, dc.Tokenizer.VocabSize, dc.SeqLen, dc.BatchSize = 150, 320, 24, 8
	prep, err := lmdata.Prepare(dc, "")
	require.NoError(t, err)
	return dc, prep
}

// valText is the validation split of prep as a Source.
func valText(prep *lmdata.Prepared) Source {
	return Source{Name: lmdata.SourceSynthetic, Packed: prep.ValSeqs, Corpus: prep.Val, Tok: prep.Tokenizer}
}

// TestLabelText_SyntheticLabels checks the token labels against the synthetic lexicon: every token that
// decodes to a whole word carries exactly the marked values of that word, and the labels of the next token are
// those of the following input.
func TestLabelText_SyntheticLabels(t *testing.T) {
	dc, prep, es := tinySyntheticText(t)
	require.Equal(t, min(40, prep.ValSeqs.NumSequences())*dc.SeqLen, es.N())
	// The labels each word form marks, from the lexicon.
	want := map[string][]string{}
	for _, k := range syntheticConcepts {
		for _, c := range dc.Synthetic.Concepts() {
			if c.Name != k {
				continue
			}
			for _, v := range c.Values {
				words, err := data.SyntheticWords(k, v)
				require.NoError(t, err)
				for _, w := range words {
					want[w] = append(want[w], k+"="+v)
				}
			}
		}
	}
	whole, labelled := 0, 0
	for n := range es.N() - 1 {
		if (n+1)%es.T != 0 {
			require.Equal(t, es.Tokens.Of[n+1], es.Next[n], "next labels are the following input's")
		}
		tok := prep.Tokenizer.DecodeString([]int32{es.Stream[es.Offset[n]]})
		next := prep.Tokenizer.DecodeString([]int32{es.Stream[es.Offset[n]+1]})
		isLetter := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
		word := strings.TrimPrefix(tok, " ")
		if tok[0] != ' ' || isLetter(next[0]) || word == "" || !isLetter(word[0]) {
			continue // not a whole word: an inner piece ("mot" + "her") or a word going on
		}
		var got []string
		for _, l := range es.Tokens.Of[n] {
			got = append(got, es.Tokens.Names[l])
		}
		if len(want[word]) == 0 {
			require.Equal(t, []string{NoneLabel}, got, "word %q", word)
		} else {
			require.ElementsMatch(t, want[word], got, "word %q", word)
		}
		whole++
		if got[0] != NoneLabel {
			labelled++
		}
	}
	require.Greater(t, whole, 50)
	require.Greater(t, labelled, 10)

	// Labels below min_label_count are dropped: with a huge threshold none remain.
	none, err := LabelText(valText(prep), Labelling{Kind: LabelsMarked, Concepts: syntheticConcepts,
		MinCount: 1 << 30, None: true}, 0, prep.ValSeqs.NumSequences(), 8)
	require.NoError(t, err)
	require.Empty(t, none.Tokens.Names)
}

// TestLabelText_Lexical labels tokens through a lexicon of whole words: only the words it lists carry labels,
// every piece of a split word carries them, and values unknown to the concept are ignored.
func TestLabelText_Lexical(t *testing.T) {
	_, prep := tinySynthetic(t)
	lex := map[string][]string{"her": {"female"}, "his": {"male", "neuter"}, "herself": {"female"}}
	lab := Labelling{Kind: LabelsLexical, Concepts: []string{"gender"}, MinCount: 1,
		Lexicon: func(w string) []string { return lex[w] }}
	es, err := LabelText(valText(prep), lab, 0, prep.ValSeqs.NumSequences(), 40)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"gender=female", "gender=male"}, es.Tokens.Names)
	counts := map[string]int{}
	for n := range es.N() {
		piece := prep.Tokenizer.DecodeString([]int32{es.Stream[es.Offset[n]]})
		for _, l := range es.Tokens.Of[n] {
			name := es.Tokens.Names[l]
			counts[name]++
			require.True(t, strings.Contains("her his herself", strings.TrimSpace(piece)), "%q carries %s", piece, name)
		}
	}
	require.Positive(t, counts["gender=female"])
	require.Positive(t, counts["gender=male"])
	lab.Lexicon = nil
	_, err = LabelText(valText(prep), lab, 0, prep.ValSeqs.NumSequences(), 40)
	require.Error(t, err, "lexical labels need a lexicon")
}

// TestLabelText_NextWord checks the word occurrences the interventions score: a position with NextWord k > 0
// predicts the first of k tokens that decode to one whole word ending inside the sequence (a space, then letters,
// then no letter; or the full stop), and every such word start within the sequence is found; some words span
// several tokens.
func TestLabelText_NextWord(t *testing.T) {
	_, prep, es := tinySyntheticText(t)
	isLetter := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	dec := func(o int) string { return prep.Tokenizer.DecodeString([]int32{es.Stream[o]}) }
	multi, words := 0, 0
	for n, k := range es.NextWord {
		o, pos := es.Offset[n], n%es.T
		first := dec(o + 1)
		prev := dec(o)
		starts := len(first) > 1 && first[0] == ' ' && isLetter(first[1]) ||
			isLetter(first[0]) && (prev == "" || !isLetter(prev[len(prev)-1]))
		if k == 0 {
			// Not a word start, or a word that runs past the sequence's last target.
			if starts {
				k := 1 // the word's tokens: the first, then those continuing it with a letter
				for o+1+k < len(es.Stream) && isLetter(dec(o + 1 + k)[0]) {
					k++
				}
				require.Greater(t, pos+k, es.T, "a word start inside the sequence at input %d (%q) was missed", n, first)
			}
			continue
		}
		if first == "." && k == 1 {
			continue // the full stop is a word of the synthetic grammar (labelled none)
		}
		require.True(t, starts, "input %d: %q does not start a word", n, first)
		require.LessOrEqual(t, pos+k, es.T, "the word ends within the sequence")
		var w strings.Builder
		for i := 1; i <= k; i++ {
			piece := dec(o + i)
			if i > 1 {
				require.True(t, isLetter(piece[0]), "input %d: token %d of the word is %q", n, i, piece)
			}
			w.WriteString(piece)
		}
		require.False(t, isLetter(dec(o + k + 1)[0]), "input %d: the word %q goes on", n, w.String())
		words++
		if k > 1 {
			multi++
		}
	}
	require.Greater(t, words, 100)
	require.Positive(t, multi, "some words span several tokens")

}

// TestClasses_HandCase: five positions whose targets carry {gender=male}, {gender=male, number=plural},
// {none}, {} and {country=Egypt}: the classes are gender, number, country (first appearance among the label
// names) and other; a token with two concepts is in both classes, and "none" and unlabelled tokens are other.
func TestClasses_HandCase(t *testing.T) {
	es := &Text{Tokens: &Tokens{Names: []string{"gender=male", "number=plural", NoneLabel, "country=Egypt"}},
		Next: [][]int32{{0}, {0, 1}, {2}, {}, {3}}}
	classes, share, pos := es.Classes(5)
	require.Equal(t, []string{"gender", "number", "country", ClassOther}, classes)
	require.Equal(t, [][]int{{0, 1}, {1}, {4}, {2, 3}}, pos)
	require.Equal(t, []float64{0.4, 0.2, 0.2, 0.4}, share)
	_, _, pos = es.Classes(2)
	require.Equal(t, [][]int{{0, 1}, {1}, nil, nil}, pos, "only the first n positions")
}
