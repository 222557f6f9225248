package prism

import (
	"math"
	"slices"
	"sort"
)

// This file is the slow float64 oracle of the PRISM head and losses, written from docs/spec/prism.md §2.1 and §3 with
// plain loops (doc.go's equations 1–11), and of suppression (§10, equations 14–16) and the bank objective (§5,
// equation 17).

// refCase holds the inputs of one reference evaluation, flat row-major.
type refCase struct {
	B, T, D, K, V int
	h             []float64 // [B, T, D]
	bank          []float64 // [K, D]
	W             []float64 // [V, D]
	targets       []int     // [B, T]
	mask          []bool    // [B, T]; nil = all tokens
	allowed       []bool    // [K]; nil = all prototypes
}

// refOut is the reference decomposition and losses.
type refOut struct {
	scores  []float64 // [B, T, K]
	indices []int     // [B, T, k]
	acts    []float64 // [B, T, k]
	codes   []float64 // [B, T, K]
	recon   []float64 // [B, T, D]
	resid   []float64 // [B, T, D]
	logits  []float64 // [B, T, V]
	nearest []int     // [B, T]: argmax_j cos over the whole bank

	ce, rec, r1, r2, total float64
}

func dot(u, v []float64) float64 {
	s := 0.0
	for i := range u {
		s += u[i] * v[i]
	}
	return s
}

func norm(u []float64) float64 { return math.Sqrt(dot(u, u)) }

func refCos(u, v []float64) float64 { return dot(u, v) / (norm(u)*norm(v) + Eps) }

// refDist is dist of spec §3: 1 − cos, or ‖u − v‖².
func refDist(u, v []float64, kind string) float64 {
	if kind == DistSqL2 {
		s := 0.0
		for i := range u {
			s += (u[i] - v[i]) * (u[i] - v[i])
		}
		return s
	}
	return 1 - refCos(u, v)
}

// refCloseness orders (token, prototype) pairs for the minima: higher is nearer.
func refCloseness(z, p []float64, kind string) float64 {
	if kind == DistSqL2 {
		return -refDist(z, p, kind)
	}
	return refCos(z, p)
}

// referencePrism evaluates the head (equations 1–6) and the losses (7–11) of one case.
func referencePrism(c refCase, cfg Config) refOut {
	B, T, D, K, V, k := c.B, c.T, c.D, c.K, c.V, cfg.TopK
	N := B * T
	z := func(t int) []float64 { return c.h[t*D : (t+1)*D] }
	p := func(i int) []float64 { return c.bank[i*D : (i+1)*D] }
	w := func(v int) []float64 { return c.W[v*D : (v+1)*D] }
	o := refOut{
		scores: make([]float64, N*K), indices: make([]int, N*k), acts: make([]float64, N*k),
		codes: make([]float64, N*K), recon: make([]float64, N*D), resid: make([]float64, N*D),
		logits: make([]float64, N*V), nearest: make([]int, N),
	}
	for t := range N {
		for i := range K {
			o.scores[t*K+i] = refCos(z(t), p(i))
		}
		s := o.scores[t*K : (t+1)*K]
		// K_t: the k largest cosines among the allowed prototypes, ties to the lower index; then the disallowed
		// ones in the same order.
		order := make([]int, K)
		for i := range order {
			order[i] = i
		}
		ok := func(i int) bool { return c.allowed == nil || c.allowed[i] }
		sort.SliceStable(order, func(x, y int) bool {
			i, j := order[x], order[y]
			if ok(i) != ok(j) {
				return ok(i)
			}
			return s[i] > s[j]
		})
		o.nearest[t] = 0
		for i := range K {
			if s[i] > s[o.nearest[t]] {
				o.nearest[t] = i
			}
		}
		for j := range k {
			i := order[j]
			a := math.Max(s[i], 0)
			if cfg.ActivationScale == ScaleNorm {
				a *= norm(z(t)) / (norm(p(i)) + Eps)
			}
			if !ok(i) {
				a = 0
			}
			o.indices[t*k+j], o.acts[t*k+j], o.codes[t*K+i] = i, a, a
			for d := range D {
				o.recon[t*D+d] += a * p(i)[d]
			}
		}
		for d := range D {
			o.resid[t*D+d] = z(t)[d] - o.recon[t*D+d]
		}
		for v := range V {
			o.logits[t*V+v] = dot(w(v), z(t)) // l_t = W z_t
		}
	}

	// Losses over B_tok.
	valid := func(t int) bool { return c.mask == nil || c.mask[t] }
	nTok := 0.0
	for t := range N {
		if !valid(t) {
			continue
		}
		nTok++
		l := o.logits[t*V : (t+1)*V]
		mx := math.Inf(-1)
		for _, x := range l {
			mx = math.Max(mx, x)
		}
		se := 0.0
		for _, x := range l {
			se += math.Exp(x - mx)
		}
		o.ce += mx + math.Log(se) - l[c.targets[t]]
		r := o.resid[t*D : (t+1)*D]
		if cfg.RecNorm {
			o.rec += dot(r, r) / (dot(z(t), z(t)) + Eps)
		} else {
			o.rec += dot(r, r)
		}
		best := 0
		for j := range K {
			if refCloseness(z(t), p(j), cfg.Dist) > refCloseness(z(t), p(best), cfg.Dist) {
				best = j
			}
		}
		o.r2 += refDist(p(best), z(t), cfg.Dist)
	}
	nTok = math.Max(nTok, 1)
	o.ce /= nTok
	o.rec /= nTok
	o.r2 /= nTok
	for j := range K {
		var toks []int
		for t := range N {
			if valid(t) {
				toks = append(toks, t)
			}
		}
		sort.SliceStable(toks, func(x, y int) bool {
			return refCloseness(z(toks[x]), p(j), cfg.Dist) > refCloseness(z(toks[y]), p(j), cfg.Dist)
		})
		for _, t := range toks[:cfg.R1Nearest] {
			o.r1 += refDist(p(j), z(t), cfg.Dist) / float64(cfg.R1Nearest*K)
		}
	}
	o.total = o.ce + cfg.RecWeight*o.rec + cfg.R1Weight*o.r1 + cfg.R2Weight*o.r2
	return o
}

// referenceSuppressed is spec §10's suppressed logits (doc.go, equations 14–15) of a case for the set omega [K]:
// "zero" subtracts the slices a_{t,i}·W p_i of the selected i ∈ Ω from l_t = W z_t; "mask" selects the top-k among
// the prototypes outside Ω (referencePrism with c.allowed) and adds W(ẑ′_t − ẑ_t). → [B, T, V].
func referenceSuppressed(c refCase, cfg Config, omega []bool, mode string) []float64 {
	N, D, V, k := c.B*c.T, c.D, c.V, cfg.TopK
	o := referencePrism(c, cfg)
	w := func(v int) []float64 { return c.W[v*D : (v+1)*D] }
	out := slices.Clone(o.logits)
	switch mode {
	case SuppressZero:
		for t := range N {
			for j := range k {
				if i := o.indices[t*k+j]; omega[i] {
					for v := range V {
						out[t*V+v] -= o.acts[t*k+j] * dot(w(v), c.bank[i*D:(i+1)*D])
					}
				}
			}
		}
	case SuppressMask:
		masked := c
		masked.allowed = make([]bool, c.K)
		for i := range masked.allowed {
			masked.allowed[i] = !omega[i]
		}
		om := referencePrism(masked, cfg)
		for t := range N {
			delta := make([]float64, D) // ẑ′_t − ẑ_t
			for d := range D {
				delta[d] = om.recon[t*D+d] - o.recon[t*D+d]
			}
			for v := range V {
				out[t*V+v] += dot(w(v), delta)
			}
		}
	}
	return out
}

// referenceSuppressedActive is doc.go's equation 16: 1 where some selected i ∈ Ω has a_{t,i} > 0. → [B, T].
func referenceSuppressedActive(c refCase, cfg Config, omega []bool) []float64 {
	k := cfg.TopK
	o := referencePrism(c, cfg)
	out := make([]float64, c.B*c.T)
	for t := range out {
		for j := range k {
			if omega[o.indices[t*k+j]] && o.acts[t*k+j] > 0 {
				out[t] = 1
			}
		}
	}
	return out
}

// referenceBankObjective is spec §5's loss in the bank as sums over the tokens and prototypes (doc.go, equation 17):
// N·(L_CE + λ_rec·L_REC + λ_2·L_R2) + K·λ_1·L_R1 with the head's logits l_t = W z_t (r0 nil) or W(r0_t + ẑ_t).
func referenceBankObjective(c refCase, cfg Config, r0 []float64) float64 {
	N, D, V := c.B*c.T, c.D, c.V
	o := referencePrism(c, cfg)
	ce := o.ce
	if r0 != nil {
		ce = 0
		for t := range N {
			l := make([]float64, V)
			mx := math.Inf(-1)
			for v := range V {
				for d := range D {
					l[v] += c.W[v*D+d] * (r0[t*D+d] + o.recon[t*D+d])
				}
				mx = math.Max(mx, l[v])
			}
			se := 0.0
			for _, x := range l {
				se += math.Exp(x - mx)
			}
			ce += (mx + math.Log(se) - l[c.targets[t]]) / float64(N)
		}
	}
	n, K := float64(N), float64(c.K)
	return n*(ce+cfg.RecWeight*o.rec+cfg.R2Weight*o.r2) + K*cfg.R1Weight*o.r1
}
