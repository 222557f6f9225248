package fit

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"
)

// Running a compiled step: panics raised while building or running the graph become errors, and scalar outputs
// become float64.

// execute runs e on a batch, turning panics raised while building the graph into errors.
func execute(e *model.Exec, batch []*tensors.Tensor) ([]*tensors.Tensor, error) {
	args := make([]any, len(batch))
	for i, t := range batch {
		args[i] = t
	}
	return executeArgs(e, args)
}

// executeArgs is execute on Exec's arguments (tensors, or distributed tensors for several devices).
func executeArgs(e *model.Exec, args []any) (outs []*tensors.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			if rerr, ok := r.(error); ok {
				err = errors.WithMessage(rerr, "building or running the graph")
			} else {
				err = errors.Errorf("building or running the graph: %v", r)
			}
		}
	}()
	return e.Exec(args...)
}

// scalar reads a float scalar tensor as float64 and releases its storage.
func scalar(t *tensors.Tensor) float64 {
	defer t.FinalizeAll()
	switch t.DType() {
	case dtypes.Float64:
		return tensors.ToScalar[float64](t)
	case dtypes.Float32:
		return float64(tensors.ToScalar[float32](t))
	}
	if h, ok := t.Value().(interface{ Float32() float32 }); ok { // BFloat16, Float16
		return float64(h.Float32())
	}
	panic(fmt.Sprintf("fit: output of dtype %s, want a float", t.DType()))
}
