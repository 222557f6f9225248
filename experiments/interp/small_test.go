package interp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// TestRun_Small runs the Small preset, the study's protocol (tens of minutes of CPU; skipped with -short), and logs
// the tables the report quotes. $PROTOLAB_INTERP_OUT, when set, is the run.Out root, so that trained models are
// reused between runs; variants of the preset run with `protolab run interp --preset small --set "..."`. It checks
// what must hold at any training outcome: both corpora analysed when WordNet is installed, every seed analysed,
// every unit kind scored, one compiled executable for each intervention sweep and every claim valid.
func TestRun_Small(t *testing.T) {
	out := wbtest.LongRun(t, "the Small preset takes tens of minutes", "PROTOLAB_INTERP_OUT")
	cfg := Small()
	res, err := Runs.Run(cfg, run.Out(out))
	require.NoError(t, err)
	require.Len(t, res.Seeds, cfg.Seeds)
	for _, c := range res.Corpora {
		require.Len(t, c.Kinds, len(pair.Kinds()), c.Source)
		require.Len(t, res.Runs(c.Source), cfg.Seeds, c.Source)
		t.Logf("\n%s\n%s", MetricsTable(res, c.Source), DisentanglementTable(res, c.Source))
	}
	for _, c := range res.Runs("synthetic") {
		require.Equal(t, 1, c.Intervene.Builds)
	}
	for _, c := range Claims(res) {
		require.NoError(t, c.Validate(), c.ID)
	}
	t.Logf("\n%s\n%s\n%s\n%s\n%s", ModelsTable(res), CoverageTable(res, "synthetic"),
		InterventionTable(res, "synthetic"), ChecksTable(res), ClaimsTable(res))
}
