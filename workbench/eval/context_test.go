package eval_test

import (
	stdctx "context"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/wbtest"
)

// doneAfter is a context that reports itself cancelled from its (n+1)-th Err call on: work that checks it once per
// unit stops after n units.
type doneAfter struct {
	stdctx.Context
	n int
}

func (d *doneAfter) Err() error {
	if d.n <= 0 {
		return stdctx.Canceled
	}
	d.n--
	return nil
}

func TestPerplexityContext_StopsBetweenBatches(t *testing.T) {
	b := wbtest.Backend(t)
	batches := []*tensors.Tensor{tensors.FromValue([][]int32{{1, 2, 3}}), tensors.FromValue([][]int32{{4, 5, 6}})}
	_, err := eval.PerplexityContext(&doneAfter{stdctx.Background(), 1}, b, model.NewStore(), uniformLoss, batches)
	require.ErrorIs(t, err, stdctx.Canceled)
	require.ErrorContains(t, err, "before batch 1 of 2")
	res, err := eval.PerplexityContext(&doneAfter{stdctx.Background(), 2}, b, model.NewStore(), uniformLoss, batches)
	require.NoError(t, err)
	require.Equal(t, 4, res.Tokens)
}

func TestGenerateContext_StopsBetweenSteps(t *testing.T) {
	b := wbtest.Backend(t)
	dec, err := eval.NewDecoder(b, model.NewStore(), successorStep, []shapes.Shape{shapes.Make(dtypes.Float32, 1, 1)}, 1,
		16)
	require.NoError(t, err)
	cfg := eval.SampleConfig{MaxNewTokens: 8, Temperature: 0, StopToken: -1, Seed: 1}
	_, _, err = dec.GenerateContext(&doneAfter{stdctx.Background(), 3}, [][]int32{{1}}, cfg)
	require.ErrorIs(t, err, stdctx.Canceled)
	require.ErrorContains(t, err, "at position 3")
	out, _, err := dec.GenerateContext(&doneAfter{stdctx.Background(), 8}, [][]int32{{1}}, cfg)
	require.NoError(t, err)
	require.Len(t, out[0], 8)
}
