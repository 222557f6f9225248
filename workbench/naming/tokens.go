package naming

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/pkg/errors"
)

// Tokens is the labelled evaluation set the units are scored on: N tokens, each with its document and the labels
// it carries (ids into Names).
type Tokens struct {
	Names []string  // [L] label names, e.g. "gender=female"
	Of    [][]int32 // [N] the label ids each token carries, ascending and distinct; empty for none
	Doc   []int32   // [N] the document of each token
}

// N returns the number of tokens.
func (ts *Tokens) N() int { return len(ts.Of) }

// Validate reports the first inconsistency: length mismatch, an out-of-range or repeated label id.
func (ts *Tokens) Validate() error {
	if len(ts.Doc) != len(ts.Of) {
		return errors.Errorf("naming.Tokens: %d documents for %d tokens", len(ts.Doc), len(ts.Of))
	}
	for n, ls := range ts.Of {
		for i, l := range ls {
			if l < 0 || int(l) >= len(ts.Names) || (i > 0 && l <= ls[i-1]) {
				return errors.Errorf("naming.Tokens: token %d has labels %v, want ascending ids in [0, %d)", n, ls,
					len(ts.Names))
			}
		}
	}
	return nil
}

// Counts returns, per label, the number of tokens carrying it: [L].
func (ts *Tokens) Counts() []int {
	c := make([]int, len(ts.Names))
	for _, ls := range ts.Of {
		for _, l := range ls {
			c[l]++
		}
	}
	return c
}

// BaseRates returns b_ℓ, the fraction of all tokens carrying each label: [L].
func (ts *Tokens) BaseRates() []float64 {
	b := make([]float64, len(ts.Names))
	for l, c := range ts.Counts() {
		b[l] = float64(c) / float64(max(1, ts.N()))
	}
	return b
}

// TopTokens returns the indices of the k largest activations, largest first (ties: the lower index first). With
// onePerDoc only the largest activation of each document is eligible, so fewer than k indices come back when
// there are fewer than k documents. NaN activations are never selected. acts and doc have one entry per token.
func TopTokens(acts []float64, doc []int32, k int, onePerDoc bool) []int {
	idx := make([]int, 0, len(acts))
	for i, a := range acts {
		if !math.IsNaN(a) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return acts[idx[a]] > acts[idx[b]] })
	out := make([]int, 0, k)
	seen := map[int32]bool{}
	for _, i := range idx {
		if len(out) == k {
			break
		}
		if onePerDoc {
			if seen[doc[i]] {
				continue
			}
			seen[doc[i]] = true
		}
		out = append(out, i)
	}
	return out
}

// NullTokens returns the top set of a null unit: k tokens drawn uniformly at random, from k distinct random
// documents when onePerDoc (a uniformly chosen token of each), else without replacement from all tokens.
func NullTokens(doc []int32, k int, onePerDoc bool, rng *rand.Rand) []int {
	if !onePerDoc {
		perm := rng.Perm(len(doc))
		return perm[:min(k, len(perm))]
	}
	byDoc := map[int32][]int{}
	var docs []int32
	for i, d := range doc {
		if _, ok := byDoc[d]; !ok {
			docs = append(docs, d)
		}
		byDoc[d] = append(byDoc[d], i)
	}
	rng.Shuffle(len(docs), func(a, b int) { docs[a], docs[b] = docs[b], docs[a] })
	out := make([]int, 0, k)
	for _, d := range docs[:min(k, len(docs))] {
		toks := byDoc[d]
		out = append(out, toks[rng.IntN(len(toks))])
	}
	return out
}
