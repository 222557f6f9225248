package lmdata

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FindCorpus finds the first corpus's result and every further one's by name, case-insensitively, reads an unnamed
// result as the synthetic corpus, returns pointers into the caller's values, and nil for a corpus not run.
func TestFindCorpus(t *testing.T) {
	type part struct{ src string }
	name := func(p *part) string { return p.src }
	first, others := &part{""}, []part{{"brown"}, {"/data/x.txt"}}
	require.Same(t, first, FindCorpus(first, others, name, SourceSynthetic), "unnamed: the synthetic corpus")
	require.Same(t, &others[0], FindCorpus(first, others, name, "Brown"))
	require.Same(t, &others[1], FindCorpus(first, others, name, "/data/x.txt"))
	require.Nil(t, FindCorpus(first, others, name, SourceWordNet))
	require.Nil(t, FindCorpus(&part{"brown"}, nil, name, SourceSynthetic), "a named first corpus is only itself")
}
