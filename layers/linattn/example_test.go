package linattn_test

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	_ "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/linattn"
)

// ExampleModel runs a two-layer model A on a batch of 3 contexts of N = 5 tokens in D = 4 dimensions and lists the
// variables it created.
func ExampleModel() {
	backend, err := compute.NewWithConfig("go:ops_sequential") // pure Go; prints nothing
	if err != nil {
		panic(err)
	}
	cfg := linattn.DefaultConfig()
	cfg.Measurements, cfg.Hidden, cfg.ReadoutHidden = 2, 8, 6
	vars := model.NewStore()
	x := tensors.FromShape(shapes.Make(dtypes.Float32, 3, 5, 4))
	y := tensors.FromShape(shapes.Make(dtypes.Float32, 3, 5))
	outs := model.MustExecOnceN(backend, vars, func(scope *model.Scope, x, y *Node) []*Node {
		o := linattn.Model(scope, cfg, x, y, nil)
		return []*Node{o.Theta, o.Workspace, o.Keys}
	}, x, y)
	fmt.Println("theta:", outs[0].Shape(), "workspace:", outs[1].Shape(), "keys:", outs[2].Shape())
	for v := range vars.IterVariables() {
		if v.Trainable {
			fmt.Println(v.Path(), v.Shape())
		}
	}
	fmt.Println("parameters:", cfg.NumParams(4))
	// Output:
	// theta: (Float32)[3, 4] workspace: (Float32)[3, 2] keys: (Float32)[3, 5, 2]
	// /linattn/layer_01/key/w_x (Float32)[4, 8]
	// /linattn/layer_01/key/b_1 (Float32)[8]
	// /linattn/layer_01/key/w_2 (Float32)[8]
	// /linattn/layer_01/key/b_2 (Float32)
	// /linattn/layer_02/key/w_x (Float32)[4, 8]
	// /linattn/layer_02/key/b_1 (Float32)[8]
	// /linattn/layer_02/key/w_2 (Float32)[8]
	// /linattn/layer_02/key/b_2 (Float32)
	// /linattn/layer_02/key/w_p (Float32)[1, 8]
	// /linattn/readout/w_1 (Float32)[2, 6]
	// /linattn/readout/b_1 (Float32)[6]
	// /linattn/readout/w_2 (Float32)[6, 4]
	// /linattn/readout/b_2 (Float32)[4]
	// parameters: 152
}
