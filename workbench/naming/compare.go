package naming

import (
	"math"

	"github.com/protolab/protolab/workbench/stats"
)

// The next-token comparisons of spec §7.5, on workbench/stats: the Jensen–Shannon divergence is
// stats.JensenShannon; the three below fix k, the argmax and the undefined case.

// TopKOverlap returns |topk(p) ∩ topk(q)| / k (stats.Overlap of the two stats.TopK lists; k ≤ len(p)).
func TopKOverlap(p, q []float64, k int) float64 {
	return stats.Overlap(stats.TopK(p, k), stats.TopK(q, k))
}

// Top1Agree reports whether argmax p = argmax q (ties: the lower index).
func Top1Agree(p, q []float64) bool { return stats.TopK(p, 1)[0] == stats.TopK(q, 1)[0] }

// SpearmanTopK returns Spearman's rank correlation of p and q over the union of their top-k token sets (spec
// §7.5, stats.SpearmanTopK), or 0 where that is undefined (a union of one token, or all-equal probabilities), so
// that the mean over prompt pairs stays defined.
func SpearmanTopK(p, q []float64, k int) float64 {
	if rho := stats.SpearmanTopK(p, q, k); !math.IsNaN(rho) {
		return rho
	}
	return 0
}
