package interp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// TestRun_Small runs the Small preset (minutes of CPU; skipped with -short) and logs the tables the report quotes.
// $PROTOLAB_INTERP_OUT, when set, is the run.Out root, so that trained models are reused between runs; variants of
// the preset run with `protolab run interp --preset small --set "..."`. It checks what must hold at any training
// outcome: both corpora analysed when WordNet is installed, every unit kind scored and one compiled executable for
// the whole intervention sweep.
func TestRun_Small(t *testing.T) {
	out := wbtest.LongRun(t, "the Small preset takes minutes", "PROTOLAB_INTERP_OUT")
	res, err := Run(Small(), run.Out(out))
	require.NoError(t, err)
	for _, c := range res.Corpora {
		require.Len(t, c.Kinds, 6, c.Source)
		t.Logf("\n%s", MetricsTable(res, c.Source))
	}
	syn := res.Corpus("synthetic")
	require.NotNil(t, syn)
	require.Equal(t, 1, syn.Intervene.Builds)
	t.Logf("\n%s\n%s\n%s\n%s", ModelsTable(res), CoverageTable(res, "synthetic"), InterventionTable(res, "synthetic"),
		ChecksTable(res))
}
