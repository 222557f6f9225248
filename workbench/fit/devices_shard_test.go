package fit

import (
	"reflect"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/wbtest"
)

func TestDevices_BatchMustSplitEvenly(t *testing.T) {
	if _, err := newSharding(1); err == nil {
		t.Errorf("newSharding(1) accepted one device")
	}
	s, err := newSharding(3)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if got := s.mesh.NumDevices(); got != 3 {
		t.Errorf("mesh of %d devices, want 3", got)
	}
	good := []*tensors.Tensor{tensors.FromShape(shapes.Make(dtypes.Float64, 6, 4)),
		tensors.FromShape(shapes.Make(dtypes.Int32, 3))}
	if err := s.checkBatch(good, "training batch"); err != nil {
		t.Errorf("B=6 and B=3 over 3 devices: %v", err)
	}
	odd := []*tensors.Tensor{good[0], tensors.FromShape(shapes.Make(dtypes.Int32, 5, 2))}
	requireErrorHas(t, "B=5", s.checkBatch(odd, "training batch"), "training batch tensor 1", "[5, 2]", "B=5",
		"not divisible by train.devices=3", "multiple of 3", "train.devices=1")
	if _, err := s.split(odd, "training batch"); err == nil {
		t.Errorf("split accepted B=5 over 3 devices")
	}
	scalar := []*tensors.Tensor{tensors.FromScalar(1.0)}
	requireErrorHas(t, "scalar", s.checkBatch(scalar, "validation batch"), "validation batch tensor 0 is a scalar",
		"train.devices=1")
}

// TestDevices_PeekChecksBothStreamsAndRewinds: a batch size that does not split is reported before the first step,
// for the training and for the validation data, and the data positions are left where they were.
func TestDevices_PeekChecksBothStreamsAndRewinds(t *testing.T) {
	s, err := newSharding(2)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	rows := func(b int) [][]*tensors.Tensor {
		return [][]*tensors.Tensor{{tensors.FromShape(shapes.Make(dtypes.Float64, b, 3))},
			{tensors.FromShape(shapes.Make(dtypes.Float64, b, 3))}}
	}
	train, val := mustSlice(t, rows(4)), mustSlice(t, rows(3))
	if _, err := train.Next(); err != nil { // not at the start: the peek must come back here
		t.Fatal(err)
	}
	before, _ := train.State()
	tr := &trainer{train: train, shard: s}
	if err := tr.peekBatches(); err != nil {
		t.Fatalf("no validation data, B=4 on 2 devices: %+v", err)
	}
	if after, _ := train.State(); string(after) != string(before) {
		t.Errorf("training data moved from %s to %s", before, after)
	}
	tr.val = val
	requireErrorHas(t, "val B=3", tr.peekBatches(), "validation batch tensor 0", "B=3")
	tr.train = mustSlice(t, rows(5))
	requireErrorHas(t, "train B=5", tr.peekBatches(), "training batch tensor 0", "B=5")
	tr.shard = nil
	if err := tr.peekBatches(); err != nil {
		t.Errorf("one device checks nothing: %v", err)
	}
}

// TestDevices_ShardAndMergeRoundTrip: shard i of every batch tensor holds rows [i·B/N, (i+1)·B/N) of axis 0, the
// other axes whole, and merging the shards gives the tensor back, for several shapes, dtypes and N.
func TestDevices_ShardAndMergeRoundTrip(t *testing.T) {
	cases := []struct {
		n    int
		dims []int
		dt   dtypes.DType
	}{
		{2, []int{6}, dtypes.Float64},
		{3, []int{6, 5}, dtypes.Int32},
		{2, []int{4, 3, 2}, dtypes.Float32},
		{4, []int{4, 1}, dtypes.Float64},
		{3, []int{9, 2, 1, 3}, dtypes.Int64},
	}
	for _, c := range cases {
		s, err := newSharding(c.n)
		if err != nil {
			t.Fatalf("%+v", err)
		}
		size := 1
		for _, d := range c.dims {
			size *= d
		}
		flat := make([]float64, size)
		for i := range flat {
			flat[i] = float64(2*i + i%3) // integers, exact in every dtype
		}
		orig := tensors.FromShape(shapes.Make(c.dt, c.dims...))
		orig.MustMutableFlatData(func(data any) { fillFrom(data, flat) })
		parts, err := s.split([]*tensors.Tensor{orig}, "training batch")
		if err != nil {
			t.Fatalf("%v over %d: %+v", c.dims, c.n, err)
		}
		d := parts[0]
		rowSize, rows := size/c.dims[0], c.dims[0]/c.n
		wantShard := append([]int{rows}, c.dims[1:]...)
		for i, sh := range d.Shards() {
			if !reflect.DeepEqual(sh.Shape().Dimensions, wantShard) || sh.DType() != c.dt {
				t.Fatalf("%v over %d: shard %d has shape %s, want %v %s", c.dims, c.n, i, sh.Shape(), wantShard, c.dt)
			}
			want := flat[i*rows*rowSize : (i+1)*rows*rowSize]
			if got := wbtest.Flat64(sh); !reflect.DeepEqual(got, want) {
				t.Errorf("%v over %d: shard %d = %v, want rows %d..%d = %v", c.dims, c.n, i, got, i*rows,
					(i+1)*rows-1, want)
			}
		}
		merged, err := d.Merge()
		if err != nil {
			t.Fatalf("%+v", err)
		}
		if !merged.Shape().Equal(orig.Shape()) || !reflect.DeepEqual(wbtest.Flat64(merged), flat) {
			t.Errorf("%v over %d: merge gave %s %v, want %s %v", c.dims, c.n, merged.Shape(), wbtest.Flat64(merged),
				orig.Shape(), flat)
		}
		finalizeAll(parts)
	}
}

func fillFrom(data any, flat []float64) {
	switch d := data.(type) {
	case []float64:
		copy(d, flat)
	case []float32:
		for i, v := range flat {
			d[i] = float32(v)
		}
	case []int32:
		for i, v := range flat {
			d[i] = int32(v)
		}
	case []int64:
		for i, v := range flat {
			d[i] = int64(v)
		}
	}
}

func TestDevices_FirstDeviceOutputs(t *testing.T) {
	s, err := newSharding(3)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	outs := make([]*tensors.Tensor, 6) // 3 devices × (loss, gradient norm)
	for i := range outs {
		outs[i] = tensors.FromScalar(float64(i))
	}
	got, err := s.firstDevice(outs)
	if err != nil || len(got) != 2 || tensors.ToScalar[float64](got[0]) != 0 || tensors.ToScalar[float64](got[1]) != 1 {
		t.Fatalf("firstDevice = %v, %v; want device 0's two outputs", got, err)
	}
	for i, o := range outs[2:] {
		if o.Ok() {
			t.Errorf("output %d of another device was not freed", i+2)
		}
	}
	if _, err := s.firstDevice(outs[:5]); err == nil {
		t.Errorf("5 outputs over 3 devices accepted")
	}
}
