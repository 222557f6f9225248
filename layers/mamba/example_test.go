package mamba_test

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/protolab/protolab/layers/mamba"
)

// ExampleMixer runs Mamba over a [B=2, T=5, D=16] input (d_in = 32, N = 16, dt_rank 1) and lists the variables it
// created and the decoding state of one layer.
func ExampleMixer() {
	backend, err := backends.NewWithConfig("go:ops_sequential") // pure Go; prints nothing
	if err != nil {
		panic(err)
	}
	cfg := mamba.DefaultConfig()
	ctx := context.New()
	x := tensors.FromShape(shapes.Make(dtypes.Float32, 2, 5, 16))
	y := context.MustExecOnce(backend, ctx, func(ctx *context.Context, x *Node) *Node {
		return mamba.Mixer(ctx, cfg, x)
	}, x)
	fmt.Println("y:", y.Shape())
	for v := range ctx.IterVariables() {
		if v.Trainable {
			fmt.Println(v.ScopeAndName(), v.Shape())
		}
	}
	fmt.Println("state:", mamba.StateShapes(cfg, 16, 2, dtypes.Float32))
	// Output:
	// y: (Float32)[2 5 16]
	// /mamba/in_proj (Float32)[16 64]
	// /mamba/conv_kernel (Float32)[32 4]
	// /mamba/conv_bias (Float32)[32]
	// /mamba/x_proj (Float32)[32 33]
	// /mamba/dt_proj (Float32)[1 32]
	// /mamba/dt_bias (Float32)[32]
	// /mamba/a_log (Float32)[32 16]
	// /mamba/d_skip (Float32)[32]
	// /mamba/out_proj (Float32)[32 16]
	// state: [(Float32)[2 4 32] (Float32)[2 32 16]]
}
