package meanfield

import (
	"fmt"

	"github.com/protolab/protolab/theory/prior"
)

// maxOptimalLayers is the largest L of TreeTokenCurves.OptimalNoiseless: the memo of OptimalNoiseless grows quickly
// with L at K = 6 (its comment), so the curve stops where a study run stays short.
const maxOptimalLayers = 4

// TreeTokenCurves are the tree-prior references that a trained model A or B is set beside in spec §6 item 2 and
// that TreeCurves leaves out: the ideal models A (greedy binary search, §4.2) and B (BFS nodes with the Bayes
// readout, §4.3) run as real linear attention on N tokens (§5, §8 item 7), and the noise-free optimum of the
// dynamic programme (eq. 3.2) over node keys. Slices are indexed by M − 1.
type TreeTokenCurves struct {
	// Adaptive and NonAdaptive are AdaptiveMC and NonAdaptiveMC on Tokens tokens at τ, for M = 1…min(MaxMeasurements,
	// K); the two share their contexts.
	Adaptive    []Estimate `json:"adaptive"`
	NonAdaptive []Estimate `json:"non_adaptive"`
	// OptimalNoiseless is OptimalNoiseless for L = 1…min(MaxMeasurements, 4), nil when K > MaxNoiselessDepth.
	OptimalNoiseless []float64 `json:"optimal_noiseless,omitempty"`
}

// ComputeTreeTokenCurves evaluates the TreeTokenCurves of c with its derived fields resolved (TreeCurves.Config as
// ComputeTreeCurves returns it: τ and MaxMeasurements set), on c.Contexts contexts of c.Seed. Returns an error
// naming the bad field.
func ComputeTreeTokenCurves(c TreeCurveConfig) (*TreeTokenCurves, error) {
	if c.Tau <= 0 || c.MaxMeasurements < 1 {
		return nil, fmt.Errorf("meanfield.ComputeTreeTokenCurves: tau=%g, max_measurements=%d: want both > 0 "+
			"(pass TreeCurves.Config, which resolves them)", c.Tau, c.MaxMeasurements)
	}
	mc := TreeMC{Prior: c.Prior, Tau: c.Tau, Tokens: c.Tokens, LabelNoise: c.LabelNoise,
		Measurements: min(c.MaxMeasurements, c.Prior.Depth), Contexts: c.Contexts, Seed: c.Seed}
	r := &TreeTokenCurves{}
	var err error
	if r.Adaptive, err = AdaptiveMC(mc); err != nil {
		return nil, err
	}
	if r.NonAdaptive, err = NonAdaptiveMC(mc); err != nil {
		return nil, err
	}
	if c.Prior.Depth <= MaxNoiselessDepth {
		for l := 1; l <= min(c.MaxMeasurements, maxOptimalLayers); l++ {
			v, err := OptimalNoiseless(c.Prior, l)
			if err != nil {
				return nil, err
			}
			r.OptimalNoiseless = append(r.OptimalNoiseless, v)
		}
	}
	return r, nil
}

// ReestimatedLevelDesign is BestLevelDesign(t, m, tokens, labelNoise, searchContexts, seed) with the found design's
// MSE re-estimated by LevelDesignMC on contexts draws of seed + 2, which neither the search nor its own re-estimate
// used: the reference for a trained model B with M = m channels (spec §4.3, eq. 4.12).
func ReestimatedLevelDesign(t prior.Tree, m, tokens int, labelNoise float64, searchContexts, contexts int,
	seed uint64) (LevelDesign, Estimate, error) {
	design, _, err := BestLevelDesign(t, m, tokens, labelNoise, searchContexts, seed)
	if err != nil {
		return LevelDesign{}, Estimate{}, err
	}
	est, err := LevelDesignMC(design, contexts, seed+2)
	return design, est, err
}
