package brown_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data/brown"
)

// TestLoad_RealCorpus reads the installed corpus. It is skipped where the corpus is not installed; `make test` runs
// `make setup` (which runs `make brown`) first, so it runs there.
func TestLoad_RealCorpus(t *testing.T) {
	dir, err := brown.Dir()
	if err != nil {
		t.Skipf("the Brown corpus is not installed (run `make brown`): %v", err)
	}
	docs, err := brown.Load(dir)
	require.NoError(t, err)
	require.Len(t, docs, brown.NumDocs)
	// The corpus's first sentence, as every description of the Brown corpus quotes it.
	require.True(t, strings.HasPrefix(docs[0].Text, "The Fulton County Grand Jury said Friday an investigation of "+
		"Atlanta's recent primary election produced \"no evidence\" that any irregularities took place.\n"),
		docs[0].Text[:200])
	bytes, words := map[brown.Split]int{}, map[brown.Split]int{}
	count := map[brown.Split]int{}
	for i, d := range docs {
		require.Equal(t, brown.IDs()[i], d.ID)
		// Every sample is about 2,000 words (CONTENTS lists 1,988 to 2,160).
		require.InDelta(t, 2050, d.Words, 250, d.ID)
		// No tag, no Brown quote mark, no doubled punctuation and no space before punctuation is left.
		for _, bad := range []string{"/at ", "/nn", "``", "''", " ,", " .", " ;", " )", "( ", ";;", "??", ",,", "  ",
			"\n\n", " \n", "\n "} {
			require.NotContains(t, d.Text, bad, d.ID)
		}
		// Sentences: ordered, disjoint, trimmed spans of the text, about 2,000 words' worth of them.
		require.Greater(t, len(d.Sentences), 40, d.ID)
		end := int32(0)
		for _, sp := range d.Sentences {
			require.True(t, sp[0] >= end && sp[1] > sp[0] && int(sp[1]) <= len(d.Text), "%s: %v", d.ID, sp)
			require.Equal(t, strings.TrimSpace(d.Text[sp[0]:sp[1]]), d.Text[sp[0]:sp[1]], d.ID)
			end = sp[1]
		}
		s := brown.SplitOf(d.ID)
		count[s]++
		bytes[s] += len(d.Text)
		words[s] += d.Words
	}
	for _, s := range brown.Splits() {
		t.Logf("%-10s %3d documents %8d bytes %7d words", s, count[s], bytes[s], words[s])
		require.Positive(t, count[s])
	}
}
