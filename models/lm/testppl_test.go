package lm

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/run"
)

// TestTestPerplexity_FreshWindows scores a trained model on fresh documents: `batches` batches of B windows of T
// tokens, the same numbers as Perplexity on those windows packed by hand, another value than the validation split's,
// and the training seed refused.
func TestTestPerplexity_FreshWindows(t *testing.T) {
	m, err := Train(tinyConfig(), "", run.Progress(nil))
	require.NoError(t, err)
	r, err := m.TestPerplexity(99, 40, 2)
	require.NoError(t, err)
	dc := m.Config.Data
	require.Equal(t, 2*dc.BatchSize*dc.SeqLen, r.Tokens)
	require.InDelta(t, math.Exp(r.Loss), r.Perplexity, 1e-9*r.Perplexity)
	require.NotEqual(t, m.Result.Val.Loss, r.Loss)

	corpus, err := m.FreshCorpus(40, 99)
	require.NoError(t, err)
	prep, err := m.Data()
	require.NoError(t, err)
	packed, err := data.Pack(prep.Encode(corpus.Texts), dc.SeqLen, prep.EOS)
	require.NoError(t, err)
	var rows [][]int32
	for i := range 2 * dc.BatchSize {
		rows = append(rows, packed.Sequence(i))
	}
	losses, err := m.TokenLosses(rows)
	require.NoError(t, err)
	sum := 0.0
	for _, row := range losses {
		for _, l := range row {
			sum += l
		}
	}
	require.InDelta(t, sum/float64(r.Tokens), r.Loss, 1e-5)

	_, err = m.TestPerplexity(m.Config.Data.Synthetic.Seed, 40, 2)
	require.ErrorContains(t, err, "repeat training documents")
}
