package fit_test

import (
	"fmt"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// backend is created when the test binary starts: the pure-Go backend prints its settings to stdout on creation,
// which would otherwise end up in the example's output.
var backend = run.MustBackend()

// Fit y = 2x + 1 with one Dense unit.
func ExampleTrain() {
	x := tensors.FromFlatDataAndDimensions([]float64{-1, -0.5, 0, 0.5, 1}, 5, 1)
	y := tensors.FromFlatDataAndDimensions([]float64{-1, 0, 1, 2, 3}, 5, 1)
	batches, _ := fit.NewSliceBatches([][]*tensors.Tensor{{x, y}})
	mse := func(scope *model.Scope, in []*Node) *Node {
		pred := layers.Dense(scope.At("line"), in[0], true, 1) // [5, 1]
		return ReduceAllMean(Square(Sub(pred, in[1])))
	}
	cfg := fit.DefaultConfig()
	cfg.Steps, cfg.WarmupSteps, cfg.LR, cfg.WeightDecay = 300, 10, 0.05, 0

	hist, err := fit.Train(backend, run.NewStore(cfg.Seed), mse, batches, nil, cfg, fit.Progress(nil))
	if err != nil {
		fmt.Printf("%+v\n", err)
		return
	}
	losses := hist.Losses()
	fmt.Printf("steps recorded: %d\n", len(losses))
	fmt.Printf("final loss below 1e-3: %v\n", losses[len(losses)-1] < 1e-3)
	// Output:
	// steps recorded: 300
	// final loss below 1e-3: true
}
