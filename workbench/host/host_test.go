package host

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/require"
)

// TestTensor_DTypes: float64 values are copied, float32 ones rounded, with the given dims; a wrong size panics.
func TestTensor_DTypes(t *testing.T) {
	x := []float64{1, 0.1, -3}
	t64 := Tensor(x, dtypes.Float64, 3, 1)
	require.Equal(t, []int{3, 1}, t64.Shape().Dimensions)
	require.Equal(t, x, tensors.MustCopyFlatData[float64](t64))
	x[0] = 2 // the tensor holds a copy
	require.Equal(t, 1.0, tensors.MustCopyFlatData[float64](t64)[0])
	t32 := Tensor(x, dtypes.Float32, 1, 3)
	require.Equal(t, []float32{2, float32(0.1), -3}, tensors.MustCopyFlatData[float32](t32))
	require.Panics(t, func() { Tensor(x, dtypes.Float32, 2, 2) })
	require.Panics(t, func() { Tensor(x, dtypes.Int32, 3) })
}

func TestFloats_DTypes(t *testing.T) {
	got, err := Floats(tensors.FromValue([][]float32{{1, 2}, {3, 4.5}}))
	require.NoError(t, err)
	require.Equal(t, []float64{1, 2, 3, 4.5}, got)
	got, err = Floats(tensors.FromValue([]float64{-1, 0.25}))
	require.NoError(t, err)
	require.Equal(t, []float64{-1, 0.25}, got)
	got, err = Floats(tensors.FromValue([]int32{1, -7}))
	require.NoError(t, err)
	require.Equal(t, []float64{1, -7}, got)
	got, err = Floats(tensors.FromValue([]bfloat16.BFloat16{bfloat16.FromFloat32(0.5)}))
	require.NoError(t, err)
	require.Equal(t, []float64{0.5}, got)
	_, err = Floats(tensors.FromValue([]bool{true}))
	require.ErrorContains(t, err, "does not convert")
	back, err := Floats(Tensor([]float64{0.5, -2}, dtypes.Float32, 2))
	require.NoError(t, err)
	require.Equal(t, []float64{0.5, -2}, back)
}

func TestRows(t *testing.T) {
	rows, err := Rows(tensors.FromValue([][][]float32{{{1, 2, 3}, {4, 5, 6}}}))
	require.NoError(t, err)
	require.Equal(t, [][]float64{{1, 2, 3}, {4, 5, 6}}, rows)
	rows[0] = append(rows[0], 9) // capped: appending to a row does not overwrite the next
	require.Equal(t, []float64{4, 5, 6}, rows[1])
	_, err = Rows(tensors.FromScalar(float32(1)))
	require.ErrorContains(t, err, "no rows")
}
