package prismhead

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/go-echarts/go-echarts/v2/charts"

	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/plot"
)

// QualityBars shows the evaluation perplexity of one seed's PRISM and dense model (equal backbone and token budget).
func QualityBars(q mprism.Quality) *charts.Bar {
	return plot.Bars("Perplexity on held-out text", []string{"perplexity"}, []plot.BarGroup{
		{Name: "PRISM", Values: []float64{q.Prism.Perplexity}},
		{Name: "dense head", Values: []float64{q.Dense.Perplexity}},
	}, plot.ZoomY(), plot.AxisNames("", "perplexity (exp of nats/token)"),
		plot.Subtitle(fmt.Sprintf("PRISM %+.2f%% (perplexity), %+.2f%% (loss) against the dense head; axis zoomed",
			100*q.RelPerplexity, 100*q.RelLoss)))
}

// SeedQuality shows, per training seed and as the mean over seeds, the configured PRISM model's loss and perplexity
// relative to the dense model of its seed (percent), with the mean's ± 2 s.e. in the subtitle, on r's first corpus.
func SeedQuality(r *Result) *charts.Bar {
	return CorpusSeedQuality(&r.CorpusResult, "")
}

// CorpusSeedQuality is SeedQuality on one corpus's result r; a non-empty label (the corpus's name) is added to the
// title.
func CorpusSeedQuality(r *CorpusResult, label string) *charts.Bar {
	title := "PRISM against the dense head, per seed"
	if label != "" {
		title += " (" + label + ")"
	}
	var cats []string
	var loss, ppl []float64
	for _, rep := range r.Replicates {
		cats = append(cats, fmt.Sprintf("seed %d", rep.Seed))
		loss = append(loss, 100*rep.Quality.RelLoss)
		ppl = append(ppl, 100*rep.Quality.RelPerplexity)
	}
	s := r.Summary
	cats = append(cats, "mean")
	loss = append(loss, 100*s.RelLoss.Mean)
	ppl = append(ppl, 100*s.RelPerplexity.Mean)
	return plot.Bars(title, cats, []plot.BarGroup{
		{Name: "loss vs dense (%)", Values: loss},
		{Name: "perplexity vs dense (%)", Values: ppl},
	}, plot.AxisNames("training seed", "change against the dense head (%)"), plot.Subtitle(fmt.Sprintf(
		"mean ± 2 s.e. over %d seeds: loss %+.2f ± %.2f%%, perplexity %+.2f ± %.2f%%", s.Seeds,
		100*s.RelLoss.Mean, 200*s.RelLoss.SE, 100*s.RelPerplexity.Mean, 200*s.RelPerplexity.SE)))
}

// CoverageBars shows the coverage metrics of spec §4 (R̄1, R2 and their fractions above τ) and the share of
// prototypes in use.
func CoverageBars(q mprism.Quality) *charts.Bar {
	c := q.Coverage
	return plot.Bars("Coverage on held-out tokens", []string{"R̄1", "R2", fmt.Sprintf("R1 > %.2g", c.Threshold),
		fmt.Sprintf("R2 > %.2g", c.Threshold), "prototypes used"}, []plot.BarGroup{
		{Name: "PRISM", Values: []float64{c.R1Bar, c.R2, c.R1Frac, c.R2Frac, 1 - q.Usage.DeadFraction}},
	}, plot.AxisNames("coverage metric", "fraction"),
		plot.Subtitle(fmt.Sprintf("%d evaluation tokens; E‖r‖²/‖z‖² = %.3f", c.Tokens, c.RecRatio)))
}

// UsageCurve shows the prototypes' usage counts on the validation tokens, sorted in decreasing order (log y;
// unused prototypes leave the curve).
func UsageCurve(q mprism.Quality) *charts.Line {
	counts := slices.Clone(q.Counts)
	slices.SortFunc(counts, func(a, b int64) int { return cmp.Compare(b, a) })
	x, y := make([]float64, len(counts)), make([]float64, len(counts))
	for i, n := range counts {
		x[i], y[i] = float64(i+1), float64(n)
	}
	return plot.Lines("Prototype usage", x, []plot.Series{{Name: "tokens using the prototype", Y: y}},
		plot.LogY(), plot.AxisNames("rank", "tokens"), plot.Subtitle(fmt.Sprintf(
			"dead %.1f%%, usage entropy %.2f nats (uniform: %.2f), co-usage off-diagonal mass %.3f",
			100*q.Usage.DeadFraction, q.Usage.Entropy, math.Log(float64(len(counts))), q.Usage.OffDiagonalMass)))
}

// HessianHeatmap shows the block structure of the exact Hessian (name "exact"), of its CE+REC part ("exact CE+REC")
// or of one of c.Approx (mprism.ApproxStructured, ...): the log10 Frobenius norm of each D×D block (i, j) over the M
// most used prototypes.
func HessianHeatmap(c mprism.Curvature, name string) *charts.HeatMap {
	s := c.Exact
	switch name {
	case c.Exact.Name:
	case c.CERec.Name:
		s = c.CERec
	default:
		var ok bool
		if s, ok = c.Approximation(name); !ok {
			s = mprism.CurvatureScore{Name: name + " (missing)"}
		}
	}
	labels := protoLabels(c.Prototypes)
	values := make([][]float64, len(s.Blocks))
	for i, row := range s.Blocks {
		values[i] = make([]float64, len(row))
		for j, v := range row {
			values[i][j] = math.Log10(v) // −Inf (an exactly zero block) is left blank
		}
	}
	if len(values) == 0 {
		values, labels = [][]float64{}, []string{}
	}
	return plot.Heatmap(fmt.Sprintf("Hessian blocks (%s): log10 ‖H_ij‖_F", s.Name), labels, labels, values,
		plot.AxisNames("prototype j", "prototype i"), plot.ColorBar("log10 ‖H_ij‖_F"),
		plot.Subtitle(fmt.Sprintf("λ1 = λ2 = %g; block mass %.3f; relative error to exact %.3f", c.R1Weight,
			s.BlockMass, s.RelFrobenius)))
}

// CoUsageHeatmap shows the co-usage matrix C = Σ_t a_t a_tᵀ on the M most used prototypes.
func CoUsageHeatmap(c mprism.Curvature) *charts.HeatMap {
	labels := protoLabels(c.Prototypes)
	return plot.Heatmap("Co-usage C_ij on the most used prototypes", labels, labels, c.CoUsage,
		plot.AxisNames("prototype j", "prototype i"), plot.ColorBar("C_ij (Σ_t a_ti a_tj)"),
		plot.Subtitle(fmt.Sprintf("off-diagonal mass %.3f (these prototypes), %.3f (whole bank)", c.OffDiagonalMassJ,
			c.OffDiagonalMass)))
}

func protoLabels(protos []int) []string {
	out := make([]string, len(protos))
	for i, j := range protos {
		out[i] = fmt.Sprintf("p%d", j)
	}
	return out
}

// ApproxErrors shows, for each approximation of the Hessian, its relative Frobenius error to the exact Hessian and
// its mass on the diagonal blocks (the exact Hessian's and its CE+REC part's block masses are the reference bars).
func ApproxErrors(c mprism.Curvature) *charts.Bar {
	names := []string{c.Exact.Name, c.CERec.Name}
	errs, mass := []float64{0, 0}, []float64{c.Exact.BlockMass, c.CERec.BlockMass}
	for _, s := range c.Approx {
		names = append(names, s.Name)
		errs = append(errs, s.RelFrobenius)
		mass = append(mass, s.BlockMass)
	}
	return plot.Bars("Hessian approximations against the exact Hessian", names, []plot.BarGroup{
		{Name: "relative Frobenius error", Values: errs},
		{Name: "block mass (diagonal blocks)", Values: mass},
	}, plot.Subtitle(fmt.Sprintf("%d tokens, M = %d prototypes, D = %d", c.Tokens, len(c.Prototypes), c.D)))
}

// sweepX returns the summary's weights; a weight of 0 is drawn at 1e-3 so that the log axis keeps it.
func sweepX(sw []SweepSummary) []float64 {
	x := make([]float64, len(sw))
	for i, p := range sw {
		x[i] = math.Max(p.Weight, 1e-3)
	}
	return x
}

// band returns the series of a stat over the sweep with its band mean ± 2 s.e. (scaled by k; a weight without a
// value is a gap).
func band(name string, sw []SweepSummary, k float64, f func(SweepSummary) Stat) plot.Series {
	s := plot.Series{Name: name, Y: make([]float64, len(sw)), Lo: make([]float64, len(sw)), Hi: make([]float64, len(sw))}
	for i, p := range sw {
		st := f(p)
		if st.N == 0 {
			s.Y[i], s.Lo[i], s.Hi[i] = math.NaN(), math.NaN(), math.NaN()
			continue
		}
		s.Y[i] = k * st.Mean
		s.Lo[i], s.Hi[i] = s.Y[i]-2*math.Abs(k)*st.SE, s.Y[i]+2*math.Abs(k)*st.SE
	}
	return s
}

// oneMinus maps a share to its complement (the mass off the diagonal blocks).
func oneMinus(st Stat) Stat { st.Mean = 1 - st.Mean; return st }

// SweepCoupling shows how the coupling between prototypes changes with the clustering weight λ_1 = λ_2, mean over
// seeds with a band of ± 2 s.e.: spec §5's off-diagonal mass of C over the whole bank, and the mass off the diagonal
// blocks of the exact Hessian, of its CE+REC part alone (the clustering terms are block-diagonal by construction),
// and of the structured approximation with cosine clustering blocks.
func SweepCoupling(s Summary) *charts.Line {
	sw := s.Sweep
	return plot.Lines("Coupling against the clustering weight", sweepX(sw), []plot.Series{
		band("co-usage C: off-diagonal mass (spec §5)", sw, 1, func(p SweepSummary) Stat { return p.OffDiagonalMass }),
		band("exact H: mass off the diagonal blocks", sw, 1, func(p SweepSummary) Stat { return oneMinus(p.BlockMass) }),
		band("exact CE+REC part: mass off the diagonal blocks", sw, 1, func(p SweepSummary) Stat {
			return oneMinus(p.BlockMassCERec)
		}),
		band("structured, cosine blocks: mass off the diagonal blocks", sw, 1, func(p SweepSummary) Stat {
			return oneMinus(p.BlockMassStructuredCos)
		}),
	}, plot.LogX(), plot.AxisNames("λ1 = λ2", "fraction"),
		plot.Subtitle(fmt.Sprintf("mean ± 2 s.e. over %d seeds", s.Seeds)))
}

// SweepConditioning shows log10 of the condition numbers against the clustering weight, mean over seeds with a band
// of ± 2 s.e., at each seed's damping held fixed across the sweep (that of its smallest weight): the exact Hessian
// on the M most used prototypes, its CE+REC part, the structured approximation with cosine blocks and the median
// diagonal block of the exact Hessian; and, for comparison, the exact Hessian at each model's own spec §5 damping,
// which grows with the weight.
func SweepConditioning(s Summary) *charts.Line {
	sw := s.Sweep
	return plot.Lines("Conditioning against the clustering weight", sweepX(sw), []plot.Series{
		band("exact H + λ_fix I", sw, 1, func(p SweepSummary) Stat { return p.LogCond }),
		band("exact CE+REC part + λ_fix I", sw, 1, func(p SweepSummary) Stat { return p.LogCondCERec }),
		band("structured, cosine blocks + λ_fix I", sw, 1, func(p SweepSummary) Stat { return p.LogCondStructuredCos }),
		band("exact diagonal blocks H_jj + λ_fix I (median κ)", sw, 1, func(p SweepSummary) Stat {
			return p.LogBlockCond
		}),
		band("exact H + λ(weight) I (spec damping)", sw, 1, func(p SweepSummary) Stat { return p.LogCondSpecDamping }),
	}, plot.LogX(), plot.AxisNames("λ1 = λ2", "log10 κ"),
		plot.Subtitle(fmt.Sprintf("mean ± 2 s.e. over %d seeds; a seed whose damped matrix is indefinite is left out",
			s.Seeds)))
}

// SweepQuality shows the price of the clustering weight, mean over seeds with a band of ± 2 s.e.: loss and
// perplexity relative to the dense model (percent) and the coverage R̄1 and R2.
func SweepQuality(s Summary) *charts.Line {
	sw := s.Sweep
	return plot.Lines("Quality against the clustering weight", sweepX(sw), []plot.Series{
		band("loss vs dense (%)", sw, 100, func(p SweepSummary) Stat { return p.RelLoss }),
		band("perplexity vs dense (%)", sw, 100, func(p SweepSummary) Stat { return p.RelPerplexity }),
		band("R̄1", sw, 1, func(p SweepSummary) Stat { return p.R1Bar }),
		band("R2", sw, 1, func(p SweepSummary) Stat { return p.R2 }),
	}, plot.LogX(), plot.AxisNames("λ1 = λ2", ""), plot.Subtitle(fmt.Sprintf("mean ± 2 s.e. over %d seeds", s.Seeds)))
}

// Figures are the figures notebooks/20_prism.ipynb shows from r, named for plot.ExportFigures: on the first corpus
// the per-seed quality bars, then the first seed's coverage, usage, exact and structured Hessian blocks, co-usage
// and approximation errors, then the clustering-weight sweep's coupling, conditioning and price; then, for each
// further corpus (named in the figure's name: prismhead_brown_…), its per-seed quality and the sweep's coupling and
// price.
func Figures(r *Result) []plot.Figure {
	figs := []plot.Figure{{Name: "prismhead_quality", Chart: SeedQuality(r)}}
	if len(r.Replicates) > 0 {
		q, c := r.Replicates[0].Quality, r.Replicates[0].Curvature
		figs = append(figs,
			plot.Figure{Name: "prismhead_coverage", Chart: CoverageBars(q)},
			plot.Figure{Name: "prismhead_usage", Chart: UsageCurve(q)},
			plot.Figure{Name: "prismhead_hessian_exact", Chart: HessianHeatmap(c, "exact")},
			plot.Figure{Name: "prismhead_hessian_structured", Chart: HessianHeatmap(c, mprism.ApproxStructured)},
			plot.Figure{Name: "prismhead_co_usage", Chart: CoUsageHeatmap(c)},
			plot.Figure{Name: "prismhead_approximation_errors", Chart: ApproxErrors(c)})
	}
	figs = append(figs,
		plot.Figure{Name: "prismhead_sweep_coupling", Chart: SweepCoupling(r.Summary)},
		plot.Figure{Name: "prismhead_sweep_conditioning", Chart: SweepConditioning(r.Summary)},
		plot.Figure{Name: "prismhead_sweep_quality", Chart: SweepQuality(r.Summary)})
	for i := range r.Others {
		c := &r.Others[i]
		name := "prismhead_" + plot.NamePart(c.Protocol.Source)
		figs = append(figs,
			plot.Figure{Name: name + "_quality", Chart: CorpusSeedQuality(c, c.Protocol.Source)},
			plot.Figure{Name: name + "_sweep_coupling", Chart: SweepCoupling(c.Summary)},
			plot.Figure{Name: name + "_sweep_quality", Chart: SweepQuality(c.Summary)})
	}
	return figs
}
