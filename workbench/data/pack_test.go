package data

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPack_Sequences(t *testing.T) {
	p, err := Pack([][]int32{{1, 2, 3}, {4, 5}, {}}, 2, 0)
	require.NoError(t, err)
	require.Equal(t, []int32{1, 2, 3, 0, 4, 5, 0, 0}, p.Stream)
	require.Equal(t, []int{0, 4, 7}, p.DocStarts)
	require.Equal(t, 3, p.NumSequences()) // ⌊(8-1)/2⌋
	require.Equal(t, []int32{1, 2, 3}, p.Sequence(0))
	require.Equal(t, []int32{3, 0, 4}, p.Sequence(1))
	require.Equal(t, []int32{4, 5, 0}, p.Sequence(2))
	require.Panics(t, func() { p.Sequence(3) })

	for _, tc := range []struct{ seq, t, doc, tok int }{
		{0, 0, 0, 0}, {0, 2, 0, 2}, {1, 1, 0, 3}, {1, 2, 1, 0}, {2, 2, 1, 2},
	} {
		doc, tok := p.Locate(tc.seq, tc.t)
		require.Equal(t, [2]int{tc.doc, tc.tok}, [2]int{doc, tok}, "Locate(%d, %d)", tc.seq, tc.t)
	}
}

func TestPack_Errors(t *testing.T) {
	_, err := Pack([][]int32{{1, 2}}, 0, 0)
	require.ErrorContains(t, err, "seqLen=0")
	_, err = Pack([][]int32{{1, 2}}, -3, 0)
	require.ErrorContains(t, err, "seqLen=-3")
	_, err = Pack(nil, 4, 0)
	require.ErrorContains(t, err, "empty corpus")
	_, err = Pack([][]int32{{}, {}}, 4, 0)
	require.ErrorContains(t, err, "empty corpus")
	_, err = Pack([][]int32{{1, 2}, {3}}, 8, 0)
	require.ErrorContains(t, err, "corpus too small: 5 tokens")
}
