package speed

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/protolab/protolab/workbench/plot"
)

// benchCurve is one measured curve and its dashed companion (a prediction or an estimate), by mixer.
type benchCurve struct {
	mixer          string
	x, y, dashed   []float64
	hasDashedValue bool
}

// benchChart draws the curves on log-log axes: "<mixer>" solid and "<mixer> <dashedName>" dashed, in the same
// colour.
func benchChart(title, xName, yName, dashedName string, curves []benchCurve) *charts.Line {
	var series []plot.Series
	for _, c := range curves {
		series = append(series, plot.Series{Name: c.mixer, X: c.x, Y: c.y})
		if c.hasDashedValue {
			series = append(series, plot.Series{Name: c.mixer + " " + dashedName, X: c.x, Y: c.dashed})
		}
	}
	line := plot.Lines(title, nil, series, plot.AxisNames(xName, yName), plot.LogX(), plot.LogY())
	i := 0
	for k, c := range curves {
		col := plot.Palette[k%len(plot.Palette)]
		line.MultiSeries[i].ItemStyle = &opts.ItemStyle{Color: col}
		line.MultiSeries[i].LineStyle = &opts.LineStyle{Color: col, Width: 2}
		i++
		if c.hasDashedValue {
			line.MultiSeries[i].ItemStyle = &opts.ItemStyle{Color: col}
			line.MultiSeries[i].LineStyle = &opts.LineStyle{Color: col, Width: 1.5, Type: "dashed"}
			i++
		}
	}
	return line
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

// ThroughputChart plots measured training tokens/s against the context T (log axes), one series per mixer, and
// dashed "<mixer> predicted": the mixer's tokens/s at its first context scaled by theory/cost's PredictedRel, so
// its slope is the cost model's. Skipped configurations are gaps.
func ThroughputChart(res *Result) *charts.Line {
	var names []string
	for _, r := range res.Throughput {
		names = append(names, r.Mixer)
	}
	var curves []benchCurve
	for _, m := range mixersInOrder(names) {
		c := benchCurve{mixer: m, hasDashedValue: true}
		base := math.NaN()
		for _, r := range res.Throughput {
			if r.Mixer != m {
				continue
			}
			y, p := math.NaN(), math.NaN()
			if r.Skipped == "" {
				if math.IsNaN(base) {
					base = r.TokensPerSec / r.PredictedRel
				}
				y, p = r.TokensPerSec, base*r.PredictedRel
			}
			c.x, c.y, c.dashed = append(c.x, float64(r.T)), append(c.y, y), append(c.dashed, p)
		}
		curves = append(curves, c)
	}
	return benchChart("Training throughput vs context (B·T fixed)", "context T (tokens)", "tokens/s", "predicted",
		curves)
}

// DecodeChart plots the measured time to decode one token against the context (log axes), one series per mixer,
// and dashed "<mixer> predicted": the first context's time scaled by theory/cost's PredictedRel.
func DecodeChart(res *Result) *charts.Line {
	var names []string
	for _, r := range res.Decode {
		names = append(names, r.Mixer)
	}
	var curves []benchCurve
	for _, m := range mixersInOrder(names) {
		c := benchCurve{mixer: m, hasDashedValue: true}
		base := math.NaN()
		for _, r := range res.Decode {
			if r.Mixer != m {
				continue
			}
			if math.IsNaN(base) {
				base = r.MsPerToken / r.PredictedRel
			}
			c.x, c.y, c.dashed = append(c.x, float64(r.Context)), append(c.y, r.MsPerToken), append(c.dashed, base*r.PredictedRel)
		}
		curves = append(curves, c)
	}
	return benchChart("Decoding time per token vs context (batch 1)", "context (tokens)", "ms/token", "predicted",
		curves)
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
	return benchChart("Training step: peak memory vs context (B·T fixed)", "context T (tokens)", "MB above base",
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
	return benchChart("Decoding state vs context", "context (tokens)", "KB per sequence", "", curves)
}

// WriteThroughputTable writes the throughput rows as an aligned text table: the measurements, theory/cost's
// prediction, the ratios (rel: to the mixer's first context; agree = measured CPU rel / predicted rel; vs att:
// speed-up over attention at the same T, CPU seconds) and the memory; then the reasons for skipped rows, the
// notes and the machine's rates.
func WriteThroughputTable(w io.Writer, res *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mixer\tT\tB\ttokens/s\ttokens/cpu-s\tpredicted\trel wall\trel cpu\trel pred\tagree\t"+
		"vs att\tvs att pred\tpeak MB\tΔ MB\test MB\t")
	for _, r := range res.Throughput {
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%s\t%d\t%d\tskipped\t-\t%.0f\t-\t-\t-\t-\t-\t-\t-\t-\t%.0f\t\n", r.Mixer, r.T, r.Batch,
				r.PredictedTokensPerSec, r.EstimatedMB)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f\t%.0f\t%.3f\t%.3f\t%.3f\t%.2f\t%s\t%s\t%.0f\t%.0f\t%.0f\t\n",
			r.Mixer, r.T, r.Batch, r.TokensPerSec, r.TokensPerCPUSec, r.PredictedTokensPerSec, r.MeasuredRel,
			r.MeasuredRelCPU, r.PredictedRel, r.Agreement, optional(r.MeasuredSpeedup),
			optional(r.PredictedSpeedup), r.PeakMB, r.PeakMB-r.BaseMB, r.EstimatedMB)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range res.Throughput {
		if r.Skipped != "" {
			fmt.Fprintf(w, "skipped: %s T=%d: %s\n", r.Mixer, r.T, r.Skipped)
		}
		if r.Note != "" {
			fmt.Fprintf(w, "note: %s T=%d: %s\n", r.Mixer, r.T, r.Note)
		}
	}
	writeMachine(w, res.Machine)
	return nil
}

// WriteDecodeTable writes the decoding rows as an aligned text table: ms per token (wall, CPU), theory/cost's
// prediction, the ratios to the mixer's first context, and the state size (theory/cost and decoder.StateShapes).
func WriteDecodeTable(w io.Writer, res *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mixer\tcontext\tms/token\tcpu-ms/token\tpredicted ms\trel\trel pred\tstate KB\tshapes KB\t")
	for _, r := range res.Decode {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.4f\t%.3f\t%.3f\t%.1f\t%.1f\t\n", r.Mixer, r.Context, r.MsPerToken,
			r.CPUMsPerToken, r.PredictedMsPerToken, r.MeasuredRel, r.PredictedRel, float64(r.StateBytes)/1024,
			float64(r.MeasuredStateBytes)/1024)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeMachine(w, res.Machine)
	return nil
}

func writeMachine(w io.Writer, m Machine) {
	fmt.Fprintf(w, "machine: %s, %d CPUs, load %.1f → %.1f; matmul %.1f GFLOP/s (%.1f per CPU-s), elementwise %.2f Gop/s\n",
		m.Backend, m.NumCPU, m.LoadStart, m.LoadEnd, m.MatMulGFLOPs, m.MatMulGFLOPsPerCPUSec, m.ElementwiseGops)
}

// optional formats a ratio, or "-" when it is 0 (not available).
func optional(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}
