package meanfield

import (
	"fmt"
	"math/rand/v2"

	"github.com/protolab/protolab/theory/prior"
)

// PatchMC configures the key-patching experiment of spec §7 for the ideal Model A in the measurement model (§8
// item 8). A target leaf σ and a donor leaf σ′ share bits 1…j−1, differ at bit j, and draw their later bits
// independently. The target runs greedy binary search (AdaptiveMC), except that at layer ℓ it reads the donor's key
// (the node the donor's own run reached at layer ℓ); later layers decode from the corrupted workspace as usual, and
// the Bayes readout (eq. 4.9) believes every layer read the node decoded from the workspace.
type PatchMC struct {
	// Prior is the tree; the spec's table uses K = 8, α = 0.6.
	Prior prior.Tree `json:"prior"`
	// Tau is τ > 0, the noise std of the measurement model and of the Bayes readout. Spec: 0.05.
	Tau float64 `json:"tau"`
	// Layers is L ≤ K. Spec: 6 with K = 8.
	Layers int `json:"layers"`
	// IndependentNoise gives the donor its own noise; by default donor and target share η (the analogue of the same
	// x and ξ on real tokens), and then ΔMSE = 0 exactly for j ≥ ℓ.
	IndependentNoise bool `json:"independent_noise"`
	// Pairs is the number of target–donor pairs per divergence level j (≥ 2); the spec asks ≥ 1000.
	Pairs int `json:"pairs"`
	// Seed fixes every random draw; row j uses its own stream.
	Seed uint64 `json:"seed"`
}

// PatchDelta returns ΔMSE(j, ℓ) = E[‖θ − θ̂_patched‖² − ‖θ − θ̂_clean‖²], eq. (7.1), as out[j−1][ℓ−1] for divergence
// levels j = 1…K and patched layers ℓ = 1…L. The cells of one row share their pairs.
func PatchDelta(c PatchMC) ([][]Estimate, error) {
	t := c.Prior
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("meanfield.PatchDelta: %w", err)
	}
	if !(c.Tau > 0) || c.Layers < 1 || c.Layers > t.Depth || c.Pairs < 2 {
		return nil, fmt.Errorf("meanfield.PatchDelta: tau=%g layers=%d pairs=%d, want τ > 0, 1 ≤ L ≤ %d, pairs ≥ 2",
			c.Tau, c.Layers, c.Pairs, t.Depth)
	}
	out := make([][]Estimate, t.Depth)
	for j := 1; j <= t.Depth; j++ {
		out[j-1] = monteCarlo(c.Pairs, c.Seed+uint64(j)<<32, c.Layers, func() sampler {
			post := NewPosterior(t, c.Tau)
			eta, etaDonor := make([]float64, c.Layers), make([]float64, c.Layers)
			donorNodes := make([]int, c.Layers)
			return func(rng *rand.Rand, row []float64) {
				target := t.SampleLeaf(rng)
				// Keep bits 1…j−1, flip bit j, redraw bits j+1…K.
				low := t.NumLeaves() >> j // 2^{K−j}
				donor := (target/(2*low))*(2*low) + (low ^ (target & low)) + rng.IntN(low)
				for l := range eta {
					eta[l] = c.Tau * rng.NormFloat64()
					etaDonor[l] = eta[l]
					if c.IndependentNoise {
						etaDonor[l] = c.Tau * rng.NormFloat64()
					}
				}
				// The donor's run supplies its keys; the clean target run is the baseline of the difference.
				greedyRun(t, post, donor, etaDonor, 0, nil, donorNodes)
				clean := greedyRun(t, post, target, eta, 0, nil, nil)
				for l := range row {
					row[l] = greedyRun(t, post, target, eta, l+1, donorNodes, nil) - clean
				}
			}
		})
	}
	return out, nil
}

// greedyRun runs greedy binary search on leaf with noise eta and returns ‖θ − θ̂‖² of the Bayes readout. At layer
// patch (1-based; 0 for none) it reads donor[patch−1] instead of its own node. If nodes is non-nil it receives the
// node each layer actually read.
func greedyRun(t prior.Tree, post *Posterior, leaf int, eta []float64, patch int, donor, nodes []int) float64 {
	post.Reset()
	node := 1 // the node decoded from the workspace, which the readout believes was read.
	for l := range eta {
		read := node
		if l+1 == patch {
			read = donor[l]
		}
		if nodes != nil {
			nodes[l] = read
		}
		m := t.Coord(leaf, read) + eta[l]
		// The readout sees only the workspace, so it attributes m to the node it decoded, not to the one read.
		post.Observe(node, m)
		node = 2*node + b2i(m > 0)
	}
	return post.SquaredError(leaf)
}
