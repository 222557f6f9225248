package prism

import (
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/protolab/protolab/workbench/plot"
)

// AttributionSweepPoint is the prototype-space attribution of one PRISM model of the clustering-weight sweep
// (spec §8, "Conditioning sweep"): λ_1 = λ_2 = Weight.
type AttributionSweepPoint struct {
	Weight        float64                 `json:"weight"`
	ValPerplexity float64                 `json:"val_perplexity"`
	Conditions    AttributionConditioning `json:"conditioning"`
	// Overlaps holds Overlap@k with the reference of every cached method (the table in attribution.go), by name.
	Overlaps map[string][]OverlapStat `json:"overlaps"`
	// PrismQueryMs is the cached method's median per-query latency.
	PrismQueryMs float64 `json:"prism_query_ms"`
}

// AttributionSweep is the conditioning sweep of the attribution study.
type AttributionSweep struct {
	Config AttributionConfig       `json:"config"`
	Points []AttributionSweepPoint `json:"points"`
}

// RunAttributionSweep trains (or loads) one PRISM model per weight of cfg.Curvature.Sweep, with λ_1 = λ_2 set to
// it, and runs the prototype-space part of cfg.Attribution on each (no EK-FAC, no LDS): κ of the blocks, the
// off-diagonal mass of C and the overlaps with the reference (spec §5, §8).
func RunAttributionSweep(cfg Config, opts ...Option) (*AttributionSweep, error) {
	ac := cfg.Attribution
	ac.EKFAC, ac.LDSSubsets = EKFACNone, 0
	sw := &AttributionSweep{Config: ac}
	for _, w := range cfg.Curvature.Sweep {
		c := cfg
		c.Prism.R1Weight, c.Prism.R2Weight = w, w
		res, err := RunAttributionWith(c, ac, opts...)
		if err != nil {
			return nil, err
		}
		p := AttributionSweepPoint{Weight: w, Conditions: res.Conditions, Overlaps: map[string][]OverlapStat{},
			PrismQueryMs: res.Method(MethodPrism).QueryMs}
		for _, name := range cachedMethods {
			p.Overlaps[name] = res.Method(name).Overlap
		}
		if m, err := LoadOrTrain(c, false, opts...); err == nil && m.Run != nil {
			p.ValPerplexity = m.Run.Val.Perplexity
		}
		sw.Points = append(sw.Points, p)
	}
	return sw, nil
}

// AttributionSweepChart plots Overlap@k (the first k of the config) with the reference against λ_1 = λ_2 for every
// cached method; the subtitle lists κ and the off-diagonal mass of C.
func AttributionSweepChart(s *AttributionSweep) *charts.Line {
	x := make([]float64, len(s.Points))
	series := make([]plot.Series, len(cachedMethods))
	for j, name := range cachedMethods {
		series[j].Name = name
	}
	sub := ""
	for i, p := range s.Points {
		x[i] = p.Weight
		for j, name := range cachedMethods {
			o := p.Overlaps[name]
			v := math.NaN()
			if len(o) > 0 {
				v = o[0].Mean
			}
			series[j].Y = append(series[j].Y, v)
		}
		sub += fmt.Sprintf("λ=%g: κ %.3g, off-diag C %.2f; ", p.Weight, p.Conditions.BlockCondMean, p.Conditions.OffDiagC)
	}
	k := 0
	if len(s.Config.TopK) > 0 {
		k = s.Config.TopK[0]
	}
	return plot.Lines(fmt.Sprintf("Overlap@%d with the reference vs clustering weight", k), x, series, plot.LogX(),
		plot.AxisNames("λ₁ = λ₂", fmt.Sprintf("Overlap@%d", k)), plot.Subtitle(sub))
}
