package tokenizer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrainContext_StopsWhenDone checks that a done context stops training before counting, and between merges:
// cancelling from the progress callback after 5 merges ends the merge loop there, with the context's error.
func TestTrainContext_StopsWhenDone(t *testing.T) {
	cfg := smallConfig(40)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := TrainContext(ctx, trickyTexts, cfg)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "counting the corpus")

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	last := 0
	cfg.Progress = func(done, total int) {
		last = done
		if done == 5 {
			cancel()
		}
	}
	cfg.MinPairCount = 1
	_, err = TrainContext(ctx, trickyTexts, cfg)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "after 5 of 40 merges")
	require.Equal(t, 5, last, "merges went on after the cancel")

	cfg.Progress = nil
	tok, err := TrainContext(context.Background(), trickyTexts, cfg)
	require.NoError(t, err)
	require.Len(t, tok.Merges(), 40)
}
