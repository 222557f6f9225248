package meanfield

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/protolab/protolab/theory/prior"
)

// TestComputeTreeCurves_AssemblesPrimitives checks that the curve set is the primitives evaluated on its grid, with
// τ derived from the tokens when Tau is 0, and that the config round-trips through JSON with snake_case keys.
func TestComputeTreeCurves_AssemblesPrimitives(t *testing.T) {
	c := DefaultTreeCurveConfig()
	c.Prior = prior.Tree{Depth: 5, Alpha: 0.6}
	c.MaxMeasurements, c.Contexts, c.BoundContexts = 7, 500, 50
	r, err := ComputeTreeCurves(c)
	if err != nil {
		t.Fatal(err)
	}
	tau := math.Sqrt(TokenTau2(c.Prior, 0.1, 128))
	requireClose(t, "derived τ", r.Config.Tau, tau, 1e-15)
	if len(r.M) != 7 || len(r.Adaptive) != 5 || len(r.NonAdaptive) != 7 || r.Bound == nil {
		t.Fatalf("lengths: M %d, adaptive %d, non-adaptive %d, bound %v", len(r.M), len(r.Adaptive), len(r.NonAdaptive), r.Bound)
	}
	for i, m := range r.M {
		requireClose(t, "adaptive τ→0", r.AdaptiveNoiseless[i], AdaptiveNoiseless(c.Prior, m), 0)
		requireClose(t, "non-adaptive τ→0", r.NonAdaptiveNoiseless[i], NonAdaptiveNoiseless(c.Prior, m), 0)
		requireClose(t, "power law", r.PowerLaw[i], PowerLaw(c.Prior, m), 0)
		requireClose(t, "LMMSE", r.LMMSE[i], LMMSE(c.Prior, m, tau*tau), 0)
		requireClose(t, "LMMSE tokens", r.LMMSETokens[i], LMMSETokens(c.Prior, m, 0.1, 128), 0)
	}
	mc, _ := AdaptiveMC(TreeMC{Prior: c.Prior, Tau: tau, Measurements: 5, Contexts: 500, Seed: c.Seed})
	if mc[4] != r.Adaptive[4] {
		t.Errorf("adaptive curve %v, want AdaptiveMC's %v", r.Adaptive[4], mc[4])
	}
	blob, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(blob, &back); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"prior", "tau", "tokens", "label_noise", "max_measurements", "contexts", "bound_contexts", "seed"} {
		if _, ok := back[key]; !ok {
			t.Errorf("JSON key %q missing in %s", key, blob)
		}
	}
	c.Tokens = 0
	if _, err := ComputeTreeCurves(c); err == nil {
		t.Error("tokens = 0: want an error")
	}
}

// TestComputeGaussianCurves_AssemblesPrimitives checks the Gaussian curve set against the primitives.
func TestComputeGaussianCurves_AssemblesPrimitives(t *testing.T) {
	c := DefaultGaussianCurveConfig()
	c.BoundContexts = 200
	r, err := ComputeGaussianCurves(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.M) != 16 || r.Bound == nil {
		t.Fatalf("M has %d entries (want 16), bound %v", len(r.M), r.Bound)
	}
	for i, m := range r.M {
		requireClose(t, "optimal", r.Optimal[i], GaussianOptimalMSE(8, m, r.Tau2), 0)
		requireClose(t, "linear key", r.LinearKey[i], GaussianLinearKeyMSE(8, m, r.Tau2), 0)
		requireClose(t, "normalised key", r.NormalizedKey[i], GaussianOptimalMSE(8, m, NormalizedKeyTau2(8, 0.1, 128)), 0)
	}
	// The bound of §4.6 lies far below every constrained curve (channels bind, not data).
	if !(r.Bound.Mean < r.Optimal[15]/10) {
		t.Errorf("ridge bound %.4g should be far below %.4g", r.Bound.Mean, r.Optimal[15])
	}
}
