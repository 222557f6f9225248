package fit

import (
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
)

func TestTokenBatches_ShapesAndExactRestore(t *testing.T) {
	docs := make([][]int32, 12)
	for i := range docs {
		for j := 0; j <= i; j++ {
			docs[i] = append(docs[i], int32(10*i+j))
		}
	}
	packed, err := data.Pack(docs, 6, -1)
	require.NoError(t, err)
	b, err := data.NewBatcher(packed, data.BatcherConfig{BatchSize: 3, Seed: 5, Shuffle: true})
	require.NoError(t, err)
	tb, err := NewTokenBatches(b)
	require.NoError(t, err)

	first, err := tb.Next()
	require.NoError(t, err)
	require.Equal(t, []int{3, 7}, first[0].Shape().Dimensions)
	state, err := tb.State()
	require.NoError(t, err)
	var want [][]int32
	for i := 0; i < 2*b.BatchesPerEpoch(); i++ { // across an epoch boundary
		batch, err := tb.Next()
		require.NoError(t, err)
		want = append(want, tensors.MustCopyFlatData[int32](batch[0]))
	}
	require.NoError(t, tb.Restore(state))
	for i := range want {
		batch, err := tb.Next()
		require.NoError(t, err)
		require.Equal(t, want[i], tensors.MustCopyFlatData[int32](batch[0]), "batch %d after restore", i)
	}
	require.Error(t, tb.Restore([]byte("{")))
	_, err = NewTokenBatches(nil)
	require.Error(t, err)
}
