package speed

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/protolab/protolab/workbench/meter"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/stats"
)

// benchCurve is one measured curve, its optional band (the spread of the repetitions) and its dashed companion (a
// prediction or an estimate), by mixer.
type benchCurve struct {
	mixer          string
	x, y, dashed   []float64
	lo, hi         []float64 // the band's edges (quartiles of the repetitions); nil for none
	hasDashedValue bool
}

// benchChart draws the curves on log-log axes (each linear when its data span less than plot.MinLogSpan):
// "<mixer>" solid with its band and "<mixer> <dashedName>" dashed, in the same colour (the measured series come
// first, so the k-th mixer and its band take palette colour k).
func benchChart(title, subtitle, xName, yName, dashedName string, curves []benchCurve) *charts.Line {
	var series []plot.Series
	for _, c := range curves {
		series = append(series, plot.Series{Name: c.mixer, X: c.x, Y: c.y, Lo: c.lo, Hi: c.hi})
	}
	dashedOf := map[string]int{}
	for k, c := range curves {
		if c.hasDashedValue {
			name := c.mixer + " " + dashedName
			dashedOf[name] = k
			series = append(series, plot.Series{Name: name, X: c.x, Y: c.dashed})
		}
	}
	options := []plot.Option{plot.AxisNames(xName, yName), plot.LogX(), plot.LogY()}
	if subtitle != "" {
		options = append(options, plot.Subtitle(subtitle))
	}
	line := plot.Lines(title, nil, series, options...)
	for i := range line.MultiSeries {
		ms := &line.MultiSeries[i]
		if ms.Stack != "" {
			continue // a band: plot.Lines coloured it like its curve
		}
		if k, ok := dashedOf[ms.Name]; ok {
			col := plot.Palette[k%len(plot.Palette)]
			ms.ItemStyle = &opts.ItemStyle{Color: col}
			ms.LineStyle = &opts.LineStyle{Color: col, Width: 1.5, Type: "dashed"}
			continue
		}
		ms.LineStyle = &opts.LineStyle{Color: plot.Palette[curveIndex(curves, ms.Name)%len(plot.Palette)], Width: 2}
	}
	return line
}

// curveIndex returns the index of the curve of mixer name.
func curveIndex(curves []benchCurve, name string) int {
	for k, c := range curves {
		if c.mixer == name {
			return k
		}
	}
	return 0
}

// spreadSubtitle says what the bands are when any curve has one.
func spreadSubtitle(curves []benchCurve, what string) string {
	for _, c := range curves {
		if c.lo != nil {
			return "bands: interquartile range of the timed repetitions of " + what + "; lines: the median"
		}
	}
	return ""
}

// mixersInOrder returns the mixers of the rows in their first-appearance order.
func mixersInOrder(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// benchPoint is one configuration of a timing chart: its mixer, x, the median y with the spread of the timed steps,
// and theory/cost's prediction relative to the mixer's first context; a skipped configuration is a gap.
type benchPoint struct {
	mixer   string
	x, y    float64
	rel     float64
	spread  stats.Spread
	skipped bool
}

// predictedCurves gives each mixer (in mixersInOrder's order) its measured curve, a band over the steps'
// interquartile range (when some point has more than one timed step) and a dashed prediction: the first measured
// point's y scaled by the prediction's rel, so the dashed slope is the cost model's.
func predictedCurves(points []benchPoint) []benchCurve {
	var names []string
	for _, p := range points {
		names = append(names, p.mixer)
	}
	var curves []benchCurve
	for _, m := range mixersInOrder(names) {
		c := benchCurve{mixer: m, hasDashedValue: true}
		base := math.NaN()
		banded := false
		for _, p := range points {
			if p.mixer != m {
				continue
			}
			y, pred, lo, hi := math.NaN(), math.NaN(), math.NaN(), math.NaN()
			if !p.skipped {
				if math.IsNaN(base) {
					base = p.y / p.rel
				}
				y, pred = p.y, base*p.rel
				if p.spread.N > 1 {
					lo, hi, banded = p.spread.Q1, p.spread.Q3, true
				}
			}
			c.x, c.y, c.dashed = append(c.x, p.x), append(c.y, y), append(c.dashed, pred)
			c.lo, c.hi = append(c.lo, lo), append(c.hi, hi)
		}
		if !banded {
			c.lo, c.hi = nil, nil
		}
		curves = append(curves, c)
	}
	return curves
}

// ThroughputChart plots measured training tokens/s (the median of the timed steps) against the context T (log
// axes), one series per mixer with a band over the steps' interquartile range (with more than one timed step), and
// dashed "<mixer> predicted": the mixer's tokens/s at its first context scaled by theory/cost's PredictedRel, so
// its slope is the cost model's. Skipped configurations are gaps.
func ThroughputChart(res *Result) *charts.Line {
	var points []benchPoint
	for _, r := range res.Throughput {
		points = append(points, benchPoint{mixer: r.Mixer, x: float64(r.T), y: r.TokensPerSec, rel: r.PredictedRel,
			spread: r.Spread, skipped: r.Skipped != ""})
	}
	curves := predictedCurves(points)
	return benchChart("Training throughput vs context (B·T fixed)", spreadSubtitle(curves, "a training step"),
		"context T (tokens)", "tokens/s", "predicted", curves)
}

// DecodeChart plots the measured time to decode one token (the median of the timed steps) against the context (log
// axes), one series per mixer with a band over the steps' interquartile range, and dashed "<mixer> predicted": the
// first context's time scaled by theory/cost's PredictedRel.
func DecodeChart(res *Result) *charts.Line {
	var points []benchPoint
	for _, r := range res.Decode {
		points = append(points, benchPoint{mixer: r.Mixer, x: float64(r.Context), y: r.MsPerToken, rel: r.PredictedRel,
			spread: r.Spread})
	}
	curves := predictedCurves(points)
	return benchChart("Decoding time per token vs context (batch 1)", spreadSubtitle(curves, "a decoding step"),
		"context (tokens)", "ms/token", "predicted", curves)
}

// MemoryChart plots the peak memory of a training step above the process's base (PeakMB − BaseMB, MB) against
// the context T (log axes), one series per mixer, and dashed "<mixer> estimate", the skip rule's estimate.
func MemoryChart(res *Result) *charts.Line {
	var names []string
	for _, r := range res.Throughput {
		names = append(names, r.Mixer)
	}
	var curves []benchCurve
	for _, m := range mixersInOrder(names) {
		c := benchCurve{mixer: m, hasDashedValue: true}
		for _, r := range res.Throughput {
			if r.Mixer != m {
				continue
			}
			y := math.NaN()
			if r.Skipped == "" {
				y = r.PeakMB - r.BaseMB
			}
			c.x, c.y, c.dashed = append(c.x, float64(r.T)), append(c.y, y), append(c.dashed, r.EstimatedMB)
		}
		curves = append(curves, c)
	}
	return benchChart("Training step: peak memory vs context (B·T fixed)", "", "context T (tokens)", "MB above base",
		"estimate", curves)
}

// StateChart plots the decoding state of one sequence (all layers, KB; theory/cost) against the context (log
// axes), one series per mixer: attention's KV cache grows linearly, the recurrent states are flat.
func StateChart(res *Result) *charts.Line {
	var names []string
	for _, r := range res.Decode {
		names = append(names, r.Mixer)
	}
	var curves []benchCurve
	for _, m := range mixersInOrder(names) {
		c := benchCurve{mixer: m}
		for _, r := range res.Decode {
			if r.Mixer == m {
				c.x, c.y = append(c.x, float64(r.Context)), append(c.y, float64(r.StateBytes)/1024)
			}
		}
		curves = append(curves, c)
	}
	return benchChart("Decoding state vs context", "", "context (tokens)", "KB per sequence", "", curves)
}

// WriteThroughputTable writes the throughput rows as an aligned text table: the measurements (the median tokens/s
// of the timed steps, their interquartile range, extremes and number), theory/cost's prediction, the ratios (rel: to the mixer's first context; agree = measured CPU rel / predicted rel; vs att:
// speed-up over attention at the same T, CPU seconds) and the memory; then the reasons for skipped rows, the
// notes and the machine's rates.
func WriteThroughputTable(w io.Writer, res *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mixer\tT\tB\ttokens/s\tIQR\tmin–max\tn\ttokens/cpu-s\tGFLOP/s\troof\tpredicted\trel wall\t"+
		"rel cpu\trel pred\tagree\tvs att\tvs att pred\tpeak MB\tΔ MB\test MB\t")
	for _, r := range res.Throughput {
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%s\t%d\t%d\tskipped\t-\t-\t0\t-\t-\t-\t%.0f\t-\t-\t-\t-\t-\t-\t-\t-\t%.0f\t\n",
				r.Label(), r.T, r.Batch, r.PredictedTokensPerSec, r.EstimatedMB)
			continue
		}
		sp := r.Spread
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f–%.0f\t%.0f–%.0f\t%d\t%s\t%.1f\t%.0f%%\t%.0f\t%.3f\t%.3f\t%.3f\t"+
			"%.2f\t%s\t%s\t%.0f\t%.0f\t%.0f\t\n", r.Label(), r.T, r.Batch, r.TokensPerSec, sp.Q1, sp.Q3, sp.Min,
			sp.Max, sp.N, unmeasured(r.TokensPerCPUSec, "%.0f"), r.GFLOPsPerSec, 100*r.RoofFraction,
			r.PredictedTokensPerSec, r.MeasuredRel, r.MeasuredRelCPU, r.PredictedRel, r.Agreement,
			optional(r.MeasuredSpeedup), optional(r.PredictedSpeedup), r.PeakMB, r.PeakMB-r.BaseMB, r.EstimatedMB)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range res.Throughput {
		if r.Skipped != "" {
			fmt.Fprintf(w, "skipped: %s T=%d: %s\n", r.Label(), r.T, r.Skipped)
		}
		if r.Note != "" {
			fmt.Fprintf(w, "note: %s T=%d: %s\n", r.Label(), r.T, r.Note)
		}
	}
	writeMachine(w, res.Machine)
	return nil
}

// WriteDecodeTable writes the decoding rows as an aligned text table: ms per token (the median of the timed steps,
// their interquartile range, extremes and number; CPU), theory/cost's prediction, the ratios to the mixer's first context, and the state size (theory/cost and decoder.StateShapes).
func WriteDecodeTable(w io.Writer, res *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mixer\tcontext\tms/token\tIQR\tmin–max\tn\tcpu-ms/token\tpredicted ms\trel\trel pred\t"+
		"state KB\tshapes KB\t")
	for _, r := range res.Decode {
		sp := r.Spread
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f–%.3f\t%.3f–%.3f\t%d\t%s\t%.4f\t%.3f\t%.3f\t%.1f\t%.1f\t\n", r.Mixer,
			r.Context, r.MsPerToken, sp.Q1, sp.Q3, sp.Min, sp.Max, sp.N,
			meter.FormatResolved(r.CPUMsPerToken, r.CPUResolutionMs), r.PredictedMsPerToken,
			r.MeasuredRel, r.PredictedRel, float64(r.StateBytes)/1024, float64(r.MeasuredStateBytes)/1024)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeMachine(w, res.Machine)
	return nil
}

func writeMachine(w io.Writer, m Machine) {
	fmt.Fprintf(w, "machine: %s, %d CPUs, load %.1f → %.1f; matmul %.1f GFLOP/s at 512³ (%.1f per CPU-s), roof %.1f "+
		"GFLOP/s at %d³, elementwise %.2f Gop/s\n", m.Backend, m.NumCPU, m.LoadStart, m.LoadEnd, m.MatMulGFLOPs,
		m.MatMulGFLOPsPerCPUSec, m.RoofGFLOPs, meter.RoofSize, m.ElementwiseGops)
}

// optional formats a ratio, or "-" when it is 0 (not available).
// unmeasured formats x, or "-" when it is 0 (not measured, e.g. a CPU time the clock could not resolve).
func unmeasured(x float64, format string) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf(format, x)
}

func optional(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

// Figures are the figures notebooks/10_protot_architecture.ipynb shows from res, named for plot.ExportFigures:
// throughput and memory against context when res has throughput rows, decode time when it has decode rows.
func Figures(res *Result) []plot.Figure {
	var figs []plot.Figure
	if len(res.Throughput) > 0 {
		figs = append(figs, plot.Figure{Name: "speed_throughput", Chart: ThroughputChart(res)},
			plot.Figure{Name: "speed_memory", Chart: MemoryChart(res)})
	}
	if len(res.Decode) > 0 {
		figs = append(figs, plot.Figure{Name: "speed_decode", Chart: DecodeChart(res)})
	}
	return figs
}
