package interp

import (
	"fmt"
	"math"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/plot"
)

// corpusOrEmpty returns the corpus result of source, or an empty one (so builders draw an empty chart).
func corpusOrEmpty(res *Result, source string) *CorpusResult {
	if c := res.Corpus(source); c != nil {
		return c
	}
	return &CorpusResult{Source: source}
}

func pct(x float64) string { return fmt.Sprintf("%+.1f%%", 100*x) }

// tokens joins the tokens of contexts, quoted.
func tokens(cs []naming.Context) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%q", c.Token))
	}
	return strings.Join(out, " ")
}

// labelCell formats a score's label for a table: "gender=female 0.85 ✓" (✓ when named).
func labelCell(s naming.Score) string {
	if s.Label == "" {
		return "—"
	}
	mark := ""
	if s.Named {
		mark = " ✓"
	}
	return fmt.Sprintf("%s %.2f%s", s.Label, s.Purity, mark)
}

// ModelsTable lists the trained models of every corpus: parameters, FFN width, validation perplexity, training time.
func ModelsTable(res *Result) *plot.Table {
	return pair.ModelsTableOf(res.Corpora, func(c *CorpusResult) (string, []pair.Summary) { return c.Source, c.Models })
}

// DashboardTable is the dashboard of one ProtoT layer: per prototype its label by π and by ρ (purity, ✓ when
// named), mass share, β, half-life, dead status and top tokens by π and by ρ.
func DashboardTable(res *Result, source string, layer int) *plot.Table {
	c := corpusOrEmpty(res, source)
	t := &plot.Table{Title: fmt.Sprintf("ProtoT layer %d prototypes (%s)", layer, source),
		Header: []string{"prototype", "label by π", "label by ρ", "mass share", "β", "half-life", "dead",
			"top tokens by π", "top tokens by ρ"},
		Note: "label: majority label of the top tokens with its purity; ✓ named (purity and binomial test, doc.go)"}
	for _, p := range c.Prototypes {
		if p.Layer != layer {
			continue
		}
		dead := ""
		if p.Dead {
			dead = "dead"
		}
		t.Rows = append(t.Rows, []string{p.Name, labelCell(p.Write), labelCell(p.Read), fmt.Sprintf("%.2f%%",
			100*p.MassShare), fmt.Sprintf("%.3f", p.Beta), fmt.Sprintf("%.1f", p.HalfLife), dead, tokens(p.TopWrite),
			tokens(p.TopRead)})
	}
	return t
}

// ContextsTable lists the top contexts of one prototype by π (read false) or ρ (read true), the activating token
// in brackets.
func ContextsTable(res *Result, source string, layer, k int, read bool) *plot.Table {
	c := corpusOrEmpty(res, source)
	by := "π"
	if read {
		by = "ρ"
	}
	t := &plot.Table{Title: fmt.Sprintf("Top contexts of %s by %s (%s)", pair.ProtoName(layer, k), by, source),
		Header: []string{"activation", "context", "labels"}}
	for _, p := range c.Prototypes {
		if p.Layer != layer || p.K != k {
			continue
		}
		cs := p.TopWrite
		if read {
			cs = p.TopRead
		}
		for _, x := range cs {
			ctx := strings.ReplaceAll(x.Before+"["+x.Token+"]"+x.After, "\n", " ")
			t.Rows = append(t.Rows, []string{fmt.Sprintf("%.3f", x.Activation), ctx, x.Labels})
		}
	}
	return t
}

// RoutingMassHeatmap shows the routing mass of one layer's prototypes by position: mean π[t, k] over the
// evaluation sequences (rows prototypes, columns positions).
func RoutingMassHeatmap(res *Result, source string, layer int) *charts.HeatMap {
	c := corpusOrEmpty(res, source)
	var rows []string
	var values [][]float64
	var cols []string
	for _, p := range c.Prototypes {
		if p.Layer != layer {
			continue
		}
		rows = append(rows, p.Name)
		values = append(values, p.MassByPos)
		if cols == nil {
			for t := range p.MassByPos {
				cols = append(cols, fmt.Sprint(t))
			}
		}
	}
	return plot.Heatmap(fmt.Sprintf("Routing mass π by position, layer %d (%s)", layer, source), cols, rows, values,
		plot.AxisNames("position t", "prototype"), plot.ColorBar("routing mass π (fraction)"),
		plot.Subtitle("mean over held-out sequences"))
}

// PrototypeBars shows each prototype's mass share (%, left axis) and half-life (tokens, right axis), one group per
// quantity.
func PrototypeBars(res *Result, source string) *charts.Bar {
	c := corpusOrEmpty(res, source)
	var cats []string
	mass, half := plot.BarGroup{Name: "mass share (%)"}, plot.BarGroup{Name: "half-life (tokens)", Right: true}
	for _, p := range c.Prototypes {
		cats = append(cats, p.Name)
		mass.Values = append(mass.Values, 100*p.MassShare)
		half.Values = append(half.Values, p.HalfLife)
	}
	return plot.Bars(fmt.Sprintf("Prototype mass share and half-life (%s)", source), cats,
		[]plot.BarGroup{mass, half}, plot.AxisNames("prototype", "mass share (%)"), plot.RightAxis("half-life (tokens)"))
}

// MetricBars compares the unit kinds on the naming metrics (models/pair doc.go, "Units"): mean disentanglement, mean
// coverage, fraction of named units and fraction of labels naming a unit; one group per unit kind.
func MetricBars(res *Result, source string) *charts.Bar {
	c := corpusOrEmpty(res, source)
	cats := []string{"disentanglement", "coverage", "named units", "labels named"}
	var groups []plot.BarGroup
	for _, k := range c.Kinds {
		groups = append(groups, plot.BarGroup{Name: pair.KindName(k.Kind), Values: []float64{k.Disentanglement.Mean,
			k.Coverage.Mean, k.NamedFraction, k.LabelsNamed}})
	}
	return plot.Bars(fmt.Sprintf("Disentanglement and coverage by unit kind (%s)", source), cats, groups,
		plot.AxisNames("metric", "mean (fraction)"),
		plot.Subtitle("means over units; ground-truth labels, no judge"))
}

// ThemesBars shows the mean number of themes per unit (↓ better) for each unit kind.
func ThemesBars(res *Result, source string) *charts.Bar {
	c := corpusOrEmpty(res, source)
	g := plot.BarGroup{Name: "themes per unit"}
	var cats []string
	for _, k := range c.Kinds {
		cats = append(cats, pair.KindName(k.Kind))
		g.Values = append(g.Values, k.NumThemes.Mean)
	}
	return plot.Bars(fmt.Sprintf("Number of themes per unit (%s)", source), cats, []plot.BarGroup{g},
		plot.AxisNames("unit kind", "themes per unit"),
		plot.Subtitle("labels with excess purity ≥ θ; lower is better"))
}

// MetricsTable lists the per-kind summaries with standard deviations.
func MetricsTable(res *Result, source string) *plot.Table {
	c := corpusOrEmpty(res, source)
	t := &plot.Table{Title: fmt.Sprintf("Unit metrics (%s, %d tokens, %d labels)", source, c.EvalTokens,
		len(c.LabelNames)), Header: []string{"unit kind", "units", "disentanglement", "coverage", "themes",
		"named units", "labels named", "concepts named"}}
	ms := naming.MeanSD.String
	for _, k := range c.Kinds {
		t.Rows = append(t.Rows, []string{pair.KindName(k.Kind), fmt.Sprint(k.Units), ms(k.Disentanglement), ms(k.Coverage),
			ms(k.NumThemes), fmt.Sprintf("%.2f", k.NamedFraction), fmt.Sprintf("%.2f", k.LabelsNamed),
			fmt.Sprintf("%.2f", k.ConceptsNamed)})
	}
	return t
}

// CoverageTable lists, per label, the unit of each kind named with it (highest purity), "—" when none.
func CoverageTable(res *Result, source string) *plot.Table {
	c := corpusOrEmpty(res, source)
	t := &plot.Table{Title: fmt.Sprintf("Named units per label (%s)", source), Header: []string{"label", "base rate"}}
	for _, k := range c.Kinds {
		t.Header = append(t.Header, pair.KindName(k.Kind))
	}
	for _, lc := range c.Coverage {
		row := []string{lc.Label, fmt.Sprintf("%.3f", lc.Base)}
		for i, u := range lc.Units {
			if u == "" {
				row = append(row, "—")
			} else {
				row = append(row, fmt.Sprintf("%s (%.2f)", u, lc.Purity[i]))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// InterventionHeatmap shows one sweep (InterveneWrite, InterveneRead or InterveneReinit) as ΔProb in percent,
// rows prototypes and columns targets, on a diverging scale centred on 0.
func InterventionHeatmap(res *Result, source, kind string) *charts.HeatMap {
	c := corpusOrEmpty(res, source)
	var rows, cols []string
	var values [][]float64
	if iv := c.Intervene; iv != nil {
		cols, rows = iv.Targets, iv.Prototypes
		for _, sw := range iv.Sweeps {
			if sw.Kind != kind {
				continue
			}
			values = append(values, scaled(sw.Prob, 100)...)
		}
	}
	if len(values) != len(rows) {
		rows = nil
	}
	return plot.Heatmap(fmt.Sprintf("Held-out ΔProb (%%) of each target word, %s mask of one prototype (%s)", kind,
		source), cols,
		rows, values, plot.Diverging(), plot.AxisNames("target", "prototype"), plot.ColorBar("ΔProb (%)"))
}

// scaled returns a copy of the matrix m with every entry multiplied by f.
func scaled(m [][]float64, f float64) [][]float64 {
	out := make([][]float64, len(m))
	for i, row := range m {
		out[i] = make([]float64, len(row))
		for j, x := range row {
			out[i][j] = f * x
		}
	}
	return out
}

// ClassLossHeatmap shows, for the write mask of each prototype, the held-out loss increase (millinats per
// position) over the positions of each class: the concept whose tokens it costs.
func ClassLossHeatmap(res *Result, source string) *charts.HeatMap {
	var rows, cols []string
	var values [][]float64
	if iv := corpusOrEmpty(res, source).Intervene; iv != nil && len(iv.Sweeps) > 0 {
		cols, rows, values = iv.Classes, iv.Prototypes, scaled(iv.Sweeps[0].ClassLoss, 1000)
	}
	if len(values) != len(rows) {
		rows = nil
	}
	return plot.Heatmap(fmt.Sprintf("Held-out loss increase (millinats per position) by target class, write mask of "+
		"one prototype (%s)", source), cols, rows, values, plot.Diverging(), plot.AxisNames("class of the target token",
		"prototype"), plot.ColorBar("Δloss (millinats/position)"))
}

// SelectivityTable lists pair.ClassSelectivity: per concept, the prototype costing its tokens most beyond what it costs
// the others, how much (as a probability factor), what it costs the other tokens, its perplexity change, and the
// concept's floor (the ΔProb within the bound of a mask that lowers the loss of no other position: a reference,
// not a bound).
func SelectivityTable(res *Result, source string) *plot.Table {
	t := &plot.Table{Title: fmt.Sprintf("The prototype whose write mask costs each concept's tokens most beyond the rest "+
		"(%s, held out)", source), Header: []string{"concept", "share of positions", "prototype",
		"loss on the concept (nats)", "its tokens' probability ×", "loss elsewhere (nats)", "ratio", "ΔPPL",
		"concept floor"}}
	for _, s := range pair.ClassSelectivity(corpusOrEmpty(res, source).Intervene) {
		ratio := "—"
		if s.Outside > 0 {
			ratio = fmt.Sprintf("%.0f×", s.Loss/s.Outside)
		}
		t.Rows = append(t.Rows, []string{s.Class, fmt.Sprintf("%.1f%%", 100*s.Share), s.Prototype,
			fmt.Sprintf("%.3f", s.Loss), fmt.Sprintf("%.2f", math.Exp(-s.Loss)), fmt.Sprintf("%.4f", s.Outside), ratio,
			pct(s.PPL), pct(s.Floor)})
	}
	t.Note = "concept floor: (1 + max ΔPPL)^(−1/share) − 1, the lowest ΔProb within the bound of a mask that lowers " +
		"the loss of no other position; masks that move probability to competing words are not bounded by it"
	return t
}

// InterventionTable lists per target its floor (pair.ProbFloor: a reference, not a bound), the spec §7.4 columns and
// the best, selective, named-set and control effects: prototypes selected on the calibration split, every effect
// measured on the held-out split; the in-sample column is the selection a search on the held-out split itself would
// make (optimistic reference).
func InterventionTable(res *Result, source string) *plot.Table {
	c := corpusOrEmpty(res, source)
	t := &plot.Table{Title: fmt.Sprintf("Interventions (%s): selected on calibration, measured held out", source),
		Header: []string{"target", "words (cal/held)", "p", "floor", "max ΔProb", "mean ΔProb", "max ΔPPL",
			"mean ΔPPL", "best", "write ΔProb/ΔPPL", "read ΔProb/ΔPPL", "reinit ΔProb/ΔPPL",
			"selective (cal ΔProb) ΔProb/ΔPPL", "in-sample ΔProb/ΔPPL", "named set ΔProb/ΔPPL", "control ΔProb", "pass"}}
	iv := c.Intervene
	if iv == nil {
		return t
	}
	t.Note = fmt.Sprintf("held-out perplexity %.3f on %d positions (calibration %d); neutral control %s (ΔPPL %s); "+
		"%d graph build(s); floor: the lowest ΔProb within the bound if the mask lowered no other position's loss "+
		"(doc.go), not a bound on a mask that moves probability to competing words", iv.BasePPL, iv.Tokens,
		iv.CalTokens, iv.Control, pct(iv.ControlPPL), iv.Builds)
	if e := ChooseSelective(iv); e != nil {
		t.Note += fmt.Sprintf("; the masking claim's pair (chosen on calibration): %s on %s, held out %s / %s",
			e.Selective, e.Target, pct(e.SelectiveProb), pct(e.SelectivePPL))
	}
	for _, e := range iv.Effects {
		pair := func(i int) string { return pct(e.BestProb[i]) + " / " + pct(e.BestPPL[i]) }
		sel, in := "—", "—"
		if e.Selective != "" {
			sel = fmt.Sprintf("%s (%s) %s / %s", e.Selective, pct(e.SelectiveCalProb), pct(e.SelectiveProb),
				pct(e.SelectivePPL))
		}
		if e.InSample != "" {
			in = fmt.Sprintf("%s %s / %s", e.InSample, pct(e.InSampleProb), pct(e.InSamplePPL))
		}
		named := "—"
		if len(e.Named) > 0 {
			named = fmt.Sprintf("%s: %s / %s", strings.Join(e.Named, ","), pct(e.NamedProb), pct(e.NamedPPL))
		}
		t.Rows = append(t.Rows, []string{e.Target, fmt.Sprintf("%d/%d", e.CalOccurrences, e.Occurrences),
			fmt.Sprintf("%.3f", e.BaseProb), pct(e.Floor), pct(e.MaxProb), pct(e.MeanProb), pct(e.MaxPPL),
			pct(e.MeanPPL), e.Best, pair(0), pair(1), pair(2), sel, in, named, pct(e.ControlProb), fmt.Sprint(e.Pass)})
	}
	return t
}

// ChecksTable lists the study's checks and timings.
func ChecksTable(res *Result) *plot.Table {
	t := &plot.Table{Title: "Checks", Header: []string{"pass", "claim", "value", "want"}}
	for _, c := range res.Checks {
		t.Rows = append(t.Rows, []string{fmt.Sprint(c.Pass), c.Name, fmt.Sprintf("%.4g", c.Value), c.Want})
	}
	t.Note = fmt.Sprintf("wall %.1f s, CPU %.1f s", res.WallSeconds, res.CPUSeconds)
	if len(res.Notes) > 0 {
		t.Note += "; " + strings.Join(res.Notes, "; ")
	}
	return t
}

// TopPrototype returns the prototype (layer, k) whose write label has the highest purity among the named ones
// (the first prototype when none is named), for showing its contexts.
func TopPrototype(res *Result, source string) (layer, k int) {
	best := -1.0
	for _, p := range corpusOrEmpty(res, source).Prototypes {
		if p.Write.Named && p.Write.Purity > best {
			best, layer, k = p.Write.Purity, p.Layer, p.K
		}
	}
	return layer, k
}

// Figures are the figures notebooks/11_protot_interpretability.ipynb shows from res, named for
// plot.ExportFigures (its tables are not figures): for each analysed corpus, the routing mass of the first and
// last layer, the prototype bars, the metric and theme bars, and, when the corpus ran interventions, the
// write-mask heatmap and the class-loss heatmap.
func Figures(res *Result) []plot.Figure {
	var figs []plot.Figure
	for _, c := range res.Corpora {
		src := c.Source
		last := 0
		for _, p := range c.Prototypes {
			last = max(last, p.Layer)
		}
		for _, l := range []int{0, last}[:min(2, last+1)] {
			figs = append(figs, plot.Figure{Name: fmt.Sprintf("interp_%s_routing_mass_layer%d", src, l),
				Chart: RoutingMassHeatmap(res, src, l)})
		}
		figs = append(figs,
			plot.Figure{Name: "interp_" + src + "_prototypes", Chart: PrototypeBars(res, src)},
			plot.Figure{Name: "interp_" + src + "_metrics", Chart: MetricBars(res, src)},
			plot.Figure{Name: "interp_" + src + "_themes", Chart: ThemesBars(res, src)})
		if c.Intervene != nil && len(c.Intervene.Sweeps) > 0 {
			figs = append(figs,
				plot.Figure{Name: "interp_" + src + "_write_mask", Chart: InterventionHeatmap(res, src, InterveneWrite)},
				plot.Figure{Name: "interp_" + src + "_class_loss", Chart: ClassLossHeatmap(res, src)})
		}
	}
	return figs
}
