// Package host copies tensors to and from host float64 slices: the one place where ProtoLab's analysis code (which
// works in float64 on plain slices, see workbench/stats) meets a model's float32, bfloat16 or integer tensors.
package host

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"
)

// Floats returns t's values as float64, in row-major order. Float64, float32, bfloat16, int32 and int64 tensors
// convert (float32 and bfloat16 exactly, integers exactly up to 2⁵³); any other dtype is an error.
func Floats(t *tensors.Tensor) ([]float64, error) {
	out := make([]float64, 0, t.Size())
	var bad bool
	err := t.ConstFlatData(func(flat any) {
		switch v := flat.(type) {
		case []float64:
			out = append(out, v...)
		case []float32:
			for _, x := range v {
				out = append(out, float64(x))
			}
		case []bfloat16.BFloat16:
			for _, x := range v {
				out = append(out, float64(x.Float32()))
			}
		case []int32:
			for _, x := range v {
				out = append(out, float64(x))
			}
		case []int64:
			for _, x := range v {
				out = append(out, float64(x))
			}
		default:
			bad = true
		}
	})
	if err != nil {
		return nil, errors.Wrap(err, "host.Floats: reading a tensor")
	}
	if bad {
		return nil, errors.Errorf("host.Floats: a tensor of dtype %s does not convert to float64 (float64, float32, "+
			"bfloat16, int32 and int64 do)", t.DType())
	}
	return out, nil
}

// MustFloats is Floats for tensors whose dtype the caller built (a model's own float outputs); it panics on any
// other dtype.
func MustFloats(t *tensors.Tensor) []float64 {
	out, err := Floats(t)
	if err != nil {
		panic(err)
	}
	return out
}

// Rows returns t's values as float64 rows of its last axis: a [.., N] tensor becomes Size/N rows of N values each,
// sharing one backing slice.
func Rows(t *tensors.Tensor) ([][]float64, error) {
	flat, err := Floats(t)
	if err != nil {
		return nil, err
	}
	dims := t.Shape().Dimensions
	if len(dims) == 0 || dims[len(dims)-1] == 0 {
		return nil, errors.Errorf("host.Rows: a tensor of shape %s has no rows", t.Shape())
	}
	n := dims[len(dims)-1]
	rows := make([][]float64, len(flat)/n)
	for r := range rows {
		rows[r] = flat[r*n : (r+1)*n : (r+1)*n]
	}
	return rows, nil
}

// Tensor returns values as a tensor of dtype dt with the given dims: float32 rounds each value, float64 copies them.
// Graph inputs of a model's dtype built from host float64 values. It panics when dt is neither float32 nor float64
// or the dims do not hold len(values) values: both are the caller's bug, not bad input.
func Tensor(values []float64, dt dtypes.DType, dims ...int) *tensors.Tensor {
	size := 1
	for _, d := range dims {
		size *= d
	}
	if size != len(values) {
		panic(errors.Errorf("host.Tensor: %d values do not fill dims %v (%d)", len(values), dims, size))
	}
	switch dt {
	case dtypes.Float64:
		return tensors.FromFlatDataAndDimensions(append([]float64(nil), values...), dims...)
	case dtypes.Float32:
		f := make([]float32, len(values))
		for i, x := range values {
			f[i] = float32(x)
		}
		return tensors.FromFlatDataAndDimensions(f, dims...)
	}
	panic(errors.Errorf("host.Tensor: dtype %s; want float32 or float64", dt))
}
