package data

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplit_PartitionsDocuments(t *testing.T) {
	c, _ := smallSynthetic(t, 101)
	train, val, err := c.Split(0.1, 7)
	require.NoError(t, err)
	require.Len(t, val.Texts, 10) // round(0.1·101)
	require.Len(t, train.Texts, 91)
	require.NoError(t, train.Validate())
	require.NoError(t, val.Validate())

	// Disjoint, together all documents, each keeping its labels and the original order.
	pos := map[string]int{}
	for i, tx := range c.Texts {
		pos[tx] = i
	}
	var all []int
	for _, part := range []*Corpus{train, val} {
		var idx []int
		for i, tx := range part.Texts {
			j, ok := pos[tx]
			require.True(t, ok)
			require.Equal(t, c.Labels[j], part.Labels[i])
			idx = append(idx, j)
		}
		require.True(t, slices.IsSorted(idx))
		all = append(all, idx...)
	}
	slices.Sort(all)
	require.Equal(t, 101, len(slices.Compact(all)))

	// Deterministic for a seed, different for another.
	_, val2, err := c.Split(0.1, 7)
	require.NoError(t, err)
	require.Equal(t, val.Texts, val2.Texts)
	_, val3, err := c.Split(0.1, 8)
	require.NoError(t, err)
	require.NotEqual(t, val.Texts, val3.Texts)

	// A tiny positive fraction still yields one validation document; 0 yields none.
	_, val, err = c.Split(0.001, 1)
	require.NoError(t, err)
	require.Len(t, val.Texts, 1)
	train, val, err = c.Split(0, 1)
	require.NoError(t, err)
	require.Empty(t, val.Texts)
	require.Len(t, train.Texts, 101)
}

func TestSplit_Errors(t *testing.T) {
	c := &Corpus{Source: "two", Texts: []string{"a", "b"}}
	for _, f := range []float64{-0.1, 1, 1.5, math.NaN()} {
		_, _, err := c.Split(f, 1)
		require.ErrorContains(t, err, "valFraction", "fraction %g", f)
	}
	_, _, err := (&Corpus{Texts: []string{"only"}}).Split(0.5, 1)
	require.ErrorContains(t, err, "no training documents left")
	_, _, err = (&Corpus{}).Split(0.1, 1)
	require.ErrorContains(t, err, "empty corpus")
}

func TestCorpus_Validate(t *testing.T) {
	require.ErrorContains(t, (*Corpus)(nil).Validate(), "empty corpus")
	require.ErrorContains(t, (&Corpus{Texts: []string{"", ""}}).Validate(), "all empty")
	require.NoError(t, (&Corpus{Texts: []string{"x"}}).Validate())

	c, _ := smallSynthetic(t, 3)
	bad := *c
	bad.Labels = c.Labels[:2]
	require.ErrorContains(t, bad.Validate(), "2 label sets for 3 documents")

	bad = *c
	bad.Labels = slices.Clone(c.Labels)
	l := bad.Labels[1]
	l.Ends = slices.Clone(l.Ends)
	l.Ends[0] = int32(len(c.Texts[1]) + 5)
	bad.Labels[1] = l
	require.ErrorContains(t, bad.Validate(), "document 1")

	idx, err := c.ConceptIndex("topic")
	require.NoError(t, err)
	require.Equal(t, ConceptTopic, idx)
	_, err = c.ConceptIndex("mood")
	require.ErrorContains(t, err, `no concept "mood"`)
}

func TestMerge(t *testing.T) {
	a, _ := smallSynthetic(t, 2)
	b, _ := smallSynthetic(t, 3)
	m := Merge("ab", a, b)
	require.Equal(t, append(slices.Clone(a.Texts), b.Texts...), m.Texts)
	require.Len(t, m.Labels, 5)
	m = Merge("ac", a, &Corpus{Texts: []string{"plain"}})
	require.Len(t, m.Texts, 3)
	require.Nil(t, m.Labels)
	require.Nil(t, m.Concepts)
}
