package protot

import (
	"math"
)

// refLayer holds one layer's weights as flat row-major slices, in the layout of Params, for the plain-loop
// references below. writeMask and readMask are nil or [R] (entries ≤ 0 remove the prototype).
type refLayer struct {
	B, T, D, R, Dv, K int
	shared, conv      bool
	P, WV, WU, Wr     []float64 // [R, D], [D_v, D], [D, D_v], [D, D]
	gamma, convW      []float64 // [R], [D_v, K]
	tauW, tauR, alpha float64
	writeMask         []float64
	readMask          []float64
}

// refOut holds the reference's outputs, flat, with the shapes of Trace.
type refOut struct {
	y               []float64 // [B, T, D]
	wl, rl, pi, rho []float64 // [B, T, R]
	v, vc           []float64 // [B, T, D_v]
	num, M          []float64 // [B, T, R, D_v]
	den             []float64 // [B, T, R]
}

// maskedSoftmax is softmax over the entries with keep[k], 0 elsewhere, written out directly (no −1e30 trick).
func maskedSoftmax(a []float64, keep func(k int) bool) []float64 {
	out := make([]float64, len(a))
	m := math.Inf(-1)
	for k, x := range a {
		if keep(k) {
			m = math.Max(m, x)
		}
	}
	s := 0.0
	for k, x := range a {
		if keep(k) {
			out[k] = math.Exp(x - m)
			s += out[k]
		}
	}
	for k := range out {
		out[k] /= s
	}
	return out
}

// referenceMix is equations (1)–(5) of docs/spec/protot.md §2.3 as plain float64 loops, with num and den summed from
// their definition (no recurrence, no chunks). pad is nil or [B, T] (1 = pad). numerics selects the exact sums
// or the float32 emulation of the official code (referenceMemoryFloat32).
func referenceMix(x, pad []float64, L refLayer, numerics string) refOut {
	B, T, D, R, Dv := L.B, L.T, L.D, L.R, L.Dv
	o := refOut{
		y: make([]float64, B*T*D), wl: make([]float64, B*T*R), rl: make([]float64, B*T*R),
		pi: make([]float64, B*T*R), rho: make([]float64, B*T*R), v: make([]float64, B*T*Dv),
		vc: make([]float64, B*T*Dv), num: make([]float64, B*T*R*Dv), M: make([]float64, B*T*R*Dv),
		den: make([]float64, B*T*R),
	}
	kept := func(mask []float64) func(int) bool {
		return func(k int) bool { return mask == nil || mask[k] > 0 }
	}
	both := func(k int) bool { return kept(L.writeMask)(k) && kept(L.readMask)(k) }
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			xt := x[(b*T+t)*D : (b*T+t+1)*D]
			keep := 1.0
			if pad != nil {
				keep = 1 - pad[b*T+t]
			}
			aw := make([]float64, R)
			for k := 0; k < R; k++ {
				for d := 0; d < D; d++ {
					aw[k] += xt[d] * L.P[k*D+d]
				}
				aw[k] /= math.Abs(L.tauW) + 1e-6
			}
			pi := maskedSoftmax(aw, kept(L.writeMask))
			var ar, rho []float64
			if L.shared {
				ar = aw
				rho = maskedSoftmax(aw, both)
			} else {
				q := make([]float64, D)
				for e := 0; e < D; e++ {
					for d := 0; d < D; d++ {
						q[e] += L.Wr[e*D+d] * xt[d]
					}
				}
				ar = make([]float64, R)
				for k := 0; k < R; k++ {
					for e := 0; e < D; e++ {
						ar[k] += q[e] * L.P[k*D+e]
					}
					ar[k] /= math.Abs(L.tauR) + 1e-6
				}
				rho = maskedSoftmax(ar, kept(L.readMask))
			}
			for k := 0; k < R; k++ {
				i := (b*T+t)*R + k
				o.wl[i], o.rl[i], o.pi[i], o.rho[i] = aw[k], ar[k], pi[k]*keep, rho[k]*keep
			}
			for c := 0; c < Dv; c++ {
				s := 0.0
				for d := 0; d < D; d++ {
					s += L.WV[c*D+d] * xt[d]
				}
				o.v[(b*T+t)*Dv+c] = s * keep
			}
		}
		// (2b) the causal depthwise convolution over the pre-conv values of this sequence.
		for t := 0; t < T; t++ {
			for c := 0; c < Dv; c++ {
				v := o.v[(b*T+t)*Dv+c]
				if !L.conv {
					o.vc[(b*T+t)*Dv+c] = v
					continue
				}
				conv := 0.0
				for i := 0; i < L.K; i++ {
					if j := t - L.K + 1 + i; j >= 0 {
						conv += L.convW[c*L.K+i] * o.v[(b*T+j)*Dv+c]
					}
				}
				o.vc[(b*T+t)*Dv+c] = 0.5*v + 0.5*conv
			}
		}
	}
	if numerics == NumericsReference {
		o.num, o.den, o.M = referenceMemoryFloat32(o.pi, o.vc, L)
	} else {
		for b := 0; b < B; b++ {
			for k := 0; k < R; k++ {
				beta := 1 / (1 + math.Exp(-L.gamma[k]))
				oneMinus := 1 / (1 + math.Exp(L.gamma[k]))
				for t := 0; t < T; t++ {
					ti := (b*T+t)*R + k
					for j := 0; j < t; j++ {
						w := oneMinus * math.Pow(beta, float64(t-1-j)) * o.pi[(b*T+j)*R+k]
						o.den[ti] += w
						for c := 0; c < Dv; c++ {
							o.num[ti*Dv+c] += w * o.vc[(b*T+j)*Dv+c]
						}
					}
					for c := 0; c < Dv; c++ {
						o.M[ti*Dv+c] = o.num[ti*Dv+c] / math.Max(o.den[ti], 1e-6)
					}
				}
			}
		}
	}
	// (5) read and output.
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			read := make([]float64, Dv)
			for k := 0; k < R; k++ {
				ti := (b*T+t)*R + k
				for c := 0; c < Dv; c++ {
					read[c] += o.rho[ti] * o.M[ti*Dv+c]
				}
			}
			for d := 0; d < D; d++ {
				s := 0.0
				for c := 0; c < Dv; c++ {
					s += L.WU[d*Dv+c] * read[c]
				}
				o.y[(b*T+t)*D+d] = L.alpha * s
			}
		}
	}
	return o
}

// logistic32 is σ(x) rounded to float32 the way the pure-Go backend computes it.
func logistic32(x float32) float32 {
	if x >= 0 {
		return float32(1 / (1 + math.Exp(-float64(x))))
	}
	e := math.Exp(float64(x))
	return float32(e / (1 + e))
}

// referenceMemoryFloat32 emulates the official code's float32 prefix mean (docs/spec/protot.md §4.5) with one
// sequential running sum: p_j = β^j, w_j = (1−β)/(p_j + 1e−12), Ŝ[s] = Σ_{j ≤ s} w_j π_j v_j, num[t] = p_{t−1}·Ŝ[t−1],
// M = num / max(den, 1e−6), every operation rounded to float32. pi [B, T, R] and vc [B, T, D_v] are rounded to
// float32 first.
func referenceMemoryFloat32(pi, vc []float64, L refLayer) (num, den, M []float64) {
	B, T, R, Dv := L.B, L.T, L.R, L.Dv
	num, den, M = make([]float64, B*T*R*Dv), make([]float64, B*T*R), make([]float64, B*T*R*Dv)
	for b := 0; b < B; b++ {
		for k := 0; k < R; k++ {
			beta := logistic32(float32(L.gamma[k]))
			oneMinus := 1 - beta
			sn := make([]float32, Dv)
			var sd float32
			for t := 0; t < T; t++ {
				ti := (b*T+t)*R + k
				if t > 0 {
					p := float32(math.Pow(float64(beta), float64(t-1)))
					d := p * sd
					den[ti] = float64(d)
					for c := 0; c < Dv; c++ {
						n := p * sn[c]
						num[ti*Dv+c] = float64(n)
						M[ti*Dv+c] = float64(n / max(d, float32(1e-6)))
					}
				}
				w := oneMinus / (float32(math.Pow(float64(beta), float64(t))) + float32(1e-12))
				p := float32(pi[(b*T+t)*R+k])
				sd += w * p
				for c := 0; c < Dv; c++ {
					sn[c] += w * (p * float32(vc[(b*T+t)*Dv+c]))
				}
			}
		}
	}
	return num, den, M
}
