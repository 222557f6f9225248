package lm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/lmdata"
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
	require.ErrorContains(t, err, "synthetic concept corpus")
}
