package plot

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// figureCases are charts from every builder with the inputs that used to break the layout: many series
// with long names (a paging legend), long axis names (clipped), 8+ heatmap rows (squeezed), rotated labels.
func figureCases() []Chart {
	x := []float64{1, 2, 4, 8, 16, 32, 64}
	var many []Series
	for i := range 9 {
		y := make([]float64, len(x))
		for j := range x {
			y[j] = 3 + float64(i)/10 + 1/x[j]
		}
		many = append(many, Series{Name: fmt.Sprintf("model %c, a long descriptive name", 'A'+i), Y: y, Dashed: i%2 == 1})
	}
	rows, cols := make([]string, 12), make([]string, 16)
	values := make([][]float64, len(rows))
	for i := range rows {
		rows[i] = fmt.Sprintf("prototype %d", i)
		values[i] = make([]float64, len(cols))
		for j := range cols {
			cols[j] = fmt.Sprintf("word%d", j)
			values[i][j] = math.Sin(float64(i*j)) * 0.01
		}
	}
	cats := []string{"ProtoT", "LLaMA", "DeltaNet", "Mamba"}
	kinds := []string{"ProtoT prototypes (π)", "ProtoT prototypes (ρ)", "LLaMA heads", "LLaMA SAE (top variance)",
		"LLaMA SAE (top frequency)", "LLaMA SAE (all live features)", "null model"}
	positions := make([]string, 32)
	wide := make([][]float64, 16)
	for j := range positions {
		positions[j] = fmt.Sprint(j)
	}
	for i := range wide {
		wide[i] = make([]float64, len(positions))
		for j := range positions {
			wide[i][j] = 0.05 + 0.06*math.Abs(math.Sin(float64(i+3*j)))
		}
	}
	var tree []Series // 21 series, as the tree-prior figure has
	for i := range 21 {
		tree = append(tree, Series{Name: fmt.Sprintf("simulation: model %d, seed %d", i/3, i%3), Y: many[i%9].Y, Dashed: i%2 == 0})
	}
	return []Chart{
		Lines("Twenty-one series", x, tree, AxisNames("M", "E‖θ̂ − θ‖²")),
		Lines("Validation loss against training tokens, nine mixers", x, many,
			AxisNames("training tokens", "validation loss (nats/token)"), LogX(), LogY(),
			Subtitle("a subtitle long enough to need wrapping: corpus, initialisation, learning rate, and the ranking over the last half")),
		Lines("Band", x, []Series{{Name: "measured", Y: []float64{1e-6, 2e-6, 3e-6, 2e-6, 1e-6, 5e-7, 4e-7},
			Lo: []float64{0, 1e-6, 2e-6, 1e-6, 0, 0, 0}, Hi: []float64{2e-6, 3e-6, 4e-6, 3e-6, 2e-6, 1e-6, 1e-6}},
			{Name: "predicted", Y: []float64{1e-6, 2e-6, 3e-6, 2e-6, 1e-6, 5e-7, 4e-7}, Dashed: true}},
			AxisNames("step", "Jensen–Shannon divergence (nats)")),
		Bars("Perplexity at equal parameter count", cats, []BarGroup{
			{Name: "PRISM", Values: []float64{31.20, 31.25, 31.31, 31.4}},
			{Name: "dense head", Values: []float64{31.26, 31.3, 31.33, 31.5}}},
			AxisNames("mixer", "perplexity (exp nats)"), ZoomY()),
		Bars("Two units, two axes", cats, []BarGroup{{Name: "mass share (%)", Values: []float64{12.5, 30, 7.25, 50.5}},
			{Name: "half-life (tokens)", Values: []float64{1200, 35000, 800, 4}, Right: true}},
			AxisNames("prototype", "mass share (%)"), RightAxis("half-life (tokens)")),
		Bars("Latency with many categories", rows, []BarGroup{{Name: "median", Values: []float64{1, 10, 100, 1000, 3, 30, 300, 3000, 2, 20, 200, 2000}}},
			AxisNames("method", "ms per query"), LogY()),
		Heatmap("Held-out ΔProb (%) of each target word, write mask of one prototype", cols, rows, values,
			Diverging(), AxisNames("target", "prototype"), ColorBar("ΔProb (%)")),
		Heatmap("Hessian blocks: log10 ‖H_ij‖_F", cats, cats, [][]float64{{1, 2, 3, 4}, {2, 1, 2, 3}, {3, 2, 1, 2}, {4, 3, 2, 1}},
			AxisNames("block j", "block i"), ColorBar("log10 ‖H_ij‖_F (unitless)")),
		Heatmap("Two rows and a y name longer than the plot is tall", cats, cats[:2], [][]float64{{1, 2, 3, 4}, {2, 1, 2, 3}},
			AxisNames("patched layer ℓ", "level j where the two paths diverge"), ColorBar("ΔMSE (E‖θ̂ − θ‖²)")),
		Heatmap("Thirty-two columns and a long colour-bar label", positions, rows[:12], wide[:12],
			AxisNames("position t", "prototype"), ColorBar("routing mass π (fraction)")),
		Bars("Seven long category names", kinds, []BarGroup{{Name: "themes", Values: []float64{1.3, 1.25, 0.9, 1.5, 1.4, 1.1, 0.1}}},
			AxisNames("unit kind", "themes per unit")),
		Scatter("Function vectors: first two statistics", []Points{
			{Name: "bit 0", X: []float64{0.1, 0.2, 0.3}, Y: []float64{1000, 2000, 1500}},
			{Name: "bit 1", X: []float64{0.15, 0.25, 0.35}, Y: []float64{1200, 2200, 1700}}},
			AxisNames("φ_1 (a.u.)", "φ_2 (a.u.)")),
	}
}

// TestFigures_RenderInBrowser draws every builder's chart in headless Chromium (one browser for all) and
// checks the rendering: no paging legend, every text inside the canvas, axis names drawn in full without
// overlapping other text, non-empty series, labelled colour bars, no overprinted labels.
func TestFigures_RenderInBrowser(t *testing.T) {
	requireBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cases := figureCases()
	rs, err := Inspect(ctx, cases...)
	require.NoError(t, err)
	require.Len(t, rs, len(cases))
	for _, r := range rs {
		require.NotEmpty(t, r.Texts, "chart %q drew no text", r.Title)
		require.NotEmpty(t, r.AxisNames, "chart %q", r.Title)
		if p := r.Problems(); len(p) > 0 {
			t.Errorf("chart %q (%.0f×%.0f):\n  %s", r.Title, r.Width, r.Height, strings.Join(p, "\n  "))
			for _, x := range r.Texts {
				t.Logf("  %q (%.0f,%.0f) %.0f×%.0f rotated=%v", x.Text, x.X, x.Y, x.W, x.H, x.Rotated)
			}
		}
	}
}

// The checks themselves: a rendering with a paging legend, clipped text, a truncated axis name, an empty
// series, an unlabelled colour bar, and a colour bar and its label drawn over the plot area reports each of them.
func TestRendering_ProblemsFindsEachFault(t *testing.T) {
	r := Rendering{Width: 100, Height: 100, LegendType: "scroll", AxisNames: []string{"loss (nats)", "step"},
		SeriesPoints: []int{3, 0}, ColorBarLabels: []string{" ", "mass (fraction)"}, ColorBarTexts: []string{"mass (fraction)"},
		Grid: Box{X: 20, Y: 20, W: 60, H: 60}, ColorBars: []Box{{X: 90, Y: 20, W: 8, H: 60}, {X: 75, Y: 20, W: 8, H: 60}},
		Texts: []RenderedText{{Text: "loss (n...", X: -5, Y: 10, W: 12, H: 50}, {Text: "step", X: 40, Y: 80, W: 20, H: 12},
			{Text: "10", X: 45, Y: 85, W: 10, H: 12}, {Text: "mass (fraction)", X: 60, Y: 10, W: 38, H: 12}}}
	p := strings.Join(r.Problems(), "\n")
	for _, want := range []string{"legend pages", `"loss (n..." at`, `axis name "loss (nats)" is not drawn in full`,
		`axis name "step" overlaps text "10"`, "series 1 has no data", "colour bar 0 has no label",
		`colour bar label "mass (fraction)" is drawn over the plot area`, "colour bar 1 is drawn over the plot area"} {
		require.Contains(t, p, want)
	}
	require.NotContains(t, p, "colour bar 0 is drawn over", "a bar beside the plot area is fine")
}
