package meanfield_test

import (
	"fmt"

	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/theory/prior"
)

// Example prints the closed-form columns of the spec's §4.7 table (K = 8, α = 0.6, τ = 0.05) and one seeded Monte
// Carlo estimate of the adaptive strategy with noise.
func Example() {
	tree := prior.DefaultTree()
	fmt.Println("M  adaptive(τ→0)  non-adaptive(τ→0)  LMMSE_C")
	for m := 1; m <= 8; m++ {
		fmt.Printf("%d  %.4f         %.4f             %.4f\n", m, meanfield.AdaptiveNoiseless(tree, m),
			meanfield.NonAdaptiveNoiseless(tree, m), meanfield.LMMSE(tree, m, 0.05*0.05))
	}
	est, err := meanfield.AdaptiveMC(meanfield.TreeMC{Prior: tree, Tau: 0.05, Measurements: 8, Contexts: 4000, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("adaptive MC at L = 8: %.4f ± %.4f\n", est[7].Mean, est[7].StdErr)
	// Output:
	// M  adaptive(τ→0)  non-adaptive(τ→0)  LMMSE_C
	// 1  0.5621         0.5621             0.5646
	// 2  0.2021         0.3821             0.3870
	// 3  0.0725         0.2021             0.2095
	// 4  0.0258         0.1697             0.1794
	// 5  0.0090         0.1373             0.1493
	// 6  0.0030         0.1049             0.1192
	// 7  0.0008         0.0725             0.0892
	// 8  0.0000         0.0666             0.0851
	// adaptive MC at L = 8: 0.0032 ± 0.0001
}
