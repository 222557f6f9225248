package meanfield

import (
	"math"
	"testing"

	"github.com/protolab/protolab/theory/prior"
)

// levelRows returns M rows of K weights, row j reading level j+1 alone.
func levelRows(m, k int) [][]float64 {
	w := make([][]float64, m)
	for j := range w {
		w[j] = make([]float64, k)
		w[j][j] = 1
	}
	return w
}

// Noise-free, a channel per level reads that level's bit whatever the path (eq. 4.12), so M level channels equal
// M layers of greedy binary search (eq. 4.5); one channel that weights two levels unequally reads both bits.
func TestLevelDesign_NoiselessEqualsAdaptive(t *testing.T) {
	tree := prior.Tree{Depth: 5, Alpha: 0.6}
	n := contexts(400, 4000)
	for m := 1; m <= 3; m++ {
		d := LevelDesign{Prior: tree, W: levelRows(m, tree.Depth), Tokens: 1e9, LabelNoise: 0.1}
		e, err := LevelDesignMC(d, n, 3)
		if err != nil {
			t.Fatal(err)
		}
		requireEstimate(t, "levels 1…M", e, AdaptiveNoiseless(tree, m), 1e-6)
	}
	packed := LevelDesign{Prior: tree, W: [][]float64{{1, 0.3, 0, 0, 0}}, Tokens: 1e9}
	e, err := LevelDesignMC(packed, n, 3)
	if err != nil {
		t.Fatal(err)
	}
	requireEstimate(t, "one channel, levels 1 and 2", e, AdaptiveNoiseless(tree, 2), 1e-6)
}

// A channel reading level 1 alone is the root's node key: the same τ² as NodeTau2 and the same Bayes-readout MSE
// as the BFS node design with M = 1 in the measurement model.
func TestLevelDesign_RootIsNodeKey(t *testing.T) {
	tree := prior.Tree{Depth: 4, Alpha: 0.6}
	d := LevelDesign{Prior: tree, W: levelRows(1, tree.Depth), Tokens: 8, LabelNoise: 0.1}
	requireClose(t, "τ² of the root", d.Tau2(0), NodeTau2(tree, 1, 0.1, 8), 1e-12)
	n := contexts(2000, 20000)
	got, err := LevelDesignMC(d, n, 5)
	if err != nil {
		t.Fatal(err)
	}
	want, err := NonAdaptiveMC(TreeMC{Prior: tree, Tau: math.Sqrt(d.Tau2(0)), Measurements: 1, Contexts: n, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	requireWithin(t, "root key, Bayes readout", got.Mean, want[0].Mean, 4*math.Hypot(got.StdErr, want[0].StdErr))
}

// The search packs several levels per channel and beats both its start (one level per channel) and the BFS node
// keys of §4.3 with the same number of channels.
func TestBestLevelDesign_BeatsNodeKeys(t *testing.T) {
	tree := prior.Tree{Depth: 4, Alpha: 0.6}
	const m, tokens, n = 2, 64, 600
	d, best, err := BestLevelDesign(tree, m, tokens, 0.1, n, 7)
	if err != nil {
		t.Fatal(err)
	}
	start, err := LevelDesignMC(LevelDesign{Prior: tree, W: levelRows(m, tree.Depth), Tokens: tokens,
		LabelNoise: 0.1}, n, 8) // the draws BestLevelDesign re-estimates on (seed + 1)
	if err != nil {
		t.Fatal(err)
	}
	tau := math.Sqrt(TokenTau2(tree, 0.1, tokens))
	bfs, err := NonAdaptiveMC(TreeMC{Prior: tree, Tau: tau, Measurements: m, Contexts: n, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if !(best.Mean < 0.8*start.Mean) || !(best.Mean < 0.8*bfs[m-1].Mean) {
		t.Errorf("best level design %.4f ± %.4f (W = %v), want < 0.8 × one level per channel (%.4f) and < 0.8 × BFS "+
			"node keys (%.4f)", best.Mean, best.StdErr, d.W, start.Mean, bfs[m-1].Mean)
	}
	if floor := AdaptiveNoiseless(tree, tree.Depth); !(best.Mean > floor) {
		t.Errorf("best level design %.4f, want above the noise-free floor %.4f", best.Mean, floor)
	}
}

func TestLevelDesign_Validate(t *testing.T) {
	tree := prior.Tree{Depth: 3, Alpha: 0.6}
	for name, d := range map[string]LevelDesign{
		"no channels": {Prior: tree, Tokens: 8},
		"zero row":    {Prior: tree, W: [][]float64{{0, 0, 0}}, Tokens: 8},
		"short row":   {Prior: tree, W: [][]float64{{1, 0}}, Tokens: 8},
		"no tokens":   {Prior: tree, W: levelRows(1, 3)},
		"bad prior":   {Prior: prior.Tree{Depth: 3, Alpha: 1.5}, W: levelRows(1, 3), Tokens: 8},
	} {
		if _, err := LevelDesignMC(d, 10, 1); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := LevelDesignMC(LevelDesign{Prior: tree, W: levelRows(1, 3), Tokens: 8}, 1, 1); err == nil {
		t.Error("one context: no error")
	}
}
