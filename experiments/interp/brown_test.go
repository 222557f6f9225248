package interp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/brown/browntest"
	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/run"
)

// TestRun_TinyBrown runs protocol v2's machinery at Tiny scale on the synthetic corpus (two seeds) and the Brown
// corpus (a fixture shaped like the installed one; one seed, corpora[].seeds): the Brown corpus is analysed with its
// first seed only, its units scored on the test split and named by the WordNet supersenses of its words, its
// interventions targeting those supersenses; the Brown claim rows read it (one seed: not testable, saying so) while
// the synthetic rows read the synthetic runs. The labels need the WordNet database: skipped without it (`make test`
// installs it).
func TestRun_TinyBrown(t *testing.T) {
	if _, err := wordnet.Dir(); err != nil {
		t.Skipf("the Brown corpus's labels are WordNet's supersenses; WordNet is not installed (make wordnet): %v",
			err)
	}
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	cfg := Tiny()
	cfg.Seeds = 2
	cfg.Corpora = []CorpusConfig{Synthetic(), Brown()}
	cfg.Corpora[1].Optional, cfg.Corpora[1].Seeds = false, 1
	cfg.Eval.BrownDocs = 28
	require.NoError(t, cfg.Validate())
	res, err := Runs.Run(cfg, run.Out(t.TempDir()), run.Progress(nil))
	require.NoError(t, err)
	require.Empty(t, res.Notes)
	require.Len(t, res.Runs(lmdata.SourceSynthetic), 2)
	require.Len(t, res.Runs(lmdata.SourceBrown), 1, "corpora[1].seeds=1: the first seed only")
	require.Len(t, res.Replicates[0].Corpora, 1)

	b := res.Corpus(lmdata.SourceBrown)
	require.NotNil(t, b)
	require.Equal(t, cfg.Seed, b.Seed)
	require.Equal(t, "the first 28 documents of the Brown test split (seed 1001)", b.EvalText)
	require.Len(t, b.Kinds, len(pair.Kinds()))
	require.Contains(t, b.LabelNames, naming.NoneLabel)
	for _, name := range b.LabelNames {
		require.True(t, name == naming.NoneLabel || strings.HasPrefix(name, "supersense="), name)
		if name != naming.NoneLabel {
			require.Contains(t, wordnet.LexNames[:], strings.TrimPrefix(name, "supersense="))
		}
	}
	require.Greater(t, len(b.LabelNames), 2, "several supersenses label the test split's words")
	require.NotNil(t, b.Intervene, "interventions on the Brown corpus")
	require.NotEmpty(t, b.Intervene.Targets)
	for _, target := range b.Intervene.Targets {
		require.True(t, strings.HasPrefix(target, "supersense="), target)
	}
	require.Equal(t, 1, b.Intervene.Builds)

	claims := Claims(res)
	require.Len(t, claims, 10)
	for i, c := range claims {
		require.NoError(t, c.Validate(), c.ID)
		if i < 5 {
			require.Contains(t, c.Untestable, "2 training seed", c.Claim)
			continue
		}
		require.Contains(t, c.Claim, "Brown")
		require.Contains(t, c.Untestable, "1 training seed", "the Brown row reads the Brown run: %s", c.Claim)
	}
	require.Contains(t, res.String(), "(brown)", "the report lists the Brown disentanglement")
}
