package fvec

import (
	"fmt"
	"math"

	"github.com/protolab/protolab/layers/linattn"
)

// curve returns the curve of kind, or nil.
func curve(models []Curve, kind string) *Curve {
	for i := range models {
		if models[i].Kind == kind {
			return &models[i]
		}
	}
	return nil
}

// zscore is (a − b)/√(sa² + sb²); sb may be 0 for a theory value.
func zscore(a, sa, b, sb float64) float64 { return (a - b) / math.Sqrt(sa*sa+sb*sb) }

// logLinearFit fits log y = a + b·x by least squares and returns the slope b and R².
func logLinearFit(x []int, y []float64) (slope, r2 float64) {
	n := float64(len(x))
	var sx, sy, sxx, sxy, syy float64
	for i := range x {
		lx, ly := float64(x[i]), math.Log(y[i])
		sx, sy, sxx, sxy, syy = sx+lx, sy+ly, sxx+lx*lx, sxy+lx*ly, syy+ly*ly
	}
	cov, vx, vy := sxy-sx*sy/n, sxx-sx*sx/n, syy-sy*sy/n
	slope = cov / vx
	return slope, cov * cov / (vx * vy)
}

// checks evaluates the study's claims (the targets of the issue) on a result.
func checks(r *Result) []Check {
	var out []Check
	add := func(name string, value float64, pass bool, want string, args ...any) {
		out = append(out, Check{Name: name, Value: value, Want: fmt.Sprintf(want, args...), Pass: pass})
	}
	if t := r.Tree; t != nil {
		b, c := curve(t.Models, linattn.KindB), curve(t.Models, linattn.KindC)
		for _, kind := range []string{linattn.KindA, linattn.KindAPrime} {
			a := curve(t.Models, kind)
			if a == nil || len(a.M) < 2 {
				continue
			}
			name := modelName(kind)
			slope, r2 := logLinearFit(a.M, a.MSE)
			monotone := true
			for i := 1; i < len(a.MSE); i++ {
				monotone = monotone && a.MSE[i] < a.MSE[i-1]
			}
			alpha := t.Theory.Config.Prior.Alpha
			add(fmt.Sprintf("tree: %s's MSE per extra layer (exp of the log-linear slope)", name), math.Exp(slope),
				monotone && r2 >= 0.9, "monotone decrease and log-linear R² ≥ 0.9 (R² = %.3f); noise-free greedy "+
					"theory α² = %.3f", r2, alpha*alpha)
			if b != nil {
				i, j := len(a.M)-1, len(b.M)-1
				if a.M[i] == b.M[j] {
					ratio := b.MSE[j] / a.MSE[i]
					add(fmt.Sprintf("tree: MSE_B / MSE_%s at M = %d", name, a.M[i]), ratio, ratio >= 2, "≥ 2")
				}
			}
		}
		if c != nil {
			worst := 0.0
			for i, m := range c.M {
				z := zscore(c.MSE[i], c.StdErr[i], t.Theory.LMMSETokens[m-1], 0)
				if math.Abs(z) > math.Abs(worst) {
					worst = z
				}
			}
			add("tree: (MSE_C − LMMSE with per-node τ_n²)/s.e., worst M", worst, math.Abs(worst) <= 2, "|z| ≤ 2")
		}
		if t.Theory.Bound != nil {
			worst := math.Inf(1)
			for _, m := range t.Models {
				for i := range m.M {
					worst = math.Min(worst, zscore(m.MSE[i], m.StdErr[i], t.Theory.Bound.Mean, t.Theory.Bound.StdErr))
				}
			}
			add("tree: (MSE − unconstrained Bayes bound)/s.e., lowest model", worst, worst >= -2, "≥ −2 (no model "+
				"beats the full-data bound of §4.6)")
		}
	}
	if g := r.Gaussian; g != nil {
		a, b, c := curve(g.Models, linattn.KindA), curve(g.Models, linattn.KindB), curve(g.Models, linattn.KindC)
		D := g.Theory.Config.Dim
		if a != nil && b != nil {
			worst := 0.0
			for i := range a.M {
				if i < len(b.M) && b.M[i] == a.M[i] {
					z := zscore(a.MSE[i], a.StdErr[i], b.MSE[i], b.StdErr[i])
					if math.Abs(z) > math.Abs(worst) {
						worst = z
					}
				}
			}
			add("gaussian: (MSE_A − MSE_B)/s.e., worst M", worst, math.Abs(worst) <= 2, "|z| ≤ 2 (depth gives no "+
				"advantage)")
		}
		for _, m := range []*Curve{a, b} {
			if m == nil {
				continue
			}
			worst := math.Inf(-1)
			for i, v := range m.M {
				if v <= D {
					worst = math.Max(worst, zscore(m.MSE[i], m.StdErr[i], g.Theory.Optimal[v-1], 0))
				}
			}
			if !math.IsInf(worst, -1) {
				add(fmt.Sprintf("gaussian: (MSE_%s − optimal MSE)/s.e., worst M ≤ D", m.Kind), worst, worst <= 2,
					"≤ 2 (on or below the optimal curve at τ² = %.4f)", g.Theory.Tau2)
			}
		}
		if c != nil {
			worst := 0.0
			for i, v := range c.M {
				z := zscore(c.MSE[i], c.StdErr[i], g.Theory.LinearKey[v-1], 0)
				if math.Abs(z) > math.Abs(worst) {
					worst = z
				}
			}
			add("gaussian: (MSE_C − linear-key curve)/s.e., worst M", worst, math.Abs(worst) <= 2, "|z| ≤ 2 "+
				"(optimal curve up to M = D, flat beyond)")
		}
	}
	for i := range r.Patches {
		p := &r.Patches[i]
		var maxSame, maxDiff, layer1 float64
		for j := range p.Delta {
			for l := range p.Delta[j] {
				d := p.Delta[j][l]
				switch {
				case l == 0:
					layer1 = math.Max(layer1, math.Abs(d))
					maxSame = math.Max(maxSame, math.Abs(d))
				case j >= l:
					maxSame = math.Max(maxSame, math.Abs(d))
				default:
					maxDiff = math.Max(maxDiff, d)
				}
			}
		}
		name := modelName(p.Kind)
		add(fmt.Sprintf("patch %s: max |ΔMSE| at layer 1 (keys depend on x only)", name), layer1, layer1 == 0,
			"exactly 0")
		if maxDiff > 0 {
			ratio := maxSame / maxDiff
			add(fmt.Sprintf("patch %s: max |ΔMSE| for j ≥ ℓ over max ΔMSE for j < ℓ", name), ratio, ratio <= 0.1,
				"≤ 0.1 (a shared path prefix gives the same key)")
		}
	}
	return out
}
