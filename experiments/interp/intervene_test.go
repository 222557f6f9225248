package interp

import (
	"strings"
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

// TestBuildEvalSet_NextWord checks the word occurrences the interventions score: a position with nextWord k > 0
// predicts the first of k tokens that decode to one whole word ending inside the sequence (a space, then
// letters, then no letter; or the full stop), and every such word start within the sequence is found; some words span several
// tokens.
func TestBuildEvalSet_NextWord(t *testing.T) {
	_, prep, es := tinySyntheticEvalSet(t)
	isLetter := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	dec := func(o int) string { return prep.Tokenizer.DecodeString([]int32{es.stream[o]}) }
	multi, words := 0, 0
	for n, k := range es.nextWord {
		o, pos := es.offset[n], n%es.T
		first := dec(o + 1)
		prev := dec(o)
		starts := len(first) > 1 && first[0] == ' ' && isLetter(first[1]) ||
			isLetter(first[0]) && (prev == "" || !isLetter(prev[len(prev)-1]))
		if k == 0 {
			// Not a word start, or a word that runs past the sequence's last target.
			if starts {
				k := 1 // the word's tokens: the first, then those continuing it with a letter
				for o+1+k < len(es.stream) && isLetter(dec(o + 1 + k)[0]) {
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

	// The splits: selection and calibration from the first half of the validation stream; with eval.data_seed the
	// evaluation and held-out sequences from fresh documents (none of them a document of the training corpus),
	// without it from the second half of the validation stream.
	cfg := Tiny()
	sp, err := buildSplits(prep, Synthetic(), cfg, nil)
	require.NoError(t, err)
	half := prep.ValSeqs.NumSequences() / 2 * es.T
	for _, set := range []*evalSet{sp.sel, sp.cal} {
		for _, o := range set.offset {
			require.Less(t, o, half)
		}
	}
	require.Equal(t, cfg.Intervene.Sequences*es.T, sp.cal.N())
	require.Equal(t, cfg.Intervene.HeldOut*es.T, sp.held.N())
	require.Equal(t, cfg.Eval.Sequences*es.T, sp.eval.N())
	require.Len(t, sp.train, cfg.SAE.TrainSequences)
	fresh, err := freshSource(prep, cfg.Data.Synthetic, cfg.Eval.DataSeed, cfg.Eval.Docs)
	require.NoError(t, err)
	require.Equal(t, fresh.packed.Stream, sp.eval.stream, "evaluated on the fresh documents")
	require.Equal(t, fresh.packed.Stream, sp.held.stream)
	seen := map[string]bool{}
	for _, d := range prep.Corpus.Texts {
		seen[d] = true
	}
	for _, d := range fresh.corpus.Texts {
		require.False(t, seen[d], "a fresh evaluation document is a document of the training corpus: %q", d)
	}
	cfg.Eval.DataSeed = 0
	sp, err = buildSplits(prep, Synthetic(), cfg, nil)
	require.NoError(t, err)
	for _, set := range []*evalSet{sp.eval, sp.held} {
		require.Equal(t, prep.ValSeqs.Stream, set.stream)
		for _, o := range set.offset {
			require.GreaterOrEqual(t, o, half)
		}
	}
	cfg = Tiny()
	cfg.Eval.Docs = 2
	_, err = buildSplits(prep, Synthetic(), cfg, nil)
	require.ErrorContains(t, err, "eval.docs")
}
