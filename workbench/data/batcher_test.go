package data

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func packedRange(t *testing.T, numSeq, seqLen int) *Packed {
	t.Helper()
	doc := make([]int32, numSeq*seqLen)
	for i := range doc {
		doc[i] = int32(i + 1)
	}
	p, err := Pack([][]int32{doc}, seqLen, 0)
	require.NoError(t, err)
	require.Equal(t, numSeq, p.NumSequences())
	return p
}

func TestBatcher_EpochsAndShapes(t *testing.T) {
	p := packedRange(t, 23, 5)
	b, err := NewBatcher(p, BatcherConfig{BatchSize: 4, Seed: 9, Shuffle: true})
	require.NoError(t, err)
	require.Equal(t, 5, b.BatchesPerEpoch())
	var orders [][]int
	for range 3 {
		var order []int
		for range b.BatchesPerEpoch() {
			batch := b.Next()
			require.Len(t, batch.Tokens, 4)
			for r, row := range batch.Tokens {
				require.Len(t, row, 6)
				require.Equal(t, p.Sequence(batch.Index[r]), row)
				require.Equal(t, row[:5], batch.Inputs()[r])
				require.Equal(t, row[1:], batch.Targets()[r])
			}
			order = append(order, batch.Index...)
		}
		seen := map[int]bool{}
		for _, i := range order {
			require.False(t, seen[i], "sequence %d twice in one epoch", i)
			seen[i] = true
		}
		require.Len(t, order, 20) // ⌊23/4⌋·4
		orders = append(orders, order)
	}
	require.NotEqual(t, orders[0], orders[1], "each epoch must reshuffle")
	require.Equal(t, Cursor{Epoch: 2, Position: 20, NumSequences: 23, BatchSize: 4}, b.Cursor())

	// Without shuffling, stream order.
	seq, err := NewBatcher(p, BatcherConfig{BatchSize: 4})
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2, 3}, seq.Next().Index)
	require.Equal(t, []int{4, 5, 6, 7}, seq.Next().Index)

	// Rows are copies: writing into a batch leaves the data intact.
	batch := seq.Next()
	batch.Tokens[0][0] = -7
	require.NotEqual(t, int32(-7), p.Sequence(8)[0])
}

// A run resumed from a saved (JSON round-tripped) cursor sees exactly the batches of an uninterrupted run,
// across epoch boundaries.
func TestBatcher_ResumeReproducesUninterruptedRun(t *testing.T) {
	p := packedRange(t, 13, 3)
	cfg := BatcherConfig{BatchSize: 3, Seed: 42, Shuffle: true}
	ref, err := NewBatcher(p, cfg)
	require.NoError(t, err)
	var want [][]int
	for range 20 {
		want = append(want, ref.Next().Index)
	}
	for _, stop := range []int{0, 1, 3, 4, 7, 13} {
		run, err := NewBatcher(p, cfg)
		require.NoError(t, err)
		for range stop {
			run.Next()
		}
		saved, err := json.Marshal(run.Cursor())
		require.NoError(t, err)

		var cur Cursor
		require.NoError(t, json.Unmarshal(saved, &cur))
		resumed, err := NewBatcher(p, cfg)
		require.NoError(t, err)
		require.NoError(t, resumed.SetCursor(cur))
		for step := stop; step < len(want); step++ {
			require.Equal(t, want[step], resumed.Next().Index, "stopped at %d, step %d", stop, step)
		}
	}
	// Another seed gives another order.
	other, err := NewBatcher(p, BatcherConfig{BatchSize: 3, Seed: 43, Shuffle: true})
	require.NoError(t, err)
	var got [][]int
	for range 4 {
		got = append(got, other.Next().Index)
	}
	require.NotEqual(t, want[:4], got)
}

func TestBatcher_Errors(t *testing.T) {
	p := packedRange(t, 5, 4)
	_, err := NewBatcher(p, BatcherConfig{BatchSize: 0})
	require.ErrorContains(t, err, "batch_size=0")
	_, err = NewBatcher(p, BatcherConfig{BatchSize: -2})
	require.ErrorContains(t, err, "batch_size=-2")
	_, err = NewBatcher(p, BatcherConfig{BatchSize: 6})
	require.ErrorContains(t, err, "too small to make one batch: 5 sequences")
	_, err = NewBatcher(nil, BatcherConfig{BatchSize: 1})
	require.Error(t, err)

	b, err := NewBatcher(p, BatcherConfig{BatchSize: 2})
	require.NoError(t, err)
	require.ErrorContains(t, b.SetCursor(Cursor{Position: 2, NumSequences: 6, BatchSize: 2}), "cursor is for 6 sequences")
	require.ErrorContains(t, b.SetCursor(Cursor{Position: 1, NumSequences: 5, BatchSize: 2}), "position=1")
	require.ErrorContains(t, b.SetCursor(Cursor{Position: 6, NumSequences: 5, BatchSize: 2}), "position=6")
	require.ErrorContains(t, b.SetCursor(Cursor{Epoch: -1, NumSequences: 5, BatchSize: 2}), "epoch=-1")
	require.NoError(t, b.SetCursor(Cursor{Epoch: 3, Position: 4, NumSequences: 5, BatchSize: 2}))
}
