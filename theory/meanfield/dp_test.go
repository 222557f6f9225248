package meanfield

import (
	"fmt"
	"math"
	"testing"

	"github.com/protolab/protolab/theory/prior"
)

// TestOptimalNoiseless_SpecialCases checks the noise-free programme of eq. (3.2): L = 0 is the prior, L = K resolves
// everything, L = 1 equals the best single node (adaptive = non-adaptive for one layer), the value falls with L and
// never exceeds greedy binary search (eq. 4.5) or the best fixed set, and K = 2, L = 1 has the hand value c²α²/2
// (reading node 2 resolves both levels when b_1 = 0, and level 1 otherwise).
func TestOptimalNoiseless_SpecialCases(t *testing.T) {
	for _, tr := range []prior.Tree{{Depth: 2, Alpha: 0.6}, {Depth: 3, Alpha: 0.5, Normalize: true}, {Depth: 4, Alpha: 0.7}, {Depth: 5, Alpha: 0.6}} {
		prev := math.Inf(1)
		for l := 0; l <= tr.Depth; l++ {
			v, err := OptimalNoiseless(tr, l)
			if err != nil {
				t.Fatal(err)
			}
			if v > prev+1e-15 || v > AdaptiveNoiseless(tr, l)+1e-12 {
				t.Errorf("%+v L=%d: optimum %.6g, want ≤ previous %.6g and ≤ MSE_A %.6g", tr, l, v, prev, AdaptiveNoiseless(tr, l))
			}
			prev = v
			if tr.Depth <= 4 {
				na, _, err := OptimalNonAdaptiveNoiseless(tr, l)
				if err != nil {
					t.Fatal(err)
				}
				if v > na+1e-12 {
					t.Errorf("%+v L=%d: adaptive optimum %.6g above the best fixed set %.6g", tr, l, v, na)
				}
				if l == 1 {
					requireClose(t, "L = 1: adaptive = non-adaptive", v, na, 1e-12)
				}
			}
		}
		v0, _ := OptimalNoiseless(tr, 0)
		requireClose(t, "L = 0", v0, tr.MeanSquaredNorm(), 1e-12)
		requireWithin(t, "L = K", prev, 0, 1e-12)
	}
	tr := prior.Tree{Depth: 2, Alpha: 0.6}
	v, _ := OptimalNoiseless(tr, 1)
	requireClose(t, "K = 2, L = 1", v, 0.36/2, 1e-12)
	// Greedy binary search is strictly worse than the optimum for 1 ≤ L < K.
	if a := AdaptiveNoiseless(tr, 1); !(v < a) {
		t.Errorf("K = 2, L = 1: optimum %.4g should beat greedy %.4g", v, a)
	}
}

// TestOptimalNoiseless_MatchesReference compares the memoised set programme with a plain recursion over leaf lists.
func TestOptimalNoiseless_MatchesReference(t *testing.T) {
	for _, tr := range []prior.Tree{{Depth: 2, Alpha: 0.6}, {Depth: 3, Alpha: 0.45, Normalize: true}, {Depth: 4, Alpha: 0.7}} {
		all := make([]int, tr.NumLeaves())
		for s := range all {
			all[s] = s
		}
		for l := 0; l <= min(tr.Depth, 3); l++ {
			got, err := OptimalNoiseless(tr, l)
			if err != nil {
				t.Fatal(err)
			}
			requireClose(t, fmt.Sprintf("%+v L=%d", tr, l), got, referenceOptimalNoiseless(tr, all, l), 1e-12)
		}
	}
}

// TestOptimalNonAdaptiveNoiseless_MatchesBruteForce checks the best fixed set against the leaf-enumeration oracle,
// and the level-k construction: the 2^{k−1} nodes of level k alone resolve levels 1…k, so M = 2^{k−1} reaches MSE_A(k).
func TestOptimalNonAdaptiveNoiseless_MatchesBruteForce(t *testing.T) {
	tr := prior.Tree{Depth: 4, Alpha: 0.65}
	for m := 0; m <= tr.Dim(); m++ {
		v, set, err := OptimalNonAdaptiveNoiseless(tr, m)
		if err != nil {
			t.Fatal(err)
		}
		if len(set) != m {
			t.Fatalf("M=%d: set %v", m, set)
		}
		want := referenceNoiselessMSE(tr, m, func(r []float64) int { return set[len(r)] })
		requireClose(t, fmt.Sprintf("M=%d set %v", m, set), v, want, 1e-12)
		if v > NonAdaptiveNoiseless(tr, m)+1e-12 {
			t.Errorf("M=%d: best set %.6g above BFS %.6g", m, v, NonAdaptiveNoiseless(tr, m))
		}
	}
	for k := 1; k <= tr.Depth; k++ {
		v, _, _ := OptimalNonAdaptiveNoiseless(tr, 1<<(k-1))
		if v > AdaptiveNoiseless(tr, k)+1e-12 {
			t.Errorf("M=2^(%d−1): %.6g, want ≤ MSE_A(%d) = %.6g", k, v, k, AdaptiveNoiseless(tr, k))
		}
	}
}

// TestDP_GreedyMatchesMonteCarloAndOptimalIsBelow evaluates the noisy programme on K = 3: greedy binary search under
// quadrature agrees with AdaptiveMC within 4 s.e. plus a quadrature allowance (twice the change from Q to 2Q nodes),
// the optimum is never above greedy, and at τ = 1e−3 the optimum tends to the noise-free one.
func TestDP_GreedyMatchesMonteCarloAndOptimalIsBelow(t *testing.T) {
	tr := prior.Tree{Depth: 3, Alpha: 0.6}
	for _, tau := range []float64{0.15, 0.3} {
		for l := 1; l <= 2; l++ {
			d := DP{Prior: tr, Tau: tau, Layers: l, Quadrature: 24}
			g, err := d.Greedy()
			if err != nil {
				t.Fatal(err)
			}
			o, err := d.Optimal()
			if err != nil {
				t.Fatal(err)
			}
			d.Quadrature *= 2
			g2, _ := d.Greedy()
			mc, err := AdaptiveMC(TreeMC{Prior: tr, Tau: tau, Measurements: l, Contexts: contexts(40000, 400000), Seed: 31})
			if err != nil {
				t.Fatal(err)
			}
			requireEstimate(t, fmt.Sprintf("τ=%g L=%d greedy DP vs MC", tau, l), mc[l-1], g2, 2*math.Abs(g2-g))
			if o > g+1e-12 {
				t.Errorf("τ=%g L=%d: optimum %.6g above greedy %.6g", tau, l, o, g)
			}
			t.Logf("τ=%g L=%d: optimal %.5f, greedy %.5f (Q=24), %.5f (Q=48), MC %.5f ± %.5f", tau, l, o, g, g2, mc[l-1].Mean, mc[l-1].StdErr)
		}
	}
	for l := 1; l <= 2; l++ {
		o, err := DP{Prior: tr, Tau: 1e-3, Layers: l}.Optimal()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := OptimalNoiseless(tr, l)
		// Allowance: residual noise of order τ²·L and quadrature error at this tiny τ, both ≪ 1e−4.
		requireWithin(t, fmt.Sprintf("τ=1e−3 L=%d", l), o, want, 1e-4)
	}
}
