package attribution

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/workbench/plot"
)

// OverlapChart plots Overlap@k with the reference (spec §8) for every method, one bar group per method and
// one category per k; the subtitle carries the corpus and query counts.
func OverlapChart(r *Result) *charts.Bar {
	var cats []string
	for _, k := range r.Config.TopK {
		cats = append(cats, "k="+strconv.Itoa(min(k, r.NumSeqs)))
	}
	var groups []plot.BarGroup
	for _, m := range r.Methods {
		if m.Name == MethodReference {
			continue
		}
		vals := make([]float64, len(cats))
		for i, o := range m.Overlap {
			vals[i] = o.Mean
		}
		groups = append(groups, plot.BarGroup{Name: m.Name, Values: vals})
	}
	return plot.Bars("Top-k overlap with the full prototype-space reference", cats, groups,
		plot.AxisNames("k", "Overlap@k"),
		plot.Subtitle(fmt.Sprintf("%d training sequences, %d queries; claim ≈ 0.8 for the cached method", r.NumSeqs, r.NumQueries)))
}

// SpeedChart plots each method's per-query latency in milliseconds on a log axis: as run and at the
// PRISM cache's memory (spec §8, matched memory).
func SpeedChart(r *Result) *charts.Bar {
	var cats []string
	asRun, matched := make([]float64, 0, len(r.Methods)), make([]float64, 0, len(r.Methods))
	for _, m := range r.Methods {
		cats = append(cats, m.Name)
		asRun = append(asRun, m.QueryMs)
		matched = append(matched, m.MatchedQueryMs)
	}
	sub := ""
	if p := r.Method(MethodPrism); p != nil && p.SpeedUp > 0 {
		sub = fmt.Sprintf("cached method %.0f× faster than EK-FAC at equal memory (claim ≈ 500×)", p.SpeedUp)
	}
	return plot.Bars("Per-query attribution time", cats,
		[]plot.BarGroup{{Name: "as run", Values: asRun}, {Name: "matched memory", Values: matched}},
		plot.LogY(), plot.AxisNames("method", "ms per query"), plot.Subtitle(sub))
}

// LDSChart plots each method's linear datamodeling score (spec §8); methods without one get no bar.
func LDSChart(r *Result) *charts.Bar {
	var cats []string
	var vals []float64
	for _, m := range r.Methods {
		cats = append(cats, m.Name)
		v := math.NaN()
		if m.LDS != nil {
			v = *m.LDS
		}
		vals = append(vals, v)
	}
	return plot.Bars("Linear datamodeling score", cats, []plot.BarGroup{{Name: "LDS", Values: vals}},
		plot.AxisNames("method", "Spearman(predicted, actual)"),
		plot.Subtitle(fmt.Sprintf("%d retrained models on %.0f%% subsets", r.Config.LDSSubsets, 100*r.Config.LDSFraction)))
}

// Charts returns the overlap, speed and (when computed) LDS charts of a result.
func Charts(r *Result) []plot.Chart {
	out := []plot.Chart{OverlapChart(r), SpeedChart(r)}
	if r.Config.LDSSubsets > 0 {
		out = append(out, LDSChart(r))
	}
	return out
}

// WriteTable prints one row per method: fit time, per-query latency as run and at matched memory,
// speed-up over EK-FAC, memory, Overlap@k with the reference, Spearman and LDS.
func WriteTable(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "method\tfit s\tquery ms\tmatched ms\tspeed-up\tmatched cpu-ms\tspeed-up cpu\tall queries s\tMB\t")
	for _, k := range r.Config.TopK {
		fmt.Fprintf(tw, "ovl@%d\t", min(k, r.NumSeqs))
	}
	fmt.Fprintln(tw, "spearman\tLDS\t")
	opt := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.3f", *p)
	}
	for _, m := range r.Methods {
		fmt.Fprintf(tw, "%s\t%.2f\t%.3g\t%.3g\t%.0f\t%.3g\t%.0f\t%.3g\t%.3g\t", m.Name, m.FitSeconds, m.QueryMs,
			m.MatchedQueryMs, m.SpeedUp, m.MatchedQueryCPUMs, m.SpeedUpCPU, m.AllQueriesSeconds, float64(m.Bytes)/1e6)
		for i := range r.Config.TopK {
			if i < len(m.Overlap) {
				fmt.Fprintf(tw, "%.2f [%.2f,%.2f]\t", m.Overlap[i].Mean, m.Overlap[i].Lo, m.Overlap[i].Hi)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", opt(m.Spearman), opt(m.LDS))
	}
	c := r.Conditions
	fmt.Fprintf(tw, "\n%d sequences, %d tokens, %d queries; λ=%.3g, block κ mean %.3g max %.3g, off-diagonal C %.2f, "+
		"CG iterations %.1f, used prototypes %.0f%%\n", r.NumSeqs, r.NumTokens, r.NumQueries, c.Damping, c.BlockCondMean,
		c.BlockCondMax, c.OffDiagC, c.CGIterations, 100*c.UsedFraction)
	return tw.Flush()
}
