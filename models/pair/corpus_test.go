package pair

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckCorpora(t *testing.T) {
	type c struct {
		source   string
		optional bool
	}
	check := func(cs ...c) error {
		return CheckCorpora(len(cs), func(i int) (string, bool) { return cs[i].source, cs[i].optional })
	}
	require.NoError(t, check(c{"synthetic", false}, c{"wordnet", true}))
	require.ErrorContains(t, check(), "corpora is empty")
	require.ErrorContains(t, check(c{"wordnet", true}), "corpora[0] (wordnet) is optional")
	require.ErrorContains(t, check(c{"synthetic", false}, c{"", true}), "corpora[1].source is empty")
}
