package probe

import (
	"fmt"

	"github.com/gomlx/compute"

	"github.com/gomlx/gomlx/core/tensors"
)

// ExampleRunner caches the write routing of every block of a small test model, then zeroes block 0's output at
// position 2 and reads how block 1's input changed. With a layers/decoder model, Attach is hook.Attach and Forward
// wraps decoder.Logits (see the package documentation).
func ExampleRunner() {
	backend, err := compute.NewWithConfig("go:ops_sequential") // pure Go
	if err != nil {
		panic(err)
	}
	m := newModelOn(backend, testModel, 1)
	r, err := NewRunner(m, Match("block_*.protot.pi", "block_01.resid_pre"))
	if err != nil {
		panic(err)
	}
	tokens := tensors.FromValue([][]int32{{1, 2, 3, 4}})
	c, err := r.Run(tokens)
	if err != nil {
		panic(err)
	}
	for _, name := range c.Names {
		fmt.Println(name, c.Acts[name].Shape())
	}
	zero := tensors.FromShape(c.Acts["block_01.resid_pre"].Shape())
	c, err = r.Run(tokens, Patch{Name: "block_00.resid_post", Value: zero, Positions: []int{2}})
	if err != nil {
		panic(err)
	}
	x, _, _ := c.Float64("block_01.resid_pre")
	fmt.Println("block_01 input at position 2:", x[2*testModel.D:3*testModel.D])
	// Output:
	// block_00.protot.pi (Float64)[1, 4, 3]
	// block_01.resid_pre (Float64)[1, 4, 4]
	// block_01.protot.pi (Float64)[1, 4, 3]
	// block_01 input at position 2: [0 0 0 0]
}
