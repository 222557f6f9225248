package meanfield

import (
	"fmt"
	"math"

	"github.com/protolab/protolab/theory/prior"
)

// AdaptiveNoiseless returns MSE_A(L), the noise-free MSE of greedy binary search after L adaptive measurements
// (ideal Model A), eq. (4.5): c²(α^{2L} − α^{2K})/(1 − α²) for 0 ≤ L ≤ K, and 0 for L ≥ K. Panics if L < 0.
func AdaptiveNoiseless(t prior.Tree, layers int) float64 {
	if layers < 0 {
		panic(fmt.Sprintf("meanfield.AdaptiveNoiseless: L=%d < 0", layers))
	}
	// Levels 1…L are resolved exactly; levels L+1…K keep their prior variance.
	return levelTail(t, layers+1)
}

// NonAdaptiveNoiseless returns MSE_NA(M), the noise-free MSE of the Bayes readout of the M top-variance nodes
// 1…M in BFS order (ideal Model B), eq. (4.6). With K_M = ⌊log₂(M+1)⌋ and f = (M − 2^{K_M} + 1)/2^{K_M} it is
// c²[(1 − f)α^{2K_M} + Σ_{k=K_M+2..K} α^{2(k−1)}], and 0 once every node is measured (M ≥ 2^K − 1). Panics if M < 0.
func NonAdaptiveNoiseless(t prior.Tree, m int) float64 {
	if m < 0 {
		panic(fmt.Sprintf("meanfield.NonAdaptiveNoiseless: M=%d < 0", m))
	}
	if m >= t.Dim() {
		return 0
	}
	// Noise-free, reading node n reveals the sign at n when the path passes there; the BFS nodes 1…M cover levels
	// 1…K_M entirely and a fraction f of level K_M + 1, and the readout learns nothing below.
	km := prior.Level(m+1) - 1 // ⌊log₂(M+1)⌋: levels 1…K_M are fully measured.
	f := float64(m-(1<<km)+1) / float64(int(1)<<km)
	// Level K_M+1 is measured on a fraction f of its nodes, i.e. resolved with probability f.
	return (1-f)*t.LevelVariance(km+1) + levelTail(t, km+2)
}

// PowerLaw returns the large-M approximation c²(M+1)^{−2 log₂(1/α)}/(1 − α²) of MSE_NA, eq. (4.7). It agrees with
// MSE_NA at M = 2^k − 1 up to the finite-depth term c²α^{2K}/(1 − α²).
func PowerLaw(t prior.Tree, m int) float64 {
	c := t.Scale()
	return c * c * math.Pow(float64(m+1), -2*math.Log2(1/t.Alpha)) / (1 - t.Alpha*t.Alpha)
}

// LMMSE returns MSE_C(M), the MSE of the best linear readout of the M top-variance nodes measured with
// independent noise of constant variance τ² (ideal Model C), eq. (4.8):
// Σ_{n ≤ M} λ_n τ²/(λ_n + τ²) + Σ_{n > M} λ_n. Panics if M < 0 or τ² < 0.
func LMMSE(t prior.Tree, m int, tau2 float64) float64 {
	if tau2 < 0 {
		panic(fmt.Sprintf("meanfield.LMMSE: τ²=%g < 0", tau2))
	}
	return lmmse(t, m, func(int) float64 { return tau2 })
}

// LMMSETokens returns MSE_C(M) of eq. (4.8) with the per-node noise τ_n² = (E‖θ‖² + s² + λ_n)/N of real tokens
// (NodeTau2). It is exact for keys e_n on N Gaussian tokens with label noise s and a linear readout. Panics if M < 0.
func LMMSETokens(t prior.Tree, m int, s float64, n int) float64 {
	return lmmse(t, m, func(node int) float64 { return NodeTau2(t, node, s, n) })
}

// lmmse evaluates eq. (4.8) for a per-node noise variance.
func lmmse(t prior.Tree, m int, tau2 func(node int) float64) float64 {
	if m < 0 {
		panic(fmt.Sprintf("meanfield.LMMSE: M=%d < 0", m))
	}
	sum := 0.0
	for node := 1; node <= t.Dim(); node++ {
		lam := t.NodeVariance(node)
		if node <= m {
			tn := tau2(node)
			// The per-coordinate LMMSE of a scalar with variance λ observed in noise of variance τ².
			sum += lam * tn / (lam + tn)
		} else {
			sum += lam
		}
	}
	return sum
}

// levelTail returns Σ_{k=from..K} c²α^{2(k−1)}, the prior variance of levels from…K (0 when from > K).
func levelTail(t prior.Tree, from int) float64 {
	sum := 0.0
	for k := max(from, 1); k <= t.Depth; k++ {
		sum += t.LevelVariance(k)
	}
	return sum
}
