package attribution

import (
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/plot"
	"github.com/protolab/protolab/workbench/run"
)

// SweepPoint is the prototype-space attribution of one PRISM model of the clustering-weight sweep (spec §8,
// "Conditioning sweep"): λ_1 = λ_2 = Weight.
type SweepPoint struct {
	Weight        float64            `json:"weight"`
	ValPerplexity float64            `json:"val_perplexity"`
	Conditions    prism.Conditioning `json:"conditioning"`
	// Overlaps holds Overlap@k with the reference of every cached method (the table in doc.go), by name.
	Overlaps map[string][]OverlapStat `json:"overlaps"`
	// PrismQueryMs is the cached method's median per-query latency.
	PrismQueryMs float64 `json:"prism_query_ms"`
}

// Sweep is the conditioning sweep of the attribution study.
type Sweep struct {
	Config Settings     `json:"config"` // cfg.Attribution without EK-FAC and LDS
	Points []SweepPoint `json:"points"`
}

// RunSweep trains (or loads) one PRISM model per clustering weight, with λ_1 = λ_2 set to it, and runs the
// prototype-space part of cfg.Attribution on each (one model on the study's first corpus, no EK-FAC, no LDS): κ of
// the blocks, the off-diagonal mass of C and the overlaps with the reference (spec §5, §8; the spec's weights are
// 0.01, 0.1 and 1). Each point is the study's result for its config, stored under run.Out like LoadOrRun's.
func RunSweep(cfg Config, weights []float64, opts ...run.Option) (*Sweep, error) {
	o := run.NewOptions(opts...)
	s := cfg.Attribution
	s.EKFAC, s.LDSSubsets, s.ModelSeeds = EKFACNone, 0, 1
	s.Corpora = cfg.sources()[:1]
	sw := &Sweep{Config: s}
	for _, w := range weights {
		if err := o.Err(); err != nil {
			return nil, err
		}
		c := cfg
		c.Attribution = s
		c.Prism.R1Weight, c.Prism.R2Weight = w, w
		if err := c.Validate(); err != nil {
			return nil, errors.WithMessagef(err, "%s: sweep weight %g", Study, w)
		}
		res, err := Runs.LoadOrRun(c, run.With(o))
		if err != nil {
			return nil, err
		}
		m := &res.Models[0]
		p := SweepPoint{Weight: w, Conditions: m.Conditions, Overlaps: map[string][]OverlapStat{},
			PrismQueryMs: m.Method(prism.MethodPrism).Latency.Median, ValPerplexity: m.ValPerplexity}
		for _, name := range prism.CachedMethods {
			p.Overlaps[name] = m.Method(name).Overlap
		}
		sw.Points = append(sw.Points, p)
	}
	return sw, nil
}

// SweepChart plots Overlap@k (the first k of the settings) with the reference against λ_1 = λ_2 for every cached
// method; the subtitle lists κ and the off-diagonal mass of C.
func SweepChart(s *Sweep) *charts.Line {
	x := make([]float64, len(s.Points))
	series := make([]plot.Series, len(prism.CachedMethods))
	for j, name := range prism.CachedMethods {
		series[j].Name = name
	}
	sub := ""
	for i, p := range s.Points {
		x[i] = p.Weight
		for j, name := range prism.CachedMethods {
			o := p.Overlaps[name]
			v := math.NaN()
			if len(o) > 0 {
				v = o[0].Mean
			}
			series[j].Y = append(series[j].Y, v)
		}
		sub += fmt.Sprintf("λ=%g: κ %.3g, off-diag C %.2f; ", p.Weight, p.Conditions.BlockCondMean,
			p.Conditions.OffDiagC)
	}
	k := 0
	if len(s.Config.OverlapK) > 0 {
		k = s.Config.OverlapK[0]
	}
	return plot.Lines(fmt.Sprintf("Overlap@%d with the reference vs clustering weight", k), x, series, plot.LogX(),
		plot.AxisNames("λ₁ = λ₂", fmt.Sprintf("Overlap@%d", k)), plot.Subtitle(sub))
}
