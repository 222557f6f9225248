package fit

import (
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// TestTrain_BFloat16Weights: a linear model with bfloat16 weights trains, keeps float32 moments and reports float32
// loss, gradient norm and learning rate.
func TestTrain_BFloat16Weights(t *testing.T) {
	xs := []float32{-1, -0.5, 0, 0.5, 1}
	ys := []float32{-1, 0, 1, 2, 3} // y = 2x + 1
	batches := [][]*tensors.Tensor{{tensors.FromFlatDataAndDimensions(xs, 5, 1),
		tensors.FromFlatDataAndDimensions(ys, 5, 1)}}
	loss := func(scope *model.Scope, in []*Node) *Node {
		// A hand-built affine map: gomlx's layers.Dense lowers to FusedDense, which the pure-Go backend of
		// github.com/gomlx/compute v0.1.2 does not run in bfloat16 ("op not implemented").
		x := ConvertDType(in[0], dtypes.BFloat16)
		c := scope.At("line").At("dense")
		w := c.VariableWithShape("weights", shapes.Make(dtypes.BFloat16, 1, 1)).NodeValue(x.Graph())
		b := c.WithInitializer(initializer.Zero).VariableWithShape("biases", shapes.Make(dtypes.BFloat16, 1)).NodeValue(x.Graph())
		pred := ConvertDType(Add(MatMul(x, w), InsertAxes(b, 0)), dtypes.Float32) // [5, 1]
		return ReduceAllMean(Square(Sub(pred, in[1])))
	}
	cfg := DefaultConfig()
	cfg.Steps, cfg.WarmupSteps, cfg.LR, cfg.WeightDecay = 200, 10, 0.05, 0
	vars := run.NewStore(1)
	hist, err := Train(wbtest.Backend(t), vars, loss, mustSlice(t, batches), nil, cfg, Progress(nil))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	l := hist.Losses()
	if !(l[len(l)-1] < 0.01*l[0]) || math.IsNaN(l[len(l)-1]) {
		t.Errorf("loss went from %g to %g; want a 100-fold decrease", l[0], l[len(l)-1])
	}
	w := vars.GetVariable(model.JoinPath("/line/dense", "weights"))
	m := vars.GetVariable(model.JoinPath(OptimizerScope+"/m/line/dense", "weights"))
	if w.DType() != dtypes.BFloat16 || m == nil || m.DType() != dtypes.Float32 {
		t.Errorf("weights %s, first moment %v; want BFloat16 weights with Float32 moments", w.DType(), m)
	}
}
