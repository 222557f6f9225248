package sae_test

import (
	"fmt"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/sae"
)

// ExampleLoss builds a TopK SAE on a batch of residual-stream vectors [B, T, D] (flattened to N = B·T inputs) and
// reads its feature activations and loss terms. Training goes through workbench/fit with sae.LossFn (doc.go).
func ExampleLoss() {
	backend, err := compute.NewWithConfig("go:ops_sequential") // pure Go
	if err != nil {
		panic(err)
	}
	cfg := sae.DefaultConfig()
	cfg.Width, cfg.Kind, cfg.K = 8, sae.KindTopK, 4 // F = 8·D = 64
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	resid := make([][][]float32, 2) // [B=2, T=3, D=8]
	for b := range resid {
		resid[b] = make([][]float32, 3)
		for t := range resid[b] {
			resid[b][t] = make([]float32, cfg.Width)
			for d := range resid[b][t] {
				resid[b][t][d] = float32((b+1)*(t+2)*(d+3)%7) - 3
			}
		}
	}
	vars := model.NewStore()
	outs := model.MustExecOnceN(backend, vars, func(scope *model.Scope, x *Node) []*Node {
		t := sae.Loss(scope, cfg, x)
		return []*Node{t.Features, t.Reconstruction, t.L0}
	}, tensors.FromValue(resid))
	fmt.Println("features:", outs[0].Shape(), "reconstruction:", outs[1].Shape())
	fmt.Println("active features per input:", outs[2].Value())
	fmt.Println("trainable parameters:", cfg.NumParams())
	// Output:
	// features: (Float32)[6, 64] reconstruction: (Float32)[6, 8]
	// active features per input: 4
	// trainable parameters: 1096
}
