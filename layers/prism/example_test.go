package prism_test

import (
	"fmt"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	_ "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/prism"
)

// ExampleHead puts a PRISM head with K = 64 prototypes (k = 4) on random hidden states [B=2, T=3, D=16] and a random
// LM head [V=12, D], then checks that each gold token's logit splits into its prototype slices plus the residual
// slice.
func ExampleHead() {
	backend, err := compute.NewWithConfig("go:ops_sequential") // pure Go; prints nothing
	if err != nil {
		panic(err)
	}
	cfg := prism.DefaultConfig()
	cfg.NumPrototypes, cfg.TopK, cfg.InitStd = 64, 4, 1
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(7))
	targets := tensors.FromValue([][]int32{{3, 1, 4}, {1, 5, 9}}) // gold tokens [B, T]
	outs := model.MustExecOnceN(backend, vars, func(scope *model.Scope, targets *Node) []*Node {
		g := targets.Graph()
		h := scope.RandomNormal(g, shapes.Make(dtypes.Float32, 2, 3, 16))
		W := scope.RandomNormal(g, shapes.Make(dtypes.Float32, 12, 16))
		d := prism.Head(scope, cfg, h, W)
		protoSlices, residualSlice := d.TokenSlices(targets) // [B, T, k], [B, T]
		sum := Add(ReduceSum(protoSlices, -1), residualSlice)
		goldLogit := ReduceSum(Mul(d.Logits, OneHot(targets, 12, dtypes.Float32)), -1)
		perToken := ReduceSum(ConvertDType(d.Selected, dtypes.Int32), -1)
		return []*Node{d.Logits, perToken, ReduceAllMax(Abs(Sub(sum, goldLogit)))}
	}, targets)
	fmt.Println("logits:", outs[0].Shape())
	fmt.Println("selected per token:", outs[1].Value())
	fmt.Println("slices sum to the gold logit:", outs[2].Value().(float32) < 1e-5)
	bank := prism.BankVariable(vars.RootScope())
	fmt.Println("bank:", bank.Scope()+"/"+bank.Name(), bank.Shape())
	// Output:
	// logits: (Float32)[2, 3, 12]
	// selected per token: [[4 4 4] [4 4 4]]
	// slices sum to the gold logit: true
	// bank: /prism/prototypes (Float32)[64, 16]
}
