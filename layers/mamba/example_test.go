package mamba_test

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	_ "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/mamba"
)

// ExampleMixer runs Mamba over a [B=2, T=5, D=16] input (d_in = 32, N = 16, dt_rank 1) and lists the variables it
// created and the decoding state of one layer.
func ExampleMixer() {
	backend, err := compute.NewWithConfig("go:ops_sequential") // pure Go; prints nothing
	if err != nil {
		panic(err)
	}
	cfg := mamba.DefaultConfig()
	vars := model.NewStore()
	x := tensors.FromShape(shapes.Make(dtypes.Float32, 2, 5, 16))
	y := model.MustExecOnce(backend, vars, func(scope *model.Scope, x *Node) *Node {
		return mamba.Mixer(scope, cfg, x)
	}, x)
	fmt.Println("y:", y.Shape())
	for v := range vars.IterVariables() {
		if v.Trainable {
			fmt.Println(v.Path(), v.Shape())
		}
	}
	fmt.Println("state:", mamba.StateShapes(cfg, 16, 2, dtypes.Float32))
	// Output:
	// y: (Float32)[2, 5, 16]
	// /mamba/in_proj (Float32)[16, 64]
	// /mamba/conv_kernel (Float32)[32, 4]
	// /mamba/conv_bias (Float32)[32]
	// /mamba/x_proj (Float32)[32, 33]
	// /mamba/dt_proj (Float32)[1, 32]
	// /mamba/dt_bias (Float32)[32]
	// /mamba/a_log (Float32)[32, 16]
	// /mamba/d_skip (Float32)[32]
	// /mamba/out_proj (Float32)[32, 16]
	// state: [(Float32)[2, 4, 32] (Float32)[2, 32, 16]]
}
