package fvec

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/workbench/plot"
)

// option decodes a chart's echarts option.
func option(t *testing.T, c plot.Chart) map[string]any {
	t.Helper()
	var o map[string]any
	if err := json.Unmarshal([]byte(c.RenderSnippet().Option), &o); err != nil {
		t.Fatalf("option is not JSON: %v", err)
	}
	return o
}

// seriesNames returns the distinct names of the option's series.
func seriesNames(o map[string]any) map[string]int {
	names := map[string]int{}
	for _, s := range o["series"].([]any) {
		m := s.(map[string]any)
		name, _ := m["name"].(string)
		data, _ := m["data"].([]any)
		names[name] = max(names[name], len(data))
	}
	return names
}

func TestFigures_SeriesAndData(t *testing.T) {
	res, _ := tinyResult(t)
	for _, c := range []struct {
		name  string
		chart plot.Chart
		want  []string // series names that must be present, with data
	}{
		{"TreeMSE", TreeMSE(res), []string{"simulation: A", "simulation: B", "simulation: C",
			"theory: adaptive, greedy (ideal A, N tokens)", "theory: LMMSE, per-node τₙ² (C's baseline)",
			"theory: optimal adaptive over node keys, τ→0 (DP)"}},
		{"GaussianMSE", GaussianMSE(res), []string{"simulation: A", "simulation: B", "simulation: C",
			"theory: linear keys (C), flat beyond M = D"}},
		{"PatchLines", PatchLines(res, "a"), []string{"simulation: j = 1", "theory: j = 1"}},
		{"WorkspaceScatter", WorkspaceScatter(res, "a"), []string{"simulation: (b_1, b_2) = (0, 0)"}},
	} {
		names := seriesNames(option(t, c.chart))
		for _, w := range c.want {
			if names[w] == 0 {
				t.Errorf("%s: no data in series %q (have %v)", c.name, w, names)
			}
		}
		for n := range names {
			if !strings.HasPrefix(n, theoryPrefix) && !strings.HasPrefix(n, simulationPrefix) {
				t.Errorf("%s: series %q is neither theory nor simulation", c.name, n)
			}
		}
	}
	p, v := res.Patch("a"), res.Vector("a_prime")
	for _, c := range []struct {
		name  string
		chart plot.Chart
		cells int
	}{
		{"PatchHeatmap", PatchHeatmap(res, "a", false), p.Layers * len(p.Levels)},
		{"PatchHeatmap A′", PatchHeatmap(res, "a_prime", false), p.Layers * len(p.Levels)},
		{"PatchHeatmap theory", PatchHeatmap(res, "a", true), p.Layers * len(p.Levels)},
		{"ProbeHeatmap", ProbeHeatmap(res, "a_prime"), v.Layers * len(v.ProbeAccuracy[0])},
	} {
		o := option(t, c.chart)
		data := o["series"].([]any)[0].(map[string]any)["data"].([]any)
		if len(data) != c.cells {
			t.Errorf("%s: %d cells, want %d", c.name, len(data), c.cells)
		}
	}
}

// Figures lists every figure the notebook shows under valid distinct names. The Tiny preset has both priors,
// patches A and A′ (PatchKinds) and has no key-gain ablation.
func TestFigures_NamesEveryFigure(t *testing.T) {
	res, _ := tinyResult(t)
	figs := Figures(res)
	if err := plot.CheckFigures(figs); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	want := []string{"fvec_tree_mse", "fvec_gaussian_mse", "fvec_patch_a_prime", "fvec_patch_ideal_a",
		"fvec_probe_a_prime", "fvec_workspace_a_prime", "fvec_patch_a", "fvec_probe_a", "fvec_workspace_a"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("Figures names\n%v\nwant\n%v", names, want)
	}
}

// A zero unconstrained Bayes bound (full data identify θ) cannot be drawn on the log axis: the tree figure leaves
// its series out, with no empty legend entry, and says so in the subtitle.
func TestTreeMSE_ZeroBoundIsNamedNotDrawn(t *testing.T) {
	res, _ := tinyResult(t)
	r := *res
	tree := *r.Tree
	theory := *tree.Theory
	theory.Bound = &meanfield.Estimate{Mean: 0, StdErr: 0, Samples: 100} // Tiny computes none
	tree.Theory = &theory
	r.Tree = &tree
	o := option(t, TreeMSE(&r))
	if _, ok := seriesNames(o)["theory: unconstrained Bayes bound (full data)"]; ok {
		t.Error("a zero bound is drawn as a series")
	}
	if js, _ := json.Marshal(o["title"]); !strings.Contains(string(js), "not drawn on the log axis") {
		t.Errorf("the subtitle does not name the zero bound: %s", js)
	}
}
