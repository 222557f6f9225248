package icl

import (
	"math"
	"slices"
	"testing"
)

// TestNewCurve_ScoresCombineSeedsAndContexts checks the scores of a row against a hand computation: two seeds with
// per-context errors (1, 3) and (2, 4) have MSEs 2 and 3; the seed-averaged errors (1.5, 3.5) give
// se_eval = √(2/2) = 1, the seeds se_seed = √(0.5/2) = 0.5, so StdErr = √(0.5² + 1²); one seed has no seed spread.
func TestNewCurve_ScoresCombineSeedsAndContexts(t *testing.T) {
	score := func(e ...float64) Score { return Score{MSE: (e[0] + e[1]) / 2, PerContext: e} }
	chain := func(test, held Score, val float64) ChainResult {
		return ChainResult{Test: []Score{test}, HeldOut: []Score{held}, Val: []float64{val},
			Training: []Training{{Seconds: 1}}}
	}
	c := NewCurve("a_gain", "a", 4, []int{3}, []ChainResult{chain(score(1, 3), score(2, 2), 0.5),
		chain(score(2, 4), score(2, 2), 0.25)})
	if c.Name != "a_gain" || c.Kind != "a" || c.KeyGain != 4 || !slices.Equal(c.M, []int{3}) {
		t.Errorf("curve %+v, want the row's name, kind, gain and M", c)
	}
	if c.MSE[0] != 2.5 || math.Abs(c.StdErr[0]-math.Sqrt(1.25)) > 1e-15 || c.Best[0] != 2 || c.Median[0] != 2.5 ||
		!slices.Equal(c.PerSeed[0], []float64{2, 3}) {
		t.Errorf("test scores %+v, want MSE 2.5, s.e. √1.25, best 2, median 2.5", c.Scores)
	}
	if c.HeldOut.MSE[0] != 2 || c.HeldOut.StdErr[0] != 0 {
		t.Errorf("held-out scores %+v, want MSE 2 with s.e. 0", c.HeldOut)
	}
	if !slices.Equal(c.ValMSE[0], []float64{0.5, 0.25}) || len(c.Training[0]) != 2 || c.TrainSeconds[0] != 2 {
		t.Errorf("val %v, %d records, %g s; want both seeds' and 2 s", c.ValMSE[0], len(c.Training[0]),
			c.TrainSeconds[0])
	}
	var one Scores
	one.Add([]Score{score(1, 3)})
	if math.Abs(one.StdErr[0]-1) > 1e-15 {
		t.Errorf("one seed: s.e. %g, want the contexts' alone, 1", one.StdErr[0])
	}
}
