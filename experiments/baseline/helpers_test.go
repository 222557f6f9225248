package lm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/lmdata"
)

// mustPerplexity re-prepares cfg's data (loading the saved tokenizer) and evaluates m on the same validation batches
// Run used.
func mustPerplexity(t *testing.T, m *Model, cfg Config) eval.PerplexityResult {
	t.Helper()
	d := cfg.Data
	d.Seed = cfg.Seed
	prep, err := lmdata.Prepare(d, cfg.Out+"/"+TokenizerFile)
	require.NoError(t, err)
	vals, err := prep.ValTensors(cfg.EvalBatches)
	require.NoError(t, err)
	res, err := m.Perplexity(vals)
	require.NoError(t, err)
	return res
}
