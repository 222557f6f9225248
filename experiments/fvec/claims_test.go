package fvec

import (
	"strings"
	"testing"

	"github.com/protolab/protolab/docs"
	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/models/icl"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/report"
)

// verdict judges a claim against its papers.md row, as the scorecard does.
func verdict(t *testing.T, c report.Claim) string {
	t.Helper()
	var p report.Paper
	if c.ID != "" {
		n, err := docs.Paper(c.ID)
		if err != nil {
			t.Fatalf("claim %q: %v", c.Claim, err)
		}
		p = report.Paper{Value: n.Value, HasValue: n.HasValue()}
	}
	v, _ := report.Verdict(c, p)
	return v
}

// TestClaims_NilListsEveryClaim: without a result every claim is still listed, valid, with a papers.md id.
func TestClaims_NilListsEveryClaim(t *testing.T) {
	claims := Claims(nil)
	if len(claims) != 12 {
		t.Errorf("%d claims, want 12", len(claims))
	}
	for _, c := range claims {
		if err := c.Validate(); err != nil {
			t.Error(err)
		}
		if _, err := docs.Paper(c.ID); err != nil {
			t.Errorf("claim %q: %v", c.Claim, err)
		}
		if c.Ours.Value != 0 || c.Ours.Seeds != 0 {
			t.Errorf("claim %q: ours %v without a result", c.Claim, c.Ours)
		}
	}
}

// handResult builds a result whose verdicts are known: depth helps on the tree prior (B/A = 2), C sits on its
// theory curves, A = B on the Gaussian prior, and model A patches like the ideal model while the ablation row shows
// the same small effect everywhere.
func handResult(t *testing.T) *Result {
	t.Helper()
	tree := prior.Tree{Depth: 4, Alpha: 0.6}
	tc, err := meanfield.ComputeTreeCurves(meanfield.TreeCurveConfig{Prior: tree, Tokens: 32, LabelNoise: 0.1,
		MaxMeasurements: 3})
	if err != nil {
		t.Fatal(err)
	}
	gc, err := meanfield.ComputeGaussianCurves(meanfield.GaussianCurveConfig{Dim: 8, Tokens: 128, LabelNoise: 0.1,
		MaxMeasurements: 12})
	if err != nil {
		t.Fatal(err)
	}
	row := func(name, kind string, m []int, mse []float64) icl.Curve {
		c := icl.Curve{Name: name, Kind: kind, M: m}
		for _, v := range mse {
			for _, sc := range []*icl.Scores{&c.Scores, &c.HeldOut} {
				sc.MSE, sc.StdErr = append(sc.MSE, v), append(sc.StdErr, 1e-3)
				sc.Best, sc.Median = append(sc.Best, v), append(sc.Median, v)
			}
		}
		return c
	}
	tm, gm := []int{1, 2, 3}, []int{2, 4, 8, 12}
	gauss := []float64{gc.LinearKey[1], gc.LinearKey[3], gc.LinearKey[7], gc.LinearKey[11]}
	ideal := [][]float64{{0, 0.3, 0.15}, {0, 0, 0.12}, {0, 0, 0}, {0, 0, 0}} // [j−1][ℓ−1], K = 4, L = 3
	flat := [][]float64{{0, 0.01, 0.01}, {0, 0.01, 0.01}, {0, 0.01, 0.01}, {0, 0.01, 0.01}}
	r := &Result{
		Protocol: Protocol{Seeds: 3, TestSeed: 11, HeldOutSeed: 12, Batch: 32, TreeSteps: []int{10, 10, 10},
			GaussianSteps: []int{10, 10, 10, 10}, TestContexts: 100, PlateauTail: 0.2, PlateauTol: 0.01},
		Tree: &TreeResult{Theory: tc, Models: []icl.Curve{
			row("a", "a", tm, []float64{0.5, 0.2, 0.05}),
			row("a_prime", "a_prime", tm, []float64{0.5, 0.2, 0.05}),
			row("b", "b", tm, []float64{0.5, 0.3, 0.1}),
			row("c", "c", tm, tc.LMMSETokens[:3]),
			row(AblationKeyGain, "a", tm, []float64{0.5, 0.2, 0.05}),
		}},
		Gaussian: &GaussianResult{Theory: gc, Models: []icl.Curve{row("a", "a", gm, gauss), row("b", "b", gm, gauss),
			row("c", "c", gm, gauss)}},
	}
	for s := range 3 {
		r.Patches = append(r.Patches,
			PatchResult{Name: "a", Kind: "a", Layers: 3, Seed: s, Levels: []int{1, 2, 3, 4},
				Patching: icl.Patching{Delta: ideal}, Theory: ideal},
			PatchResult{Name: AblationKeyGain, Kind: "a", Layers: 3, Seed: s, Levels: []int{1, 2, 3, 4},
				Patching: icl.Patching{Delta: flat}, Theory: ideal})
	}
	return r
}

// TestClaims_VerdictsOnHandBuiltResults checks every claim's verdict on results whose verdicts are known: a healthy
// one, one where every claim breaks, and one with too few seeds.
func TestClaims_VerdictsOnHandBuiltResults(t *testing.T) {
	r := handResult(t)
	want := map[string]string{ // by claim id; the ablation's patching rows break
		"fvec_depth_advantage": report.Reproduced, "fvec_tree_lmmse_c_tokens": report.Reproduced,
		"fvec_gauss_c_l8": report.Reproduced, "fvec_gauss_c_saturation_l16": report.Reproduced,
		"fvec_gauss_no_depth_advantage": report.Reproduced, "fvec_patch_shared_prefix": report.Reproduced,
		"fvec_patch_decay": report.Reproduced,
	}
	for _, c := range Claims(r) {
		w := want[c.ID]
		if c.ID == "fvec_patch_shared_prefix" || c.ID == "fvec_patch_decay" {
			if c.Ours.Seeds != 3 {
				t.Errorf("claim %q: %d seeds, want 3", c.Claim, c.Ours.Seeds)
			}
			if strings.Contains(c.Claim, "ablation") {
				w = report.NotReproduced
			}
		}
		if got := verdict(t, c); got != w {
			t.Errorf("healthy result, claim %q: %s (ours %v, %s), want %s", c.Claim, got, c.Ours, c.Untestable, w)
		}
	}

	// Break every claim: B no worse than A on the tree prior, C 20% off its curves, A twice better than B on the
	// Gaussian prior, A's patching flat.
	bad := handResult(t)
	b := curve(bad.Tree.Models, linattn.KindB)
	for _, a := range bad.Tree.Models {
		if a.Kind == linattn.KindA || a.Kind == linattn.KindAPrime {
			copy(b.MSE, a.MSE)
			copy(b.HeldOut.MSE, a.HeldOut.MSE)
		}
	}
	for _, m := range []*icl.Curve{curve(bad.Tree.Models, linattn.KindC), curve(bad.Gaussian.Models, linattn.KindC)} {
		for i := range m.MSE {
			m.MSE[i] *= 1.2
		}
	}
	ga := curve(bad.Gaussian.Models, linattn.KindA)
	for i := range ga.MSE {
		ga.MSE[i] /= 2
	}
	for i := range bad.Patches {
		bad.Patches[i].Delta = bad.Patches[1].Delta // the flat matrix
	}
	for _, c := range Claims(bad) {
		if got := verdict(t, c); got != report.NotReproduced {
			t.Errorf("broken result, claim %q: %s (ours %v), want %s", c.Claim, got, c.Ours, report.NotReproduced)
		}
	}

	few := handResult(t)
	few.Protocol.Seeds = 2
	for _, c := range Claims(few) {
		if got := verdict(t, c); got != report.NotTestable || c.Untestable == "" {
			t.Errorf("two seeds, claim %q: %s (%q), want %s", c.Claim, got, c.Untestable, report.NotTestable)
		}
	}
}

// A failed protocol check of the tree prior (a model short of its plateau) puts a caveat naming it on the tree and
// patching rows, one of the Gaussian prior on the Gaussian rows, and never changes a verdict.
func TestClaims_CaveatNamesFailedChecks(t *testing.T) {
	r := handResult(t)
	for _, c := range Claims(r) {
		if c.Caveat != "" {
			t.Errorf("all checks pass, claim %q has caveat %q", c.Claim, c.Caveat)
		}
	}
	before := map[string]string{}
	for _, c := range Claims(r) {
		before[c.Claim] = verdict(t, c)
	}
	r.Checks = append(r.Checks,
		Check{Name: "tree: B's validation MSE improvement over the last 20% of training", Value: 0.05, Want: "< 0.01"},
		Check{Name: "gaussian: A's validation MSE improvement over the last 20% of training", Value: 0.06, Want: "< 0.01"},
		Check{Name: "tree: C on its curve", Value: 1, Want: "≈ 1", Pass: true})
	for _, c := range Claims(r) {
		gauss := strings.HasPrefix(c.Claim, "Gaussian prior")
		if !strings.Contains(c.Caveat, "improvement over the last 20%") {
			t.Errorf("claim %q: caveat %q does not name the failed check", c.Claim, c.Caveat)
		}
		if strings.Contains(c.Caveat, "tree:") == gauss || strings.Contains(c.Caveat, "gaussian:") != gauss {
			t.Errorf("claim %q: caveat %q names the other prior's check", c.Claim, c.Caveat)
		}
		if strings.Contains(c.Caveat, "on its curve") {
			t.Errorf("claim %q: caveat %q names a check that passed", c.Claim, c.Caveat)
		}
		if got := verdict(t, c); got != before[c.Claim] {
			t.Errorf("claim %q: verdict %s with the caveat, %s without", c.Claim, got, before[c.Claim])
		}
	}
}
