package prismhead

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/plot"
)

// option decodes a chart's echarts option.
func option(t *testing.T, c plot.Chart) map[string]any {
	t.Helper()
	var o map[string]any
	require.NoError(t, json.Unmarshal([]byte(c.RenderSnippet().Option), &o))
	return o
}

// seriesData returns, per series name, the number of data points.
func seriesData(o map[string]any) map[string]int {
	out := map[string]int{}
	for _, s := range o["series"].([]any) {
		m := s.(map[string]any)
		name, _ := m["name"].(string)
		data, _ := m["data"].([]any)
		out[name] = max(out[name], len(data))
	}
	return out
}

// fixtureCurvature is a hand-made study result with M = 2 prototypes.
func fixtureCurvature(w float64) mprism.Curvature {
	blocks := [][]float64{{4, 0.5}, {0.5, 2}}
	return mprism.Curvature{R1Weight: w, R2Weight: w, Tokens: 10, D: 3, Prototypes: []int{7, 2},
		Exact: mprism.CurvatureScore{Name: "exact", BlockMass: 0.9, DampedCond: 12, BlockCondMedian: 3, Blocks: blocks},
		CERec: mprism.CurvatureScore{Name: "exact CE+REC", BlockMass: 0.7, Blocks: blocks},
		Approx: []mprism.CurvatureScore{
			{Name: mprism.ApproxStructured, RelFrobenius: 0.4, BlockMass: 0.95, DampedCond: 8, Blocks: blocks},
			{Name: mprism.ApproxDiagonalC, RelFrobenius: 0.5, BlockMass: 1, DampedCond: -1, Blocks: blocks}},
		OffDiagonalMass: 0.3, CoUsage: [][]float64{{1, 0.2}, {0.2, 3}}}
}

// TestFigures_SeriesAndData builds every figure from fixed results and checks the series and their lengths.
func TestFigures_SeriesAndData(t *testing.T) {
	q := mprism.Quality{Counts: []int64{5, 0, 9, 1}, RelPerplexity: 0.01}
	q.Prism.Perplexity, q.Dense.Perplexity = 10.1, 10
	st := Stat{Mean: 0.5, SE: 0.1, N: 3}
	var sw Summary
	for _, w := range []float64{0, 0.1, 1} {
		sw.Sweep = append(sw.Sweep, SweepSummary{Weight: w, RelLoss: st, RelPerplexity: st, R1Bar: st, R2: st,
			OffDiagonalMass: st, BlockMass: st, BlockMassCERec: st, BlockMassStructuredCos: st, LogCond: st,
			LogCondCERec: st, LogCondStructuredCos: st, LogBlockCond: st, LogCondSpecDamping: st})
	}
	sw.Sweep[1].LogCondCERec = Stat{} // no seed with a value: a gap, not a point at 0
	c := fixtureCurvature(0.1)
	res := &Result{CorpusResult: CorpusResult{Replicates: []Replicate{{Seed: 2, Quality: q}, {Seed: 3, Quality: q}}}}
	res.Summary = Summarize(res.Replicates)
	cases := []struct {
		name  string
		chart plot.Chart
		want  map[string]int
	}{
		{"QualityBars", QualityBars(q), map[string]int{"PRISM": 1, "dense head": 1}},
		{"SeedQuality", SeedQuality(res), map[string]int{"loss vs dense (%)": 3, "perplexity vs dense (%)": 3}},
		{"CoverageBars", CoverageBars(q), map[string]int{"PRISM": 5}},
		{"UsageCurve", UsageCurve(q), map[string]int{"tokens using the prototype": 4}},
		{"HessianHeatmap", HessianHeatmap(c, "exact"), map[string]int{"": 4}},
		{"CoUsageHeatmap", CoUsageHeatmap(c), map[string]int{"": 4}},
		{"HessianHeatmap CE+REC", HessianHeatmap(c, "exact CE+REC"), map[string]int{"": 4}},
		{"ApproxErrors", ApproxErrors(c), map[string]int{"relative Frobenius error": 4, "block mass (diagonal blocks)": 4}},
		{"SweepCoupling", SweepCoupling(sw), map[string]int{"co-usage C: off-diagonal mass (spec §5)": 3,
			"exact CE+REC part: mass off the diagonal blocks": 3}},
		{"SweepConditioning", SweepConditioning(sw), map[string]int{"exact H + λ_fix I": 3,
			"exact diagonal blocks H_jj + λ_fix I (median κ)": 3}},
		{"SweepQuality", SweepQuality(sw), map[string]int{"R̄1": 3, "loss vs dense (%)": 3}},
	}
	var all []plot.Chart
	for _, tc := range cases {
		all = append(all, tc.chart)
		got := seriesData(option(t, tc.chart))
		for name, n := range tc.want {
			if name == "" {
				total := 0
				for _, v := range got {
					total += v
				}
				require.Equal(t, n, total, tc.name)
				continue
			}
			require.Equal(t, n, got[name], "%s: series %q in %v", tc.name, name, got)
		}
	}
	// The usage curve is sorted in decreasing order.
	o := option(t, UsageCurve(q))
	data := o["series"].([]any)[0].(map[string]any)["data"].([]any)
	first := data[0].(map[string]any)["value"].([]any)[1].(float64)
	require.Equal(t, 9.0, first)

	// Drawn in headless Chromium: no paging legend, clipped or overprinted text, empty series or unlabelled
	// colour bar.
	if err := plot.BrowserAvailable(); err != nil {
		t.Skipf("browser check: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, plot.CheckRendered(ctx, all...))
}

// TestFigures_FurtherCorpora: Figures adds, for each further corpus, its per-seed quality and sweep figures named
// by the corpus (a file source's path made a file name), titled with it.
func TestFigures_FurtherCorpora(t *testing.T) {
	q := mprism.Quality{RelLoss: 0.01}
	rep := []Replicate{{Seed: 2, Quality: q}, {Seed: 3, Quality: q}}
	res := &Result{CorpusResult: CorpusResult{Protocol: Protocol{Source: "synthetic"}, Replicates: rep}}
	one := len(Figures(res))
	res.Others = []CorpusResult{{Protocol: Protocol{Source: "brown"}, Replicates: rep},
		{Protocol: Protocol{Source: "/data/My.txt"}, Replicates: rep}}
	figs := Figures(res)
	require.Len(t, figs, one+6)
	var names []string
	for _, f := range figs[one:] {
		names = append(names, f.Name)
	}
	require.Equal(t, []string{"prismhead_brown_quality", "prismhead_brown_sweep_coupling",
		"prismhead_brown_sweep_quality", "prismhead__data_my_txt_quality", "prismhead__data_my_txt_sweep_coupling",
		"prismhead__data_my_txt_sweep_quality"}, names)
	o := option(t, figs[one].Chart)
	require.Contains(t, o["title"].(map[string]any)["text"], "(brown)")
	require.Equal(t, 3, seriesData(o)["loss vs dense (%)"], "two seeds and the mean")
}
