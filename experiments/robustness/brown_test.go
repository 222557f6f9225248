package robustness

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/brown/browntest"
	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// TestRun_TinyBrown runs the study at Tiny scale on the synthetic corpus and the Brown corpus (a fixture shaped like
// the installed one): the Brown prompts are sentences of its test split's documents (eval_seed odd), perturbed by
// the three typos and WordNet's synonyms; the synthetic prompts stay validation documents' prefixes. Synonyms need
// the WordNet database: skipped without it (`make test` installs it).
func TestRun_TinyBrown(t *testing.T) {
	if _, err := wordnet.Dir(); err != nil {
		t.Skipf("the Brown corpus's synonyms are WordNet's; WordNet is not installed (make wordnet): %v", err)
	}
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	cfg := Tiny()
	cfg.Corpora = []CorpusConfig{Synthetic(), Brown()}
	cfg.Corpora[1].Optional = false
	cfg.Prompts, cfg.EvalSeed, cfg.BrownDocs = 12, 1001, 28
	require.NoError(t, cfg.Validate())
	res, err := Runs.Run(cfg, run.Out(t.TempDir()), run.Progress(nil))
	require.NoError(t, err)
	require.Len(t, res.Corpora, 2)
	require.Equal(t, "prefixes of validation documents", res.Corpora[0].PromptText)
	b := res.Corpus(lmdata.SourceBrown)
	require.Equal(t, "sentences of the first 28 documents of the Brown test split (seed 1001)", b.PromptText)
	require.Equal(t, append(append([]string(nil), cfg.Perturbations...), data.PerturbSynonym), b.Kinds)
	dc := cfg.Data
	dc.Source = lmdata.SourceBrown
	test, err := lmdata.EvalCorpus(dc, brown.Test)
	require.NoError(t, err)
	require.NotEmpty(t, b.Examples)
	for _, p := range b.Examples {
		inTest := false
		for d, text := range test.Texts {
			for _, s := range test.Labels[d].Sentences {
				inTest = inTest || strings.HasPrefix(text[s.Start:s.End], p.Original)
			}
		}
		require.True(t, inTest, "%q starts a sentence of the test split", p.Original)
	}
	for _, m := range b.Comparisons {
		require.Len(t, m.ByKind, len(b.Kinds))
		for _, s := range m.ByKind {
			require.Positive(t, s.Pairs, "%s %s", m.Mixer, s.Kind)
		}
	}
	require.Contains(t, res.String(), "Robustness (brown)")
}
