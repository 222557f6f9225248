package brown_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data/brown"
)

// referenceSplit is the split rule written again another way: the hex digest's first 16 digits as a number.
func referenceSplit(t *testing.T, id string) brown.Split {
	sum := sha256.Sum256([]byte("brown:" + id))
	h, err := strconv.ParseUint(hex.EncodeToString(sum[:])[:16], 16, 64)
	require.NoError(t, err)
	switch b := h % 100; {
	case b < 80:
		return brown.Train
	case b < 90:
		return brown.Validation
	case b < 95:
		return brown.Test
	}
	return brown.Heldout
}

// TestSplitOf_FixedByHash checks every id against the reference rule and that the four splits partition the corpus
// in sensible proportions (80/10/5/5 of 500 in expectation).
func TestSplitOf_FixedByHash(t *testing.T) {
	count := map[brown.Split]int{}
	for _, id := range brown.IDs() {
		s := brown.SplitOf(id)
		require.Equal(t, referenceSplit(t, id), s, id)
		count[s]++
	}
	t.Logf("split sizes: %v", count)
	require.Len(t, count, 4)
	require.Equal(t, brown.NumDocs, count[brown.Train]+count[brown.Validation]+count[brown.Test]+count[brown.Heldout])
	require.InDelta(t, 400, count[brown.Train], 40)
	require.InDelta(t, 50, count[brown.Validation], 25)
	require.InDelta(t, 25, count[brown.Test], 15)
	require.InDelta(t, 25, count[brown.Heldout], 15)

	docs := make([]brown.Document, 0, brown.NumDocs)
	for _, id := range brown.IDs() {
		docs = append(docs, brown.Document{ID: id})
	}
	for _, s := range brown.Splits() {
		sel := brown.Select(docs, s)
		require.Len(t, sel, count[s], s)
		for _, d := range sel {
			require.Equal(t, s, brown.SplitOf(d.ID))
		}
	}
}
