package fit

import (
	"encoding/json"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"
)

// Batches is a source of training or validation batches. Every batch has the same number of tensors with the same
// shapes (a new shape means a new graph compilation).
type Batches interface {
	// Next returns the next batch: the tensors passed as inputs to the LossFn.
	Next() ([]*tensors.Tensor, error)
	// State returns an opaque encoding of the position in the stream, so that Restore can continue exactly there.
	State() ([]byte, error)
	// Restore returns to a position returned by State.
	Restore(state []byte) error
}

// SliceBatches serves a fixed list of batches in order, cycling back to the first after the last. It is the
// in-memory Batches for tests and small experiments.
type SliceBatches struct {
	batches [][]*tensors.Tensor
	next    int // index of the batch Next returns
	epoch   int // completed passes over the list
}

// sliceState is SliceBatches' State, as JSON.
type sliceState struct {
	Next  int `json:"next"`
	Epoch int `json:"epoch"`
	Len   int `json:"len"`
}

// NewSliceBatches returns a SliceBatches over batches (not copied). It returns an error for an empty list, an empty
// batch or a nil tensor.
func NewSliceBatches(batches [][]*tensors.Tensor) (*SliceBatches, error) {
	if len(batches) == 0 {
		return nil, errors.New("fit.NewSliceBatches: no batches")
	}
	for i, b := range batches {
		if len(b) == 0 {
			return nil, errors.Errorf("fit.NewSliceBatches: batch %d is empty", i)
		}
		for j, t := range b {
			if t == nil {
				return nil, errors.Errorf("fit.NewSliceBatches: batch %d, tensor %d is nil", i, j)
			}
		}
	}
	return &SliceBatches{batches: batches}, nil
}

// Next implements Batches; it never fails.
func (s *SliceBatches) Next() ([]*tensors.Tensor, error) {
	b := s.batches[s.next]
	s.next++
	if s.next == len(s.batches) {
		s.next = 0
		s.epoch++
	}
	return b, nil
}

// Epoch returns the number of completed passes over the batches.
func (s *SliceBatches) Epoch() int { return s.epoch }

// State implements Batches.
func (s *SliceBatches) State() ([]byte, error) {
	return json.Marshal(sliceState{Next: s.next, Epoch: s.epoch, Len: len(s.batches)})
}

// Restore implements Batches. A state from a list of a different length is an error.
func (s *SliceBatches) Restore(state []byte) error {
	var st sliceState
	if err := json.Unmarshal(state, &st); err != nil {
		return errors.Wrapf(err, "fit.SliceBatches.Restore: state %q", state)
	}
	if st.Len != len(s.batches) || st.Next < 0 || st.Next >= len(s.batches) || st.Epoch < 0 {
		return errors.Errorf("fit.SliceBatches.Restore: state %q does not fit a list of %d batches", state,
			len(s.batches))
	}
	s.next, s.epoch = st.Next, st.Epoch
	return nil
}
