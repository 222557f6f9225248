package lm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/run"
)

// TestTrain_InterruptedDuringDataPreparation cancels the run's context while the tokenizer trains: Train returns the
// context's error, the folder holds at most its config and lock (no tokenizer, checkpoint or result, no
// temporary file; a folder the call created may be removed), and the same call then trains the run to the end. An
// opened model's Interrupt stops Perplexity and Generate.
func TestTrain_InterruptedDuringDataPreparation(t *testing.T) {
	cfg := tinyConfig()
	// A corpus no other test prepares, so that the tokenizer really trains here (prepare memoises by the data
	// config; Data.Seed would not do: Resolved sets it from the run seed).
	cfg.Data.Synthetic.Seed = 17
	forgetPreparedData() // and none this test prepared before (go test -count=N)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := cfg
	interrupted.Data.Tokenizer.Progress = func(done, total int) {
		if done == 3 {
			cancel()
		}
	}
	dir := filepath.Join(t.TempDir(), "run")
	_, err := Train(interrupted, dir, run.Context(ctx), run.Progress(nil))
	require.ErrorIs(t, err, context.Canceled)
	entries, err := os.ReadDir(dir)
	require.True(t, err == nil || os.IsNotExist(err), "%v", err)
	for _, e := range entries {
		require.True(t, e.Name() == ConfigFile || strings.HasSuffix(e.Name(), ".lock"),
			"an interrupted data preparation left %s", e.Name())
	}

	m, err := Train(cfg, dir, run.Progress(nil))
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(dir, ResultFile))

	m, err = Open(dir)
	require.NoError(t, err)
	d, err := m.Data()
	require.NoError(t, err)
	vals, err := d.ValTensors(1)
	require.NoError(t, err)
	stopped, stop := context.WithCancel(context.Background())
	stop()
	m.Interrupt = stopped
	_, err = m.Perplexity(vals)
	require.ErrorIs(t, err, context.Canceled)
	_, _, _, err = m.Generate([]string{"the"}, eval.SampleConfig{MaxNewTokens: 3, StopToken: -1})
	require.ErrorIs(t, err, context.Canceled)
}

// forgetPreparedData empties the process's memo of prepared data, so that the next preparation really runs.
func forgetPreparedData() {
	prepared.Lock()
	defer prepared.Unlock()
	prepared.keys, prepared.vals = nil, nil
}
