package suppression

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeywordRates checks the generation scores on texts computed by hand.
func TestKeywordRates(t *testing.T) {
	texts := []string{"The chef bakes bread.", "He plays the piano.", "", "Bread, bread<|eos|>"}
	rate, rateSE, anyRate, anySE, words := KeywordRates(texts, []string{"chef", "bakes", "bread", "Bread"})
	// Word fractions 3/4, 0/4 and 2/3 (the empty text has no word; "<|eos|>" is the word "eos").
	fr := []float64{0.75, 0, 2.0 / 3}
	mean := (fr[0] + fr[1] + fr[2]) / 3
	ss := 0.0
	for _, x := range fr {
		ss += (x - mean) * (x - mean)
	}
	require.InDelta(t, mean, rate, 1e-15)
	require.InDelta(t, math.Sqrt(ss/2/3), rateSE, 1e-15)
	require.InDelta(t, 0.5, anyRate, 1e-15)              // 2 of 4 texts
	require.InDelta(t, math.Sqrt(1.0/3/4), anySE, 1e-15) // (1,0,0,1): sample variance 1/3
	require.Equal(t, 11, words)
}
