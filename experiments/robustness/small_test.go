package robustness

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// TestRun_Small runs the Small preset (minutes of CPU; skipped with -short) and logs its report.
// $PROTOLAB_INTERP_OUT, when set, is the run.Out root: the same as experiments/interp's TestRun_Small, so that the
// two studies share the trained models. It checks what must hold at any training outcome: both models compared on
// every kind, and synonym perturbations on WordNet when it is installed.
func TestRun_Small(t *testing.T) {
	out := wbtest.LongRun(t, "the Small preset takes minutes", "PROTOLAB_INTERP_OUT")
	res, err := Runs.Run(Small(), run.Out(out))
	require.NoError(t, err)
	for _, c := range res.Corpora {
		require.Len(t, c.Comparisons, 2, c.Source)
		if c.Source == "wordnet" {
			require.Contains(t, c.Kinds, data.PerturbSynonym)
		}
	}
	t.Logf("\n%s", res)
}
