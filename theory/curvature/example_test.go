package curvature_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/protolab/protolab/theory/curvature"
)

// Two tokens share prototype 1; the structured Hessian couples prototypes 0 and 1 through their co-usage, and
// the clustering floor raises every diagonal block.
func ExampleStructured() {
	codes := []curvature.Code{{Idx: []int{0, 1}, Val: []float64{0.8, 0.5}}, {Idx: []int{1}, Val: []float64{1}}}
	C := curvature.CoUsage(2, codes, nil)
	S := mat.NewSymDense(2, []float64{1, 0, 0, 0.5}) // mean output Fisher, D = 2
	delta := curvature.ClusterDiag(2, 0.1, 0.1, []int{0, 1})
	H := curvature.Structured(C, S, C, 0.1, delta)
	eig, _ := curvature.Eigenvalues(H)
	fmt.Printf("off-diagonal mass of C: %.3f\n", curvature.OffDiagonalMass(C))
	fmt.Printf("block mass of H: %.3f\n", curvature.BlockMass(H, 2))
	fmt.Printf("κ(H) = %.2f\n", curvature.Condition(eig))
	// Output:
	// off-diagonal mass of C: 0.297
	// block mass of H: 0.922
	// κ(H) = 3.01
}
