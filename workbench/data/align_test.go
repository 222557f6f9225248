package data

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAlignTokens_HandExample(t *testing.T) {
	text := "The queen  plays."
	l := DocLabels{
		Starts:  []int32{0, 4, 11, 16},
		Ends:    []int32{3, 9, 16, 17},
		InForce: [][]int16{{1, 1, 1, 1}},
		Marked:  [][]int16{{-1, 1, -1, -1}},
	}
	// Tokens: "The" " que" "en" " " " plays" "."
	got, err := l.AlignTokens([]int{3, 4, 2, 1, 6, 1}, len(text))
	require.NoError(t, err)
	require.Equal(t, []int32{0, 1, 1, -1, 2, 3}, got.Word)
	require.Equal(t, [][]int16{{1, 1, 1, -1, 1, 1}}, got.InForce)
	require.Equal(t, [][]int16{{-1, 1, 1, -1, -1, -1}}, got.Marked)

	// One token spanning two words goes to the one it overlaps most; ties go to the later word.
	got, err = l.AlignTokens([]int{5, 12}, len(text)) // "The q" | "ueen  plays."
	require.NoError(t, err)
	require.Equal(t, []int32{0, 2}, got.Word)
	got, err = l.AlignTokens([]int{6, 11}, len(text)) // "The qu" (3 vs 2) | "een  plays." (3 vs 5)
	require.NoError(t, err)
	require.Equal(t, []int32{0, 2}, got.Word)
	got, err = l.AlignTokens([]int{1, 5, 11}, len(text)) // "T" | "he qu": a tie, 2 vs 2 → queen | "een  plays."
	require.NoError(t, err)
	require.Equal(t, []int32{0, 1, 2}, got.Word)
	got, err = l.AlignTokens([]int{8, 9}, len(text)) // "The quee": 3 vs 4 → queen
	require.NoError(t, err)
	require.Equal(t, []int32{1, 2}, got.Word)
}

// On real synthetic documents, any tokenization gives every token inside a word that word's labels.
func TestAlignTokens_SyntheticDocuments(t *testing.T) {
	c, _ := smallSynthetic(t, 20)
	r := newRNG(3)
	for d, text := range c.Texts {
		var lens []int
		for pos := 0; pos < len(text); {
			n := min(1+r.intn(4), len(text)-pos)
			lens = append(lens, n)
			pos += n
		}
		l := &c.Labels[d]
		got, err := l.AlignTokens(lens, len(text))
		require.NoError(t, err)
		pos := int32(0)
		for i, n := range lens {
			a, b := pos, pos+int32(n)
			pos = b
			w := got.Word[i]
			if w < 0 {
				require.Equal(t, " ", text[a:b], "only whitespace tokens may lack a word")
				continue
			}
			require.Less(t, l.Starts[w], b)
			require.Greater(t, l.Ends[w], a)
			for ci := range c.Concepts {
				require.Equal(t, l.InForce[ci][w], got.InForce[ci][i])
				require.Equal(t, l.Marked[ci][w], got.Marked[ci][i])
			}
		}
	}
}

func TestAlignTokens_Errors(t *testing.T) {
	l := DocLabels{Starts: []int32{0}, Ends: []int32{3}, InForce: [][]int16{{0}}, Marked: [][]int16{{0}}}
	_, err := l.AlignTokens([]int{1, 1}, 3)
	require.ErrorContains(t, err, "sum to 2 bytes, document has 3")
	_, err = l.AlignTokens([]int{3, 0}, 3)
	require.ErrorContains(t, err, "token 1 has length 0")
	_, err = l.AlignTokens([]int{2}, 2)
	require.ErrorContains(t, err, "past the document")
}
