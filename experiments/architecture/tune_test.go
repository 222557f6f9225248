package architecture

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/run"
)

// TestTune_SkipsDiverged searches a grid whose second rate makes the Tiny model diverge: that trial is recorded as
// diverged with loss 0 (JSON has no NaN) and the search chooses the other one; a grid that only diverges is an error
// that says to lower it.
func TestTune_SkipsDiverged(t *testing.T) {
	cfg := Tiny()
	cfg.Mixers = []string{"attention"}
	cfg.LRGrid = []float64{3e-3, 1e4}
	cfg.Train.Steps, cfg.Train.WarmupSteps, cfg.Train.EvalEvery = 10, 1, 5
	tunings, err := newTrainer(cfg, run.NewOptions(run.Progress(nil))).tune(cfg.Data.Source)
	require.NoError(t, err)
	require.Len(t, tunings, 1)
	tu := tunings[0]
	require.Equal(t, []bool{false, true}, tu.Diverged)
	require.Zero(t, tu.Losses[1])
	require.False(t, math.IsNaN(tu.Losses[0]))
	require.Equal(t, 3e-3, tu.Chosen)
	require.True(t, tu.AtEdge)
	require.Contains(t, tu.String(), "10000: diverged")

	cfg.LRGrid = []float64{1e4}
	_, err = newTrainer(cfg, run.NewOptions(run.Progress(nil))).tune(cfg.Data.Source)
	require.ErrorContains(t, err, "lower the grid")
}
