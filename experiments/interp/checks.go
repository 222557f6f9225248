package interp

import (
	"fmt"
	"math"

	"github.com/protolab/protolab/models/pair"
)

// checks lists, for the first training seed, the study's design targets with their measured values and the
// invariant of the intervention sweep (one graph build). The comparisons with the papers are the Claims, over every
// seed.
func checks(cfg Config, res *Result) []Check {
	var out []Check
	add := func(name string, value float64, want string, pass bool) {
		out = append(out, Check{Name: name, Value: value, Want: want, Pass: pass})
	}
	for _, cr := range res.Corpora {
		pi, heads, null := cr.Kind(pair.KindProtoPi), cr.Kind(pair.KindHeads), cr.Kind(pair.KindNull)
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
			if v, e := MaskingEffect(iv); e != nil {
				add(fmt.Sprintf("%s: held-out write ΔProb of the (target, prototype) chosen on the calibration split "+
					"(%s, %s; 0 when its held-out |ΔPPL| ≥ %.0f%%)", cr.Source, e.Target, e.Selective,
					100*cfg.Intervene.MaxPPLChange), v, fmt.Sprintf("≤ −%.2f", cfg.Intervene.MinProbDrop),
					v <= -cfg.Intervene.MinProbDrop)
			}
			add(cr.Source+": graph builds of the whole intervention sweep", float64(iv.Builds), "= 1", iv.Builds == 1)
		}
	}
	return out
}

// ChooseSelective returns the target effect whose selective prototype lowers its target most on the calibration
// split (the most negative SelectiveCalProb; ties: the earlier target), or nil when no target has a selective
// prototype: the (target, prototype) pair of the masking claim, chosen without looking at the held-out split.
func ChooseSelective(iv *pair.Intervention) *pair.TargetEffect {
	var best *pair.TargetEffect
	for i := range iv.Effects {
		e := &iv.Effects[i]
		if e.Selective != "" && (best == nil || e.SelectiveCalProb < best.SelectiveCalProb) {
			best = e
		}
	}
	return best
}

// MaskingEffect returns the masking claim's value for one training seed (doc.go, "Claims"): the held-out write
// ΔProb of ChooseSelective's pair, or 0 when there is no such pair or its held-out |ΔPPL| is not below
// iv.MaxPPLChange (its mask is then not selective on the evaluation text); and the pair (nil when none).
func MaskingEffect(iv *pair.Intervention) (float64, *pair.TargetEffect) {
	e := ChooseSelective(iv)
	if e == nil || !(math.Abs(e.SelectivePPL) < iv.MaxPPLChange) {
		return 0, e
	}
	return e.SelectiveProb, e
}
