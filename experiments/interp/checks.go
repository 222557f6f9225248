package interp

import (
	"fmt"
	"math"
)

// checks states the study's headline claims (the targets of the Small preset) with their measured values.
func checks(cfg Config, res *Result) []Check {
	var out []Check
	add := func(name string, value float64, want string, pass bool) {
		out = append(out, Check{Name: name, Value: value, Want: want, Pass: pass})
	}
	for _, cr := range res.Corpora {
		pi, heads, null := cr.Kind(KindProtoPi), cr.Kind(KindHeads), cr.Kind(KindNull)
		if pi != nil {
			add(cr.Source+": fraction of concepts with a named prototype (π)", pi.ConceptsNamed, "≥ 0.5",
				pi.ConceptsNamed >= 0.5)
			add(cr.Source+": fraction of concept values (labels) naming a prototype (π)", pi.LabelsNamed, "≥ 0.5",
				pi.LabelsNamed >= 0.5)
		}
		if pi != nil && heads != nil {
			d := pi.Disentanglement.Mean - heads.Disentanglement.Mean
			add(cr.Source+": disentanglement, prototypes (π) − heads", d, "> 0", d > 0)
			c := pi.Coverage.Mean - heads.Coverage.Mean
			add(cr.Source+": coverage, prototypes (π) − heads", c, "> 0", c > 0)
		}
		if pi != nil && null != nil {
			d := pi.Disentanglement.Mean - null.Disentanglement.Mean
			add(cr.Source+": disentanglement, prototypes (π) − null model", d, "> 0", d > 0)
		}
		if iv := cr.Intervene; iv != nil && len(iv.Targets) > 0 {
			f := float64(iv.Passed) / float64(len(iv.Targets))
			add(fmt.Sprintf("%s: targets whose prototype selected on the calibration split gives, held out, write "+
				"ΔProb ≤ −%.0f%% with |ΔPPL| < %.0f%%", cr.Source, 100*cfg.Intervene.MinProbDrop,
				100*cfg.Intervene.MaxPPLChange), f, "≥ 0.5", f >= 0.5)
			if e := BestSelective(iv, cfg.Intervene.MaxPPLChange); e != nil {
				add(fmt.Sprintf("%s: most negative held-out write ΔProb of a calibration-selected prototype with "+
					"held-out |ΔPPL| < %.0f%% (%s, %s)", cr.Source, 100*cfg.Intervene.MaxPPLChange, e.Target,
					e.Selective), e.SelectiveProb, fmt.Sprintf("≤ −%.2f", cfg.Intervene.MinProbDrop),
					e.SelectiveProb <= -cfg.Intervene.MinProbDrop)
			}
			add(cr.Source+": graph builds of the whole intervention sweep", float64(iv.Builds), "= 1", iv.Builds == 1)
		}
	}
	return out
}

// BestSelective returns the target effect whose calibration-selected prototype lowers its target most on the
// held-out split among those moving held-out perplexity by less than maxPPL, or nil.
func BestSelective(iv *Intervention, maxPPL float64) *TargetEffect {
	var best *TargetEffect
	for i := range iv.Effects {
		e := &iv.Effects[i]
		if e.Selective != "" && math.Abs(e.SelectivePPL) < maxPPL && (best == nil || e.SelectiveProb < best.SelectiveProb) {
			best = e
		}
	}
	return best
}
