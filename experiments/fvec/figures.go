package fvec

import (
	"fmt"
	"math"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/models/icl"
	"github.com/protolab/protolab/theory/meanfield"
	"github.com/protolab/protolab/workbench/plot"
)

// Series names: theory curves start with "theory: ", trained models with "simulation: ".
const (
	theoryPrefix     = "theory: "
	simulationPrefix = "simulation: "
)

// ints converts M values to chart x values.
func ints(m []int) []float64 {
	out := make([]float64, len(m))
	for i, v := range m {
		out[i] = float64(v)
	}
	return out
}

// modelSeries returns one "simulation: <row>" series per curve (test MSE), with a band of ±2 standard errors.
func modelSeries(models []icl.Curve) []plot.Series {
	var out []plot.Series
	for i := range models {
		c := &models[i]
		lo, hi := band(c.MSE, c.StdErr)
		out = append(out, plot.Series{Name: simulationPrefix + rowName(c), X: ints(c.M), Y: c.MSE, Lo: lo, Hi: hi})
	}
	return out
}

// patchName is the display name of a patched row.
func patchName(name, kind string) string {
	if name == AblationKeyGain {
		return "A (key gain)"
	}
	return modelName(kind)
}

// modelName is the display name of a kind.
func modelName(kind string) string {
	switch kind {
	case "a_prime":
		return "A′"
	}
	return map[string]string{"a": "A", "b": "B", "c": "C"}[kind]
}

// band returns y ∓ 2·se, the ±2 s.e. band of a series.
func band(y, se []float64) (lo, hi []float64) {
	lo, hi = make([]float64, len(y)), make([]float64, len(y))
	for i := range y {
		lo[i], hi[i] = y[i]-2*se[i], y[i]+2*se[i]
	}
	return lo, hi
}

// estimateSeries turns Monte Carlo estimates at M = ms (nil: 1, 2, …) into a series with a ±2 s.e. band.
func estimateSeries(name string, ms []int, e []meanfield.Estimate) plot.Series {
	s := plot.Series{Name: name, Dashed: strings.HasPrefix(name, theoryPrefix)}
	var se []float64
	for i, v := range e {
		m := i + 1
		if ms != nil {
			m = ms[i]
		}
		s.X, s.Y, se = append(s.X, float64(m)), append(s.Y, v.Mean), append(se, v.StdErr)
	}
	s.Lo, s.Hi = band(s.Y, se)
	return s
}

// curveSeries is a theory curve indexed by M − 1.
func curveSeries(name string, y []float64) plot.Series {
	s := plot.Series{Name: name, Y: y, Dashed: strings.HasPrefix(name, theoryPrefix)}
	for i := range y {
		s.X = append(s.X, float64(i+1))
	}
	return s
}

// TreeMSE is the tree-prior figure (spec §6 item 2): test MSE against M on a log axis for the trained rows (A, A′,
// B, C and the key-gain ablation; mean over seeds, band ±2 s.e.) beside the theory: greedy adaptive (ideal A on N tokens and its τ → 0 limit
// α^{2M}-like), the DP's optimal adaptive strategy (τ → 0), the non-adaptive Bayes readout of BFS nodes (ideal B),
// model C's LMMSE baseline with per-node noise, and the unconstrained Bayes bound.
func TreeMSE(r *Result) *charts.Line {
	t := r.Tree
	th := t.Theory
	series := []plot.Series{
		estimateSeries(theoryPrefix+"adaptive, greedy (ideal A, N tokens)", nil, t.AdaptiveTokens),
		curveSeries(theoryPrefix+"adaptive, greedy, τ→0", th.AdaptiveNoiseless),
		estimateSeries(theoryPrefix+"non-adaptive Bayes, BFS nodes (ideal B, N tokens)", nil,
			t.NonAdaptiveTokens),
		curveSeries(theoryPrefix+"LMMSE, per-node τₙ² (C's baseline)", th.LMMSETokens),
	}
	if len(t.OptimalNoiseless) > 0 {
		series = append(series, curveSeries(theoryPrefix+"optimal adaptive over node keys, τ→0 (DP)", t.OptimalNoiseless))
	}
	if len(t.BestDesign) > 0 {
		var ms []int
		var e []meanfield.Estimate
		for _, p := range t.BestDesign {
			ms, e = append(ms, p.M), append(e, p.MSE)
		}
		series = append(series, estimateSeries(theoryPrefix+"best non-adaptive level design, Bayes readout", ms, e))
	}
	note := ""
	if th.Bound != nil {
		if th.Bound.Mean > 0 {
			y := make([]float64, len(th.M))
			for i := range y {
				y[i] = th.Bound.Mean
			}
			series = append(series, curveSeries(theoryPrefix+"unconstrained Bayes bound (full data)", y))
		} else {
			// A log axis cannot draw it; a legend entry without a line would puzzle the reader.
			note = fmt.Sprintf("; unconstrained Bayes bound (full data) %.3g, not drawn on the log axis", th.Bound.Mean)
		}
	}
	series = append(series, modelSeries(t.Models)...)
	tree := th.Config.Prior
	return plot.Lines("Tree prior: MSE against depth (A) and channels (B, C)", nil, series, plot.LogY(),
		plot.AxisNames("M: layers of A, channels of B and C", "E‖θ̂ − θ‖² (a variance, ∝ α^(2M))"),
		plot.Subtitle(fmt.Sprintf("K = %d, α = %g, N = %d, s = %g; bands ±2 s.e. over seeds and contexts%s",
			tree.Depth, tree.Alpha, th.Config.Tokens, th.Config.LabelNoise, note)))
}

// GaussianMSE is the Gaussian-prior figure (spec §6 item 1): MSE against M for A, B and C beside the optimal MSE
// at τ² = (D + 1 + s²)/N, the linear-key curve (flat beyond M = D) and the level of normalised MLP keys.
func GaussianMSE(r *Result) *charts.Line {
	g := r.Gaussian
	th := g.Theory
	series := []plot.Series{
		curveSeries(theoryPrefix+fmt.Sprintf("optimal MSE, τ² = %.4f", th.Tau2), th.Optimal),
		curveSeries(theoryPrefix+"linear keys (C), flat beyond M = D", th.LinearKey),
		curveSeries(theoryPrefix+"normalised MLP keys D·uᵀx/‖x‖²", th.NormalizedKey),
	}
	series = append(series, modelSeries(g.Models)...)
	return plot.Lines("Gaussian prior: MSE against depth (A) and channels (B, C)", nil, series, plot.LogY(),
		plot.AxisNames("M: layers of A, channels of B and C", "E‖θ̂ − θ‖²"),
		plot.Subtitle(fmt.Sprintf("D = %d, N = %d, s = %g; bands ±2 s.e.", th.Config.Dim, th.Config.Tokens,
			th.Config.LabelNoise)))
}

// PatchHeatmap is the key-patching heatmap of spec §7: ΔMSE(j, ℓ) of the trained model of row name (a kind, or
// AblationKeyGain; the seed with the lowest validation MSE), patched layer ℓ across, divergence level j down. With
// theory it shows the ideal model A in the measurement model instead. It panics if the result has no patching of
// name.
func PatchHeatmap(r *Result, name string, theory bool) *charts.HeatMap {
	p := mustPatch(r, name)
	values, what := p.Delta, "simulation"
	if theory {
		values, what = p.Theory, fmt.Sprintf("theory (ideal A, τ = %.3f, shared noise)", p.TheoryTau)
	}
	xl, yl := make([]string, p.Layers), make([]string, len(p.Levels))
	for l := range xl {
		xl[l] = fmt.Sprintf("ℓ = %d", l+1)
	}
	for j, v := range p.Levels {
		yl[j] = fmt.Sprintf("j = %d", v)
	}
	return plot.Heatmap(fmt.Sprintf("Key patching, model %s, seed %d: ΔMSE (%s)", patchName(p.Name, p.Kind), p.Seed,
		what), xl, yl, values,
		plot.Diverging(), plot.AxisNames("patched layer ℓ", "level j where the two paths diverge"),
		plot.ColorBar("ΔMSE (E‖θ̂ − θ‖²)"))
}

// PatchLines plots ΔMSE against the patched layer for the model of row name (as PatchHeatmap), one simulated and
// one theory curve per divergence level j. It panics if the result has no patching of name.
func PatchLines(r *Result, name string) *charts.Line {
	p := mustPatch(r, name)
	x := make([]float64, p.Layers)
	for l := range x {
		x[l] = float64(l + 1)
	}
	var series []plot.Series
	for j, v := range p.Levels {
		lo, hi := band(p.Delta[j], p.StdErr[j])
		series = append(series,
			plot.Series{Name: fmt.Sprintf("%sj = %d", simulationPrefix, v), Y: p.Delta[j], Lo: lo, Hi: hi},
			plot.Series{Name: fmt.Sprintf("%sj = %d", theoryPrefix, v), Y: p.Theory[j], Dashed: true})
	}
	return plot.Lines("Key patching: ΔMSE against the patched layer", x, series,
		plot.AxisNames("patched layer ℓ", "ΔMSE (E‖θ̂ − θ‖²)"))
}

// ProbeHeatmap shows how the function vectors of the model of row name resolve the path: held-out accuracy of
// decoding bit b_k from the workspace p_ℓ (spec §6 item 4); for an adaptive model it jumps at ℓ = k. It panics if
// the result has no vectors of name.
func ProbeHeatmap(r *Result, name string) *charts.HeatMap {
	v := mustVector(r, name)
	yl := make([]string, v.Layers)
	for l := range yl {
		yl[l] = fmt.Sprintf("p_%d", l+1)
	}
	var xl []string
	if len(v.ProbeAccuracy) > 0 {
		for k := range v.ProbeAccuracy[0] {
			xl = append(xl, fmt.Sprintf("b_%d", k+1))
		}
	}
	return plot.Heatmap(fmt.Sprintf("Function vectors of model %s: linear probe accuracy", patchName(v.Name, v.Kind)), xl,
		yl, v.ProbeAccuracy, plot.ColorRange(0.5, 1), plot.AxisNames("decoded bit", "workspace after layer ℓ"),
		plot.ColorBar("probe accuracy (fraction)"))
}

// WorkspaceScatter shows the function vectors of the model of row name: (φ_1, φ_2) of test contexts, one colour per
// value of the first two bits of the path (φ_1 against a zero line when the model has one layer). It panics if the
// result has no vectors of name.
func WorkspaceScatter(r *Result, name string) *charts.Scatter {
	v := mustVector(r, name)
	groups := make([]plot.Points, 4)
	for g := range groups {
		groups[g].Name = fmt.Sprintf("%s(b_1, b_2) = (%d, %d)", simulationPrefix, g>>1, g&1)
	}
	K := r.Tree.Theory.Config.Prior.Depth
	for i, w := range v.Workspace {
		g := v.Leaves[i] >> (K - 2)
		y := 0.0
		if len(w) > 1 {
			y = w[1]
		}
		if math.IsNaN(w[0]) || math.IsNaN(y) {
			continue
		}
		groups[g].X = append(groups[g].X, w[0])
		groups[g].Y = append(groups[g].Y, y)
	}
	return plot.Scatter(fmt.Sprintf("Function vectors of model %s: first two statistics", patchName(v.Name, v.Kind)), groups,
		plot.AxisNames("φ_1", "φ_2"))
}

func mustPatch(r *Result, name string) *PatchResult {
	if p := r.Patch(name); p != nil {
		return p
	}
	panic(fmt.Sprintf("fvec: the result has no patching of model %q (sweep.patch_kinds)", name))
}

func mustVector(r *Result, name string) *VectorResult {
	if v := r.Vector(name); v != nil {
		return v
	}
	panic(fmt.Sprintf("fvec: the result has no function vectors of model %q (sweep.patch_kinds)", name))
}

// Figures are the figures notebooks/30_function_vectors.ipynb shows, named for plot.ExportFigures: the two
// prior figures, then for each patched row of the result its key-patching heatmap, for A′ also the ideal model's,
// and the function-vector probe and scatter of every row that has them.
func Figures(r *Result) []plot.Figure {
	var figs []plot.Figure
	if r.Tree != nil {
		figs = append(figs, plot.Figure{Name: "fvec_tree_mse", Chart: TreeMSE(r)})
	}
	if r.Gaussian != nil {
		figs = append(figs, plot.Figure{Name: "fvec_gaussian_mse", Chart: GaussianMSE(r)})
	}
	for _, name := range []string{"a_prime", "a", AblationKeyGain} {
		if r.Patch(name) != nil {
			figs = append(figs, plot.Figure{Name: "fvec_patch_" + name, Chart: PatchHeatmap(r, name, false)})
			if name == "a_prime" {
				figs = append(figs, plot.Figure{Name: "fvec_patch_ideal_a", Chart: PatchHeatmap(r, name, true)})
			}
		}
		if r.Vector(name) != nil {
			figs = append(figs, plot.Figure{Name: "fvec_probe_" + name, Chart: ProbeHeatmap(r, name)},
				plot.Figure{Name: "fvec_workspace_" + name, Chart: WorkspaceScatter(r, name)})
		}
	}
	return figs
}
