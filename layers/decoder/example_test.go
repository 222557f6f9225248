package decoder_test

import (
	"fmt"
	"math"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/decoder"
)

// ExampleLogits builds a small LLaMA-style model, runs it on a batch of token ids and decodes one token with the
// KV cache.
func ExampleLogits() {
	backend, err := compute.NewWithConfig("go:ops_sequential") // pure Go; prints nothing
	if err != nil {
		panic(err)
	}
	cfg := decoder.DefaultConfig()
	cfg.VocabSize, cfg.Width, cfg.NumLayers, cfg.MaxLen = 100, 32, 2, 16
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(42))
	batch := [][]int32{{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}} // [B=2, T+1=6]
	outs := model.MustExecOnceN(backend, vars, func(scope *model.Scope, batch *Node) []*Node {
		inputs := Slice(batch, AxisRange(), AxisRange(0, 5))
		return []*Node{decoder.Logits(scope, cfg, inputs), decoder.NextTokenLoss(scope, cfg, batch)}
	}, tensors.FromValue(batch))
	fmt.Println("logits:", outs[0].Shape())
	loss := outs[1].Value().(float32)
	// Small initial weights give near-uniform predictions: the loss starts near ln V.
	fmt.Printf("loss at init within 0.5 of ln V: %v\n", math.Abs(float64(loss)-math.Log(100)) < 0.5)
	fmt.Println("parameters:", cfg.NumParams()) // 100·32 + 2·(4·32² + 3·32·96 + 2·32) + 32

	state := decoder.NewState(cfg, 2, 0)
	args := []any{tensors.FromValue([][]int32{{1}, {7}}), int32(0)}
	for _, s := range state {
		args = append(args, s)
	}
	step := model.MustExecOnceN(backend, vars, func(scope *model.Scope, in []*Node) []*Node {
		logits, newState := decoder.Step(scope, cfg, in[0], in[1], in[2:])
		return append([]*Node{logits}, newState...)
	}, args...)
	fmt.Println("step logits:", step[0].Shape(), "state:", len(step)-1, "caches of", step[1].Shape())
	// Output:
	// logits: (Float32)[2, 5, 100]
	// loss at init within 0.5 of ln V: true
	// parameters: 29984
	// step logits: (Float32)[2, 100] state: 4 caches of (Float32)[2, 4, 16, 8]
}
