package parallel_test

import (
	"fmt"

	"github.com/protolab/protolab/workbench/parallel"
)

// Squares computed three at a time land in index order.
func ExampleDo() {
	out := make([]int, 6)
	err := parallel.Do(len(out), 3, func(i int) error {
		out[i] = i * i
		return nil
	})
	fmt.Println(out, err)
	// Output: [0 1 4 9 16 25] <nil>
}
