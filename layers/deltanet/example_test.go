package deltanet_test

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	_ "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/deltanet"
)

// ExampleMixer runs DeltaNet over a [B=2, T=5, D=16] input (4 heads of width 4, chunks of 4) and lists the
// variables it created and the decoding state of one layer.
func ExampleMixer() {
	backend, err := compute.NewWithConfig("go:ops_sequential") // pure Go; prints nothing
	if err != nil {
		panic(err)
	}
	cfg := deltanet.DefaultConfig()
	cfg.ChunkSize = 4
	vars := model.NewStore()
	x := tensors.FromShape(shapes.Make(dtypes.Float32, 2, 5, 16))
	y := model.MustExecOnce(backend, vars, func(scope *model.Scope, x *Node) *Node {
		return deltanet.Mixer(scope, cfg, x)
	}, x)
	fmt.Println("y:", y.Shape())
	for v := range vars.IterVariables() {
		if v.Trainable {
			fmt.Println(v.Path(), v.Shape())
		}
	}
	fmt.Println("state:", deltanet.StateShapes(cfg, 16, 2, dtypes.Float32))
	// Output:
	// y: (Float32)[2, 5, 16]
	// /deltanet/q_proj (Float32)[16, 16]
	// /deltanet/k_proj (Float32)[16, 16]
	// /deltanet/v_proj (Float32)[16, 16]
	// /deltanet/q_conv (Float32)[16, 4]
	// /deltanet/k_conv (Float32)[16, 4]
	// /deltanet/v_conv (Float32)[16, 4]
	// /deltanet/beta_proj (Float32)[16, 4]
	// /deltanet/out_norm (Float32)[4]
	// /deltanet/out_proj (Float32)[16, 16]
	// state: [(Float32)[2, 4, 48] (Float32)[2, 4, 4, 4]]
}
