package prismhead

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/workbench/plot"
)

// QualityBars shows the validation perplexity of the PRISM and the dense model (equal backbone and token budget).
func QualityBars(q Quality) *charts.Bar {
	return plot.Bars("Validation perplexity", []string{"validation perplexity"}, []plot.BarGroup{
		{Name: "PRISM", Values: []float64{q.Prism.Perplexity}},
		{Name: "dense head", Values: []float64{q.Dense.Perplexity}},
	}, plot.Subtitle(fmt.Sprintf("PRISM %+.2f%% (perplexity), %+.2f%% (loss) against the dense head",
		100*q.RelPerplexity, 100*q.RelLoss)))
}

// CoverageBars shows the coverage metrics of spec §4 (R̄1, R2 and their fractions above τ) and the share of
// prototypes in use.
func CoverageBars(q Quality) *charts.Bar {
	c := q.Coverage
	return plot.Bars("Coverage on held-out tokens", []string{"R̄1", "R2", fmt.Sprintf("R1 > %.2g", c.Threshold),
		fmt.Sprintf("R2 > %.2g", c.Threshold), "prototypes used"}, []plot.BarGroup{
		{Name: "PRISM", Values: []float64{c.R1Bar, c.R2, c.R1Frac, c.R2Frac, 1 - q.Usage.DeadFraction}},
	}, plot.Subtitle(fmt.Sprintf("%d validation tokens; E‖r‖²/‖z‖² = %.3f", c.Tokens, c.RecRatio)))
}

// UsageCurve shows the prototypes' usage counts on the validation tokens, sorted in decreasing order (log y;
// unused prototypes leave the curve).
func UsageCurve(q Quality) *charts.Line {
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

// HessianHeatmap shows the block structure of the exact Hessian (name "exact") or of one of Curvature.Approx: the
// log10 Frobenius norm of each D×D block (i, j) over the M most used prototypes.
func HessianHeatmap(c Curvature, name string) *charts.HeatMap {
	s := c.Exact
	if name != s.Name {
		var ok bool
		if s, ok = c.Approximation(name); !ok {
			s = Score{Name: name + " (missing)"}
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
		plot.Subtitle(fmt.Sprintf("λ1 = λ2 = %g; block mass %.3f; relative error to exact %.3f", c.R1Weight,
			s.BlockMass, s.RelFrobenius)))
}

// CoUsageHeatmap shows the co-usage matrix C = Σ_t a_t a_tᵀ on the M most used prototypes.
func CoUsageHeatmap(c Curvature) *charts.HeatMap {
	labels := protoLabels(c.Prototypes)
	return plot.Heatmap("Co-usage C_ij on the most used prototypes", labels, labels, c.CoUsage,
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
// its mass on the diagonal blocks (the exact Hessian's block mass is the reference bar).
func ApproxErrors(c Curvature) *charts.Bar {
	names := []string{c.Exact.Name}
	errs, mass := []float64{0}, []float64{c.Exact.BlockMass}
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

// sweepX returns the sweep's weights; a weight of 0 is drawn at 1e-3 so that the log axis keeps it.
func sweepX(sw []SweepPoint) []float64 {
	x := make([]float64, len(sw))
	for i, p := range sw {
		x[i] = math.Max(p.Weight, 1e-3)
	}
	return x
}

// SweepCoupling shows how the coupling between prototypes changes with the clustering weight λ_1 = λ_2: the
// off-diagonal mass of the co-usage matrix and the Hessian mass off the diagonal blocks (exact and structured).
func SweepCoupling(sw []SweepPoint) *charts.Line {
	var off, exact, st []float64
	for _, p := range sw {
		s, _ := p.Curvature.Approximation(ApproxStructured)
		off = append(off, p.Curvature.OffDiagonalMass)
		exact = append(exact, 1-p.Curvature.Exact.BlockMass)
		st = append(st, 1-s.BlockMass)
	}
	return plot.Lines("Coupling against the clustering weight", sweepX(sw), []plot.Series{
		{Name: "co-usage C: off-diagonal mass", Y: off},
		{Name: "exact Hessian: mass off the diagonal blocks", Y: exact},
		{Name: "structured: mass off the diagonal blocks", Y: st},
	}, plot.LogX(), plot.AxisNames("λ1 = λ2", "fraction"))
}

// SweepConditioning shows the condition numbers of the damped Hessians against the clustering weight (log axes;
// an indefinite matrix leaves a gap), and the median condition number of the exact diagonal blocks.
func SweepConditioning(sw []SweepPoint) *charts.Line {
	var exact, st, diag, block []float64
	gap := func(x float64) float64 {
		if x <= 0 {
			return math.NaN()
		}
		return x
	}
	for _, p := range sw {
		s, _ := p.Curvature.Approximation(ApproxStructured)
		d, _ := p.Curvature.Approximation(ApproxDiagonalC)
		exact = append(exact, gap(p.Curvature.Exact.DampedCond))
		st = append(st, gap(s.DampedCond))
		diag = append(diag, gap(d.DampedCond))
		block = append(block, gap(p.Curvature.Exact.BlockCondMedian))
	}
	return plot.Lines("Conditioning against the clustering weight", sweepX(sw), []plot.Series{
		{Name: "exact + λI", Y: exact},
		{Name: "structured + λI", Y: st},
		{Name: "diagonal C + λI", Y: diag},
		{Name: "exact diagonal blocks (median κ)", Y: block},
	}, plot.LogX(), plot.LogY(), plot.AxisNames("λ1 = λ2", "κ"))
}

// SweepQuality shows the price of the clustering weight: perplexity relative to the dense model (percent) and the
// coverage R̄1 and R2.
func SweepQuality(sw []SweepPoint) *charts.Line {
	var rel, r1, r2 []float64
	for _, p := range sw {
		rel = append(rel, 100*p.RelPerplexity)
		r1 = append(r1, p.Coverage.R1Bar)
		r2 = append(r2, p.Coverage.R2)
	}
	return plot.Lines("Quality against the clustering weight", sweepX(sw), []plot.Series{
		{Name: "perplexity vs dense (%)", Y: rel},
		{Name: "R̄1", Y: r1},
		{Name: "R2", Y: r2},
	}, plot.LogX(), plot.AxisNames("λ1 = λ2", ""))
}
