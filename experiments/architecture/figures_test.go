package architecture

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/classify"
	"github.com/protolab/protolab/models/generation"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/plot"
)

// constructed results: the figure builders need no training.
func fakeSweep() *Sweep {
	sw := &Sweep{Source: "synthetic", Widths: []int{16, 32}, Steps: []int{100, 200}}
	for _, m := range []string{"attention", "protot"} {
		for _, w := range sw.Widths {
			for _, st := range sw.Steps {
				loss := 5 - float64(w)/32 - float64(st)/400
				sw.Scores = append(sw.Scores, Score{Point: Point{Mixer: m, Source: "synthetic", Width: w, Steps: st},
					Tokens: st * 256, Loss: loss, LossSE: 0.01, Seeds: 2, Match: lm.ParamMatch{Achieved: w * w * 24}})
			}
		}
	}
	return sw
}

func TestFigures_OptionJSON(t *testing.T) {
	cmp := &Comparison{Source: "synthetic", Width: 32, Steps: 300, Scores: []Score{
		{Point: Point{Mixer: "attention"}, Perplexity: 12.5, Seeds: 1, Match: lm.ParamMatch{Achieved: 98304}},
		{Point: Point{Mixer: "protot"}, Perplexity: 13.25, Seeds: 1, Match: lm.ParamMatch{Achieved: 98280}},
	}}
	opt := PerplexityChart(cmp).RenderSnippet().Option
	require.Contains(t, opt, "attention (98.3k)")
	require.Contains(t, opt, "protot (98.3k)")
	require.Contains(t, opt, "13.25")
	require.Contains(t, opt, "equal parameter count")

	sw := fakeSweep()
	opt = TokensChart(sw, 0).RenderSnippet().Option
	require.Contains(t, opt, "width 32")
	require.Contains(t, opt, `"name":"attention"`)
	require.Contains(t, opt, `"name":"protot"`)
	// LogX over 2× of tokens (less than plot.MinLogSpan) gives a linear axis zoomed on the data.
	require.Contains(t, opt, `"type":"value"`)
	require.NotContains(t, opt, `"type":"log"`)
	require.Contains(t, opt, "training tokens")
	opt = WidthChart(sw, 100).RenderSnippet().Option
	require.Contains(t, opt, "100 steps")
	require.Contains(t, opt, "non-embedding parameters")

	// With test perplexities the bars show them, the subtitle says so; the protocol's other charts.
	cmp.Scores[1].Test = newEval([]float64{math.Log(14.5), math.Log(14.25)}, 512)
	cmp.Scores[1].Seeds = 2
	cmp.Scores[0].Curve = []CurvePoint{{Tokens: 100, Loss: 3}, {Tokens: 200, Loss: 2.5}}
	cmp.Scores[1].Curve = []CurvePoint{{Tokens: 100, Loss: 3.1, LossSE: 0.05}, {Tokens: 200, Loss: 2.6, LossSE: 0.05}}
	cmp.Rank()
	opt = PerplexityChart(cmp).RenderSnippet().Option
	require.Contains(t, opt, "test perplexity")
	require.Contains(t, opt, "14.375")
	opt = CurvesChart(cmp).RenderSnippet().Option
	require.Contains(t, opt, "ranking settled over the last half: true")
	require.Contains(t, opt, `"name":"protot"`)
	tuning := &Result{Tuning: []Tuning{{Init: "pytorch", Mixer: "protot", LRs: []float64{1e-3, 1e-2},
		Losses: []float64{2.5, 0}, Diverged: []bool{false, true}}}}
	opt = TuningChart(tuning).RenderSnippet().Option
	require.Contains(t, opt, `"name":"protot (pytorch)"`)
	require.Contains(t, opt, "Learning-rate search")
	require.Contains(t, TuningChart(&Result{}).RenderSnippet().Option, "no learning-rate search")
	require.Contains(t, TokensChart(nil, 0).RenderSnippet().Option, "no sweep in this result")
	require.Contains(t, WidthChart(nil, 0).RenderSnippet().Option, "no sweep in this result")
	require.Contains(t, PerplexityChart(nil).RenderSnippet().Option, "no comparison on this corpus")

	g := &generation.Result{Judge: "attention-synthetic-d32-s300-seed1", Rows: []generation.Row{
		{Name: "attention", Distinct: []float64{0.5, 0.75, 0.875}, Repetition: 0.125, RepetitionN: 4,
			JudgePerplexity: 9.5, JudgeTokens: 10},
		{Name: generation.ReferenceName, Distinct: []float64{0.25, 0.5, 1}, RepetitionN: 4},
	}}
	opt = GenerationChart(g).RenderSnippet().Option
	for _, s := range []string{"distinct-1", "distinct-3", "rep-4", `"name":"reference"`, "0.875"} {
		require.Contains(t, opt, s)
	}
	opt = JudgeChart(g).RenderSnippet().Option
	require.Contains(t, opt, "9.5")
	require.Contains(t, opt, "judge: attention-synthetic-d32-s300-seed1")

	rep := &classify.Report{
		Tasks: []classify.TaskSummary{{Name: "topic", Classes: make([]string, 6), Majority: 0.2},
			{Name: "gender", Classes: make([]string, 2), Majority: 0.5}},
		Results: []classify.Result{{Task: "topic", Mixer: "attention", Accuracy: 0.625, Pool: classify.PoolMean},
			{Task: "gender", Mixer: "attention", Accuracy: 0.875, Pool: classify.PoolMean},
			{Task: "topic", Mixer: "protot", Accuracy: 0.75, Pool: classify.PoolMean}},
	}
	opt = ClassifyChart(rep).RenderSnippet().Option
	for _, s := range []string{"topic (6 classes)", `"name":"majority class"`, `"name":"protot"`, "0.625",
		"mean pooling"} {
		require.Contains(t, opt, s)
	}

	// The notebook's export (Figures) has each of them once, under distinct names.
	cmp.Init, cmp.LRMode = "pytorch", LRTuned
	res := &Result{Tuning: tuning.Tuning, Compare: []*Comparison{cmp}, Sweep: sw, Generation: g, Classify: rep}
	figs := Figures(res)
	require.NoError(t, plot.CheckFigures(figs))
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	require.Equal(t, []string{"architecture_perplexity_synthetic_pytorch_tuned", "architecture_lr_search",
		"architecture_curves", "architecture_scaling_tokens", "architecture_scaling_width", "architecture_generation",
		"architecture_judge", "architecture_classify"}, names)

	// Drawn in headless Chromium: no paging legend, clipped or overprinted text, or empty series.
	if err := plot.BrowserAvailable(); err != nil {
		t.Skipf("browser check: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, plot.CheckRendered(ctx, plot.Charts(figs)...))
}
