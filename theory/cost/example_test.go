package cost_test

import (
	"fmt"

	"github.com/protolab/protolab/theory/cost"
)

// Example compares the training work per token of attention and ProtoT (chunks of 16) in the benchmark decoder
// (D = 128, 4 layers, V = 2,048) as the context grows, and the decoding state of one sequence.
func Example() {
	const D, L, V = 128, 4, 2048
	att := cost.Model{Vocab: V, Width: D, Layers: L, Mixer: cost.Attention{Width: D, Heads: 4}}
	pt := cost.Model{Vocab: V, Width: D, Layers: L, Mixer: cost.ProtoT{Width: D, Prototypes: 32, Chunk: 16,
		DenseMaxLen: 64, SharedRoutingLayers: 1, ConvLayers: 2, ConvKernel: 5}}
	fmt.Println("T     attention MFLOP  ProtoT MFLOP  ratio  attention state KB  ProtoT state KB")
	for _, T := range []int{256, 1024, 4096, 8192} {
		a, p := att.Train(T).MatMul, pt.Train(T).MatMul
		fmt.Printf("%-5d %15.2f %13.2f %6.2f %19.0f %16.1f\n", T, a/1e6, p/1e6, a/p,
			float64(att.StateBytes(T, 1, 4))/1024, float64(pt.StateBytes(T, 1, 4))/1024)
	}
	// Output:
	// T     attention MFLOP  ProtoT MFLOP  ratio  attention state KB  ProtoT state KB
	// 256              7.96          5.58   1.43                1024             34.5
	// 1024            12.68          5.73   2.21                4096             34.5
	// 4096            31.56          6.33   4.99               16384             34.5
	// 8192            56.72          7.13   7.96               32768             34.5
}
