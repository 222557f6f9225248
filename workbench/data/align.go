package data

import "github.com/pkg/errors"

// TokenLabels holds one document's word labels mapped onto its tokens. N is the number of tokens, C the number
// of concepts.
type TokenLabels struct {
	Word    []int32   // [N] index of the word the token overlaps most (ties: the later word); -1 if none
	InForce [][]int16 // [C][N] DocLabels.InForce of that word, -1 for Word = -1
	Marked  [][]int16 // [C][N] DocLabels.Marked of that word, -1 for Word = -1
}

// AlignTokens maps word-level labels onto tokens. tokenLens[i] is the length in bytes of token i; the tokens must
// tile the document text exactly (sum = textLen). A token covering only whitespace gets Word = -1; a word split
// into several tokens gives its labels to each of them.
func (l *DocLabels) AlignTokens(tokenLens []int, textLen int) (*TokenLabels, error) {
	sum := 0
	for i, n := range tokenLens {
		if n <= 0 {
			return nil, errors.Errorf("AlignTokens: token %d has length %d, want > 0", i, n)
		}
		sum += n
	}
	if sum != textLen {
		return nil, errors.Errorf("AlignTokens: token lengths sum to %d bytes, document has %d", sum, textLen)
	}
	if len(l.Ends) > 0 && int(l.Ends[len(l.Ends)-1]) > textLen {
		return nil, errors.Errorf("AlignTokens: last word ends at byte %d, past the document's %d bytes",
			l.Ends[len(l.Ends)-1], textLen)
	}
	n := len(tokenLens)
	out := &TokenLabels{Word: make([]int32, n)}
	w := 0 // first word that may still overlap the current token
	pos := 0
	for i, tl := range tokenLens {
		a, b := int32(pos), int32(pos+tl)
		pos += tl
		for w < len(l.Ends) && l.Ends[w] <= a {
			w++
		}
		best, bestOverlap := int32(-1), int32(0)
		for j := w; j < len(l.Starts) && l.Starts[j] < b; j++ {
			ov := min(b, l.Ends[j]) - max(a, l.Starts[j])
			if ov >= bestOverlap && ov > 0 {
				best, bestOverlap = int32(j), ov
			}
		}
		out.Word[i] = best
	}
	gather := func(src [][]int16) [][]int16 {
		dst := make([][]int16, len(src))
		for c, vals := range src {
			dst[c] = make([]int16, n)
			for i, wi := range out.Word {
				if wi < 0 {
					dst[c][i] = -1
				} else {
					dst[c][i] = vals[wi]
				}
			}
		}
		return dst
	}
	out.InForce = gather(l.InForce)
	out.Marked = gather(l.Marked)
	return out, nil
}
