package lm

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/brown/browntest"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// TestFreshCorpus_NewLabelledDocuments: the fresh corpus has the model's synthetic settings but another seed, so its
// documents are labelled and differ from the training corpus's; the training seed and another source are refused.
func TestFreshCorpus_NewLabelledDocuments(t *testing.T) {
	m := &Model{Config: tinyPrism().Resolved()}
	c, err := m.FreshCorpus(6, 99)
	require.NoError(t, err)
	require.Len(t, c.Texts, 6)
	require.Len(t, c.Labels, 6)
	sc := m.Config.Data.Synthetic
	train, err := data.Synthetic(sc)
	require.NoError(t, err)
	require.NotEqual(t, train.Texts[:6], c.Texts)
	sc.Seed, sc.NumDocs = 99, 6
	want, err := data.Synthetic(sc)
	require.NoError(t, err)
	require.Equal(t, want.Texts, c.Texts)

	_, err = m.FreshCorpus(6, m.Config.Data.Synthetic.Seed)
	require.ErrorContains(t, err, "repeat training documents")
	m.Config.Data.Source = lmdata.SourceWordNet
	_, err = m.FreshCorpus(6, 99)
	require.ErrorContains(t, err, "synthetic concept corpus or the Brown corpus")
}

// TestFreshCorpus_BrownEvalSplitsByParity: on the Brown corpus an odd seed reads the test split and an even seed the
// heldout split (the first docs documents, in corpus order), never a training or validation document; more
// documents than the split holds is an error naming its size.
func TestFreshCorpus_BrownEvalSplitsByParity(t *testing.T) {
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	m := &Model{Config: tinyConfig().Resolved()}
	m.Config.Data.Source = lmdata.SourceBrown
	for seed, split := range map[uint64]brown.Split{9001: brown.Test, 1001: brown.Test, 9002: brown.Heldout,
		1002: brown.Heldout} {
		require.Equal(t, split, EvalSplitOf(seed))
		all, err := lmdata.EvalCorpus(m.Config.Data, split)
		require.NoError(t, err)
		n := len(all.Texts)
		c, err := m.FreshCorpus(n-1, seed)
		require.NoError(t, err, seed)
		require.Equal(t, all.Texts[:n-1], c.Texts, seed)
		for i, id := range brown.IDs() {
			if brown.SplitOf(id) != split {
				require.NotContains(t, c.Texts, browntest.DocText(i), "seed %d gave %s (%s)", seed, id,
					brown.SplitOf(id))
			}
		}
		_, err = m.FreshCorpus(n+1, seed)
		require.ErrorContains(t, err, fmt.Sprintf("%d documents asked of the Brown corpus's %s split (seed %d), "+
			"which has %d", n+1, split, seed, n))
	}
	test, err := m.FreshCorpus(3, 9001)
	require.NoError(t, err)
	held, err := m.FreshCorpus(3, 9002)
	require.NoError(t, err)
	require.NotEqual(t, test.Texts, held.Texts)
	_, err = m.FreshCorpus(0, 9001)
	require.ErrorContains(t, err, "ask for 1 to")
}

// TestTestPerplexity_Brown trains for a second on the Brown fixture and scores the test and heldout splits.
func TestTestPerplexity_Brown(t *testing.T) {
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	c := tinyConfig()
	c.Data.Source = lmdata.SourceBrown
	m, err := Train(c, "", run.Progress(nil))
	require.NoError(t, err)
	dc := m.Config.Data
	for _, seed := range []uint64{9001, 9002} {
		r, err := m.TestPerplexity(seed, 10, 1)
		require.NoError(t, err, seed)
		require.Equal(t, dc.BatchSize*dc.SeqLen, r.Tokens)
		require.False(t, math.IsNaN(r.Loss) || math.IsInf(r.Loss, 0))
	}
}
