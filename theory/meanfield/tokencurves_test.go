package meanfield

import (
	"testing"

	"github.com/protolab/protolab/theory/prior"
)

// TestComputeTreeTokenCurves_AssemblesPrimitives checks that the token curves are AdaptiveMC and NonAdaptiveMC on
// real tokens at the resolved τ, stopped at K, and the noise-free DP up to L = 4 (none beyond MaxNoiselessDepth); and
// that ReestimatedLevelDesign is BestLevelDesign re-estimated on draws of seed + 2.
func TestComputeTreeTokenCurves_AssemblesPrimitives(t *testing.T) {
	c := DefaultTreeCurveConfig()
	c.Prior, c.Tokens, c.MaxMeasurements, c.Contexts = prior.Tree{Depth: 4, Alpha: 0.6}, 32, 5, 300
	curves, err := ComputeTreeCurves(c)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ComputeTreeTokenCurves(curves.Config)
	if err != nil {
		t.Fatal(err)
	}
	mc := TreeMC{Prior: c.Prior, Tau: curves.Config.Tau, Tokens: 32, LabelNoise: 0.1, Measurements: 4,
		Contexts: 300, Seed: c.Seed}
	a, _ := AdaptiveMC(mc)
	na, _ := NonAdaptiveMC(mc)
	if len(r.Adaptive) != 4 || len(r.NonAdaptive) != 4 || len(r.OptimalNoiseless) != 4 {
		t.Fatalf("lengths %d, %d, %d; want 4 each", len(r.Adaptive), len(r.NonAdaptive), len(r.OptimalNoiseless))
	}
	for i := range a {
		if r.Adaptive[i] != a[i] || r.NonAdaptive[i] != na[i] {
			t.Errorf("M=%d: %v, %v; want AdaptiveMC's %v and NonAdaptiveMC's %v", i+1, r.Adaptive[i], r.NonAdaptive[i],
				a[i], na[i])
		}
		want, _ := OptimalNoiseless(c.Prior, i+1)
		requireClose(t, "optimal noiseless", r.OptimalNoiseless[i], want, 0)
	}
	deep := curves.Config
	deep.Prior.Depth, deep.MaxMeasurements, deep.Contexts = MaxNoiselessDepth+1, 1, 20
	if r, err := ComputeTreeTokenCurves(deep); err != nil || r.OptimalNoiseless != nil {
		t.Errorf("K = %d: optimal noiseless %v (%v), want none", deep.Prior.Depth, r.OptimalNoiseless, err)
	}
	if _, err := ComputeTreeTokenCurves(c); err == nil {
		t.Error("an unresolved config (tau = 0): want an error")
	}

	design, est, err := ReestimatedLevelDesign(c.Prior, 2, 32, 0.1, 200, 300, 7)
	if err != nil {
		t.Fatal(err)
	}
	best, _, _ := BestLevelDesign(c.Prior, 2, 32, 0.1, 200, 7)
	again, _ := LevelDesignMC(best, 300, 9)
	if est != again || len(design.W) != 2 {
		t.Errorf("re-estimate %v with %d channels, want LevelDesignMC's %v on seed + 2 with 2", est, len(design.W),
			again)
	}
}
