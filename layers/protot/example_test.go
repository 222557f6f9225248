package protot_test

import (
	"fmt"
	"math"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/protot"
)

// ExampleMixer builds the ProtoT mixer of layer 1 of a model of width 8 with 4 prototypes, runs it on a sequence
// of 5 tokens, and reads the write routing π and the memory mass from the trace.
func ExampleMixer() {
	backend, err := compute.NewWithConfig("go:ops_sequential") // pure Go; prints nothing
	if err != nil {
		panic(err)
	}
	cfg := protot.DefaultConfig()
	cfg.NumPrototypes = 4
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(1))
	exec := model.MustNewExec(backend, vars, func(scope *model.Scope, x *Node) []*Node {
		y, tr := protot.Mixer(scope.At("block_01"), cfg, 1, x)
		return []*Node{y, tr.Pi, tr.Den}
	})
	x := make([]float32, 5*8)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	out := exec.MustExec(tensors.FromFlatDataAndDimensions(x, 1, 5, 8))
	fmt.Println("y:", out[0].Shape())
	pi := tensors.MustCopyFlatData[float32](out[1])
	den := tensors.MustCopyFlatData[float32](out[2])
	for t := 0; t < 5; t++ {
		sumPi, sumDen := float32(0), float32(0)
		for k := 0; k < 4; k++ {
			sumPi += pi[t*4+k]
			sumDen += den[t*4+k]
		}
		// All β start at 0.9, so the masses of the four channels add up to 1 − 0.9^t.
		fmt.Printf("t=%d Σπ=%.3f Σden=%.3f\n", t, sumPi, sumDen)
	}
	// Output:
	// y: (Float32)[1, 5, 8]
	// t=0 Σπ=1.000 Σden=0.000
	// t=1 Σπ=1.000 Σden=0.100
	// t=2 Σπ=1.000 Σden=0.190
	// t=3 Σπ=1.000 Σden=0.271
	// t=4 Σπ=1.000 Σden=0.344
}
