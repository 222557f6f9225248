package fit

import (
	"testing"

	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/wbtest"
)

func TestSliceBatches_CycleStateRestore(t *testing.T) {
	batches := make([][]*tensors.Tensor, 3)
	for i := range batches {
		batches[i] = []*tensors.Tensor{wbtest.Tensor64([]float64{float64(i)}, 1)}
	}
	s := mustSlice(t, batches)
	next := func() float64 {
		b, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		return wbtest.Flat64(b[0])[0]
	}
	var got []float64
	for i := 0; i < 4; i++ {
		got = append(got, next())
	}
	wbtest.RequireClose(t, "order", []float64{0, 1, 2, 0}, got, 0)
	if s.Epoch() != 1 {
		t.Errorf("epoch = %d, want 1", s.Epoch())
	}
	state, err := s.State()
	if err != nil {
		t.Fatal(err)
	}
	after := []float64{next(), next(), next()}
	if err := s.Restore(state); err != nil {
		t.Fatalf("%+v", err)
	}
	again := []float64{next(), next(), next()}
	wbtest.RequireClose(t, "after restore", after, again, 0)
	if s.Epoch() != 2 {
		t.Errorf("epoch after restore and 3 batches = %d, want 2", s.Epoch())
	}
	for _, bad := range []string{"", "{", `{"next":0,"epoch":0,"len":4}`, `{"next":3,"epoch":0,"len":3}`} {
		if err := s.Restore([]byte(bad)); err == nil {
			t.Errorf("Restore(%q) succeeded", bad)
		}
	}
	if _, err := NewSliceBatches(nil); err == nil {
		t.Errorf("NewSliceBatches(nil) succeeded")
	}
	if _, err := NewSliceBatches([][]*tensors.Tensor{{nil}}); err == nil {
		t.Errorf("NewSliceBatches with a nil tensor succeeded")
	}
}
