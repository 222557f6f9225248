package fit

import "math"

// Slow, plain-loop float64 references written from the equations in doc.go.

// referenceLR is equation 1: the learning rate of the update that follows s completed updates.
func referenceLR(cfg Config, s int) float64 {
	lrMin := cfg.MinLRFrac * cfg.LR
	if s < cfg.WarmupSteps {
		return cfg.LR * float64(s+1) / float64(cfg.WarmupSteps)
	}
	span := float64(cfg.Steps - cfg.WarmupSteps)
	if span < 1 {
		span = 1
	}
	p := float64(s-cfg.WarmupSteps) / span
	if p > 1 {
		p = 1
	}
	return lrMin + 0.5*(cfg.LR-lrMin)*(1+math.Cos(math.Pi*p))
}

// referenceClip is equation 2: the global norm of grads and the clip factor min(1, c/‖g‖) (1 when c = 0).
func referenceClip(grads [][]float64, c float64) (norm, factor float64) {
	for _, g := range grads {
		for _, x := range g {
			norm += x * x
		}
	}
	norm = math.Sqrt(norm)
	factor = 1
	if c > 0 && norm > c {
		factor = c / norm
	}
	return norm, factor
}

// referenceAdamW is equation 3 for one tensor, at 1-based update t with learning rate lr. It returns new w, m, v.
func referenceAdamW(cfg Config, w, g, m, v []float64, lr float64, t int, decay bool) (w2, m2, v2 []float64) {
	n := len(w)
	w2, m2, v2 = make([]float64, n), make([]float64, n), make([]float64, n)
	c1 := 1 - math.Pow(cfg.Beta1, float64(t))
	c2 := 1 - math.Pow(cfg.Beta2, float64(t))
	for i := 0; i < n; i++ {
		m2[i] = cfg.Beta1*m[i] + (1-cfg.Beta1)*g[i]
		v2[i] = cfg.Beta2*v[i] + (1-cfg.Beta2)*g[i]*g[i]
		update := (m2[i] / c1) / (math.Sqrt(v2[i]/c2) + cfg.Eps)
		if decay {
			update += cfg.WeightDecay * w[i]
		}
		w2[i] = w[i] - lr*update
	}
	return w2, m2, v2
}
