package probe

import (
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"
)

// Host-side tensor plumbing for Generate: slicing one position out of a patch value, stacking and concatenating
// per-step activations. All of it copies raw row-major bytes, so it works for every dtype.

// bytesOf returns a copy of t's raw data.
func bytesOf(t *tensors.Tensor) ([]byte, error) {
	var out []byte
	if t.Size() == 0 {
		return nil, nil
	}
	err := t.ConstBytes(func(data []byte) { out = append([]byte(nil), data...) })
	return out, errors.Wrap(err, "probe: reading a tensor")
}

// fromBytes builds a tensor of shape s from raw row-major data of the right length.
func fromBytes(s shapes.Shape, data []byte) (*tensors.Tensor, error) {
	t := tensors.FromShape(s)
	if s.Size() == 0 {
		return t, nil
	}
	var n int
	err := t.MutableBytes(func(dst []byte) { n = copy(dst, data) })
	if err == nil && n != len(data) {
		err = errors.Errorf("probe: %d bytes for shape %s", len(data), s)
	}
	return t, err
}

// concatAxis concatenates tensors of one dtype whose dimensions agree except on axis.
func concatAxis(ts []*tensors.Tensor, axis int) (*tensors.Tensor, error) {
	first := ts[0].Shape()
	if axis >= first.Rank() {
		return nil, errors.Errorf("probe: axis %d of shape %s", axis, first)
	}
	dims := append([]int(nil), first.Dimensions...)
	dims[axis] = 0
	chunks := make([][]byte, len(ts))
	for i, t := range ts {
		s := t.Shape()
		ok := s.DType == first.DType && s.Rank() == first.Rank()
		for a := 0; ok && a < s.Rank(); a++ {
			ok = a == axis || s.Dim(a) == first.Dim(a)
		}
		if !ok {
			return nil, errors.Errorf("probe: cannot concatenate shapes %s and %s along axis %d", first, s, axis)
		}
		dims[axis] += s.Dim(axis)
		b, err := bytesOf(t)
		if err != nil {
			return nil, err
		}
		chunks[i] = b
	}
	outer := 1
	for _, d := range first.Dimensions[:axis] {
		outer *= d
	}
	out := make([]byte, 0, first.DType.Size()*shapes.Make(first.DType, dims...).Size())
	for o := 0; o < outer; o++ {
		for _, c := range chunks {
			n := len(c) / outer
			out = append(out, c[o*n:(o+1)*n]...)
		}
	}
	return fromBytes(shapes.Make(first.DType, dims...), out)
}

// sliceAxis returns t[…, i:i+1, …] along axis (the axis is kept, with length 1).
func sliceAxis(t *tensors.Tensor, axis, i int) (*tensors.Tensor, error) {
	s := t.Shape()
	if axis >= s.Rank() || i < 0 || i >= s.Dim(axis) {
		return nil, errors.Errorf("probe: index %d of axis %d of shape %s", i, axis, s)
	}
	data, err := bytesOf(t)
	if err != nil {
		return nil, err
	}
	outer := 1
	for _, d := range s.Dimensions[:axis] {
		outer *= d
	}
	row := len(data) / outer   // bytes per outer index
	piece := row / s.Dim(axis) // bytes per position
	out := make([]byte, 0, outer*piece)
	for o := 0; o < outer; o++ {
		out = append(out, data[o*row+i*piece:o*row+(i+1)*piece]...)
	}
	dims := append([]int(nil), s.Dimensions...)
	dims[axis] = 1
	return fromBytes(shapes.Make(s.DType, dims...), out)
}

// insertAxis1 returns t [B, …] reshaped to [B, 1, …].
func insertAxis1(t *tensors.Tensor) (*tensors.Tensor, error) {
	s := t.Shape()
	if s.Rank() < 1 {
		return nil, errors.Errorf("probe: output shape %s, want [B, …]", s)
	}
	data, err := bytesOf(t)
	if err != nil {
		return nil, err
	}
	dims := append([]int{s.Dim(0), 1}, s.Dimensions[1:]...)
	return fromBytes(shapes.Make(s.DType, dims...), data)
}
