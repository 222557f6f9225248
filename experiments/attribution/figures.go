package attribution

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/plot"
)

// OverlapChart plots Overlap@k with the reference (spec §8) for every method, one bar group per method and one
// category per k: the mean over the models of r's first corpus (intervals in WriteTable's table; r.Corpus(source)
// charts another).
func OverlapChart(r *Result) *charts.Bar {
	r = r.first()
	var cats []string
	for _, k := range r.Config.OverlapK {
		cats = append(cats, "k="+strconv.Itoa(k))
	}
	var groups []plot.BarGroup
	for _, m := range r.Summary {
		if m.Name == prism.MethodReference || len(m.Overlap) == 0 {
			continue
		}
		vals := make([]float64, len(cats))
		for i := range vals {
			vals[i] = math.NaN()
			if i < len(m.Overlap) {
				vals[i] = m.Overlap[i].Mean
			}
		}
		groups = append(groups, plot.BarGroup{Name: m.Name, Values: vals})
	}
	return plot.Bars("Top-k overlap with the full prototype-space reference", cats, groups,
		plot.AxisNames("k", "Overlap@k"), plot.Subtitle(subtitle(r, "mean over models")))
}

// SpeedChart plots each method's median per-query latency in milliseconds on a log axis, with a box from the
// smallest first to the largest third quartile over models; EK-FAC is timed at the memory of the default method
// (spec §8, matched memory). Like every chart of a result, it shows r's first corpus.
func SpeedChart(r *Result) *charts.Bar {
	r = r.first()
	var cats []string
	var mid, lo, hi []float64
	for _, m := range r.Summary {
		if m.LatencyMs <= 0 {
			continue
		}
		cats = append(cats, m.Name)
		mid, lo, hi = append(mid, m.LatencyMs), append(lo, m.LatencyQ1Ms), append(hi, m.LatencyQ3Ms)
	}
	sub := subtitle(r, "median of repeated queries; box: quartiles")
	if p := r.Method(prism.MethodPrism); p != nil && p.SpeedUp > 0 {
		sub += fmt.Sprintf("; EK-FAC at prism's memory is %.3g× slower (± %.2g s.e. over models)", p.SpeedUp,
			p.SpeedUpSE)
	}
	bar := plot.Bars("Per-query attribution latency", cats, []plot.BarGroup{{Name: "median", Values: mid}},
		plot.LogY(), plot.AxisNames("method", "ms per query"), plot.Subtitle(sub))
	return withBoxes(bar, "quartiles", lo, mid, hi)
}

// LDSChart plots each method's linear datamodeling score (spec §8), the mean over models, with its 95% bootstrap
// interval as a box; methods without one get no bar. Like every chart of a result, it shows r's first corpus.
func LDSChart(r *Result) *charts.Bar {
	r = r.first()
	var cats []string
	var mid, lo, hi []float64
	for _, m := range r.Summary {
		if m.LDS == nil {
			continue
		}
		cats = append(cats, m.Name)
		mid, lo, hi = append(mid, m.LDS.Mean), append(lo, m.LDS.Lo), append(hi, m.LDS.Hi)
	}
	models := 0
	if len(r.Models) > 0 {
		models = r.Models[0].LDSModels
	}
	bar := plot.Bars("Linear datamodeling score", cats, []plot.BarGroup{{Name: "LDS", Values: mid}},
		plot.AxisNames("method", "Spearman(predicted, retrained)"),
		plot.Subtitle(subtitle(r, fmt.Sprintf("%d retrained models per model on %.0f%% subsets; box: 95%% bootstrap "+
			"interval (models, queries, subsets)", models, 100*r.Config.LDSFraction))))
	return withBoxes(bar, "95% interval", lo, mid, hi)
}

// withBoxes overlays a box per category, from lo to hi with a line at mid, on a bar chart of the same categories.
func withBoxes(bar *charts.Bar, name string, lo, mid, hi []float64) *charts.Bar {
	box := charts.NewBoxPlot()
	data := make([]opts.BoxPlotData, len(mid))
	for i := range mid {
		data[i] = opts.BoxPlotData{Value: []float64{lo[i], lo[i], mid[i], hi[i], hi[i]}}
	}
	box.AddSeries(name, data, charts.WithItemStyleOpts(opts.ItemStyle{Color: "transparent", BorderColor: "#333"}))
	bar.Overlap(box)
	return bar
}

func subtitle(r *Result, what string) string {
	if len(r.Models) == 0 {
		return what
	}
	m := r.Models[0]
	return fmt.Sprintf("%s corpus: %d model(s), %d training sequences, %d queries; %s", m.Source, len(r.Models),
		m.NumSeqs, m.NumQueries, what)
}

// Charts returns the overlap, speed and (when computed) LDS charts of a result's first corpus.
func Charts(r *Result) []plot.Chart {
	r = r.first()
	out := []plot.Chart{OverlapChart(r), SpeedChart(r)}
	if p := r.Method(prism.MethodPrism); p != nil && p.LDS != nil {
		out = append(out, LDSChart(r))
	}
	return out
}

// WriteTable prints the study, corpus by corpus: one row per method over the corpus's models (LDS with its interval
// and the paired difference from EK-FAC, Overlap@k with the reference and with EK-FAC, latency, speed-up, memory),
// then one table per model; then the cost model at this run's scale and at the Paper preset's.
func WriteTable(w io.Writer, r *Result) error {
	parts := []*Result{r}
	if len(r.Models) > 0 {
		parts = parts[:0]
		for _, src := range r.Sources() {
			parts = append(parts, r.Corpus(src))
		}
	}
	for i, p := range parts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeCorpusTable(w, p); err != nil {
			return err
		}
	}
	for i := range r.Cost {
		if err := writeCostTable(w, &r.Cost[i]); err != nil {
			return err
		}
	}
	return nil
}

// writeCorpusTable prints WriteTable's part of r on one corpus (r holds the models of one corpus).
func writeCorpusTable(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	s := r.Config
	if len(r.Models) > 0 {
		m := r.Models[0]
		fmt.Fprintf(tw, "%s corpus: %d model(s) (seeds from %d), %d training sequences (%d tokens), %d queries (validation "+
			"sequences %d–%d); scores are influence / N_tok, positive = helpful; intervals 95%%, %d bootstrap "+
			"resamples (models, then queries%s)\n", m.Source, len(r.Models), m.Seed, m.NumSeqs, m.NumTokens, m.NumQueries,
			s.QueryOffset, s.QueryOffset+m.NumQueries-1, s.Bootstrap,
			map[bool]string{true: " and retrained subsets", false: ""}[m.LDSModels > 0])
		if m.LDSModels > 0 {
			fmt.Fprintf(tw, "LDS: %d models retrained per model on %.0f%% subsets\n", m.LDSModels, 100*s.LDSFraction)
		}
	}
	fmt.Fprint(tw, "\nmethod\tLDS [95% CI]\tLDS − ekfac [95% CI]\t")
	for _, k := range s.OverlapK {
		fmt.Fprintf(tw, "ovl@%d ref\t", k)
	}
	fmt.Fprint(tw, "ovl@10 ekfac\tmedian ms [q1, q3]\tspeed-up ± s.e.\tcpu speed-up\tMB\t\n")
	for _, m := range r.Summary {
		fmt.Fprintf(tw, "%s\t%s\t%s\t", m.Name, ivText(m.LDS), ivText(m.LDSVsEKFAC))
		for i := range s.OverlapK {
			if i < len(m.Overlap) {
				fmt.Fprintf(tw, "%.2f [%.2f, %.2f]\t", m.Overlap[i].Mean, m.Overlap[i].Lo, m.Overlap[i].Hi)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		ek := "-"
		for _, o := range m.OverlapEKFAC {
			if o.K == overlapK {
				ek = fmt.Sprintf("%.2f [%.2f, %.2f]", o.Mean, o.Lo, o.Hi)
			}
		}
		lat, speed, cpu := "-", "-", "-"
		if m.LatencyMs > 0 {
			lat = fmt.Sprintf("%.3g [%.3g, %.3g]", m.LatencyMs, m.LatencyQ1Ms, m.LatencyQ3Ms)
		}
		if m.SpeedUp > 0 {
			speed = fmt.Sprintf("%.3g ± %.2g", m.SpeedUp, m.SpeedUpSE)
		}
		if m.SpeedUpCPU > 0 {
			cpu = fmt.Sprintf("%.3g ± %.2g", m.SpeedUpCPU, m.SpeedUpCPUSE)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3g\t\n", ek, lat, speed, cpu, float64(m.Bytes)/1e6)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i := range r.Models {
		if err := writeModelTable(w, &r.Models[i], s); err != nil {
			return err
		}
	}
	return nil
}

func ivText(iv *Interval) string {
	if iv == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", iv.Mean, iv.Lo, iv.Hi)
}

// writeModelTable prints one model's rows: fit time, latency as median [quartiles] over repeats, speed-up over
// EK-FAC, memory, Overlap@k with the reference, Spearman and LDS, then its conditioning.
func writeModelTable(w io.Writer, m *ModelResult, s Settings) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\nmodel seed %d (%s, validation perplexity %.4g)\n", m.Seed, m.Run, m.ValPerplexity)
	fmt.Fprint(tw, "method\tfit s\tmedian ms [q1, q3] (n)\tcpu ms\tspeed-up\tall queries s\tMB\tstored seqs\t")
	for _, k := range s.OverlapK {
		fmt.Fprintf(tw, "ovl@%d\t", min(k, m.NumSeqs))
	}
	fmt.Fprintln(tw, "spearman\tLDS [95% CI]\t")
	for _, mr := range m.Methods {
		lat, stored, speed := "-", "-", "-"
		if mr.SpeedUp > 0 {
			speed = fmt.Sprintf("%.3g", mr.SpeedUp)
		}
		if mr.Latency.Repeats > 0 {
			lat = fmt.Sprintf("%.3g [%.3g, %.3g] (%d)", mr.Latency.Median, mr.Latency.Q1, mr.Latency.Q3,
				mr.Latency.Repeats)
		}
		if mr.Name == prism.MethodEKFAC || mr.Name == prism.MethodEKFACBank {
			stored = strconv.Itoa(mr.StoredSeqs)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%.3g\t%s\t%.3g\t%.3g\t%s\t", mr.Name, mr.FitSeconds, lat, mr.Latency.CPU,
			speed, mr.AllQueriesSeconds, float64(mr.Bytes)/1e6, stored)
		for i := range s.OverlapK {
			if i < len(mr.Overlap) {
				fmt.Fprintf(tw, "%.2f [%.2f, %.2f]\t", mr.Overlap[i].Mean, mr.Overlap[i].Lo, mr.Overlap[i].Hi)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		sp := "-"
		if mr.Spearman != nil {
			sp = fmt.Sprintf("%.3f", *mr.Spearman)
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", sp, ivText(mr.LDS))
	}
	c := m.Conditions
	fmt.Fprintf(tw, "λ=%.3g, block κ mean %.3g max %.3g, off-diagonal C %.2f, CG iterations %.1f (%d unconverged), "+
		"used prototypes %.0f%%\n", c.Damping, c.BlockCondMean, c.BlockCondMax, c.OffDiagC, c.CGIterations,
		c.CGUnconverged, 100*c.UsedFraction)
	return tw.Flush()
}

// writeCostTable prints a cost model: per method the solver, GFLOPs and memory per query and the modelled speed-up.
func writeCostTable(w io.Writer, c *prism.CostModel) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	sh := c.Shape
	fmt.Fprintf(tw, "\ncost model at %s (a model, not a measurement): D=%d, K=%d, k=%d, L=%d, V=%d, T=%d, %d "+
		"attributed tokens, N_seq=%d, direct_max_k=%d, %.0f CG iterations assumed\n", c.Name, sh.D, sh.K, sh.TopK,
		sh.Layers, sh.Vocab, sh.SeqLen, sh.Completion, sh.NumSeqs, sh.DirectMaxK, sh.CGIterations)
	fmt.Fprintln(tw, "method\tsolver\tGFLOP per query\tGB\tstored seqs\tspeed-up (model)\t")
	for _, m := range c.Methods {
		stored := "-"
		if m.Name == prism.MethodEKFAC || m.Name == prism.MethodEKFACBank || m.Name == prism.MethodGradDot {
			stored = strconv.Itoa(m.StoredSeqs)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3g\t%.3g\t%s\t%.3g\t\n", m.Name, m.Solver, m.GFLOPs, m.GB, stored, m.SpeedUp)
	}
	return tw.Flush()
}

// Figures are the figures notebooks/20_prism.ipynb shows from r, named for plot.ExportFigures: on its first corpus
// the query speed, the agreement with the reference and the LDS against retraining, then the agreement and the LDS
// of every further corpus (named in the figure's name: attribution_brown_…).
func Figures(r *Result) []plot.Figure {
	figs := []plot.Figure{
		{Name: "attribution_speed", Chart: SpeedChart(r)},
		{Name: "attribution_overlap", Chart: OverlapChart(r)},
		{Name: "attribution_lds", Chart: LDSChart(r)},
	}
	sources := r.Sources()
	for i := 1; i < len(sources); i++ {
		c, name := r.Corpus(sources[i]), "attribution_"+plot.NamePart(sources[i])
		figs = append(figs, plot.Figure{Name: name + "_overlap", Chart: OverlapChart(c)},
			plot.Figure{Name: name + "_lds", Chart: LDSChart(c)})
	}
	return figs
}
