package prior_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/protolab/protolab/theory/prior"
)

// ExampleTree builds θ_σ for the leaf σ = (b_1, b_2, b_3) = (1, 0, 1) of a depth-3 tree prior and prints its path,
// non-zero coordinates and the prior moments; Sample draws the leaf uniformly instead.
func ExampleTree() {
	tree := prior.Tree{Depth: 3, Alpha: 0.6}
	leaf := 0b101
	theta := tree.Theta(leaf, nil)
	fmt.Printf("D = %d, leaves = %d, E‖θ‖² = %.4f\n", tree.Dim(), tree.NumLeaves(), tree.MeanSquaredNorm())
	for k := 1; k <= tree.Depth; k++ {
		n := tree.PathNode(leaf, k)
		fmt.Printf("level %d: node %d, b = %d, θ_n = %+.2f, λ_n = %.4f\n", k, n, tree.Bit(leaf, k), theta[n-1], tree.NodeVariance(n))
	}
	theta = tree.Sample(rand.New(rand.NewPCG(1, 2)), theta)
	fmt.Printf("a sample has ‖θ‖² = %.4f\n", dot(theta))
	// Output:
	// D = 7, leaves = 8, E‖θ‖² = 1.4896
	// level 1: node 1, b = 1, θ_n = +1.00, λ_n = 1.0000
	// level 2: node 3, b = 0, θ_n = -0.60, λ_n = 0.1800
	// level 3: node 6, b = 1, θ_n = +0.36, λ_n = 0.0324
	// a sample has ‖θ‖² = 1.4896
}

// dot returns ‖v‖².
func dot(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return s
}
