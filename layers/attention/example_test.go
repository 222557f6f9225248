package attention_test

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	_ "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/attention"
)

// ExampleMixer runs causal attention with grouped-query heads over a [B=2, T=5, D=16] input and lists the
// variables it created.
func ExampleMixer() {
	backend, err := compute.NewWithConfig("go:ops_sequential") // pure Go; prints nothing
	if err != nil {
		panic(err)
	}
	cfg := attention.DefaultConfig() // 4 heads of width 4
	cfg.NumKVHeads = 2
	vars := model.NewStore()
	x := tensors.FromShape(shapes.Make(dtypes.Float32, 2, 5, 16))
	y := model.MustExecOnce(backend, vars, func(scope *model.Scope, x *Node) *Node {
		return attention.Mixer(scope, cfg, x)
	}, x)
	fmt.Println("y:", y.Shape())
	for v := range vars.IterVariables() {
		if v.Trainable {
			fmt.Println(v.Path(), v.Shape())
		}
	}
	fmt.Println("cache:", attention.CacheShapes(cfg, 16, 2, 64, dtypes.Float32))
	// Output:
	// y: (Float32)[2, 5, 16]
	// /attention/q (Float32)[16, 16]
	// /attention/k (Float32)[16, 8]
	// /attention/v (Float32)[16, 8]
	// /attention/o (Float32)[16, 16]
	// cache: [(Float32)[2, 2, 64, 4] (Float32)[2, 2, 64, 4]]
}
