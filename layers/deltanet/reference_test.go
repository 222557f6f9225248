package deltanet

import "math"

// This file is the float64 oracle: plain loops written from the equations of doc.go (docs/spec/protot.md §9.2), one token
// at a time, sharing no code with the package.

// refParams holds a layer's weights as flat row-major slices, shapes as in Weights.
type refParams struct {
	q, k, v, qConv, kConv, vConv, beta, outNorm, out []float64
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// referenceDeltaRule runs eq. (5) token by token in its product form, S_t = (I − β_t k_t k_tᵀ) S_{t−1} + β_t k_t v_tᵀ
// (the package uses the u_t form of eq. 4, so parity also checks that the two forms agree): q, k [B, T, H, dk],
// v [B, T, H, dv], beta [B, T, H] → o [B, T, H, dv] with o_t = S_tᵀ q_t.
func referenceDeltaRule(q, k, v, beta []float64, B, T, H, dk, dv int) []float64 {
	o := make([]float64, B*T*H*dv)
	for b := 0; b < B; b++ {
		for h := 0; h < H; h++ {
			S := make([]float64, dk*dv) // S[i][j], i over d_k
			for t := 0; t < T; t++ {
				kt := k[((b*T+t)*H+h)*dk:][:dk]
				qt := q[((b*T+t)*H+h)*dk:][:dk]
				vt := v[((b*T+t)*H+h)*dv:][:dv]
				bt := beta[(b*T+t)*H+h]
				next := make([]float64, dk*dv)
				for i := 0; i < dk; i++ {
					for j := 0; j < dv; j++ {
						s := bt * kt[i] * vt[j]
						for l := 0; l < dk; l++ {
							m := -bt * kt[i] * kt[l] // (I − β k kᵀ)[i][l]
							if l == i {
								m++
							}
							s += m * S[l*dv+j]
						}
						next[i*dv+j] = s
					}
				}
				S = next
				for j := 0; j < dv; j++ {
					s := 0.0
					for i := 0; i < dk; i++ {
						s += S[i*dv+j] * qt[i]
					}
					o[((b*T+t)*H+h)*dv+j] = s
				}
			}
		}
	}
	return o
}

// referenceMix computes the DeltaNet layer, eq. (1)–(11): x [B, T, D] → [B, T, D], with H heads of width d and
// ShortConv length K.
func referenceMix(x []float64, p refParams, B, T, D, H, d, K int, eps float64) []float64 {
	E := H * d
	project := func(w []float64, cols int) []float64 { // x·w: [B·T, cols]
		out := make([]float64, B*T*cols)
		for r := 0; r < B*T; r++ {
			for c := 0; c < cols; c++ {
				s := 0.0
				for i := 0; i < D; i++ {
					s += x[r*D+i] * w[i*cols+c]
				}
				out[r*cols+c] = s
			}
		}
		return out
	}
	convAct := func(pre, kernel []float64) []float64 { // SiLU(ShortConv(pre)): [B, T, E]
		out := make([]float64, B*T*E)
		for b := 0; b < B; b++ {
			for t := 0; t < T; t++ {
				for e := 0; e < E; e++ {
					s := 0.0
					for i := 0; i < K; i++ {
						if src := t - K + 1 + i; src >= 0 {
							s += kernel[e*K+i] * pre[(b*T+src)*E+e]
						}
					}
					out[(b*T+t)*E+e] = s * sigmoid(s)
				}
			}
		}
		return out
	}
	q := convAct(project(p.q, E), p.qConv)
	k := convAct(project(p.k, E), p.kConv)
	v := convAct(project(p.v, E), p.vConv)
	for i := 0; i < B*T*H; i++ { // L2-normalise q and k per head; scale q by d^(−1/2)
		for _, a := range [][]float64{q, k} {
			n := 0.0
			for j := 0; j < d; j++ {
				n += a[i*d+j] * a[i*d+j]
			}
			n = math.Sqrt(n + 1e-6)
			for j := 0; j < d; j++ {
				a[i*d+j] /= n
			}
		}
		for j := 0; j < d; j++ {
			q[i*d+j] /= math.Sqrt(float64(d))
		}
	}
	beta := project(p.beta, H)
	for i := range beta {
		beta[i] = sigmoid(beta[i])
	}
	o := referenceDeltaRule(q, k, v, beta, B, T, H, d, d)
	for i := 0; i < B*T*H; i++ { // per-head RMSNorm
		ms := 0.0
		for j := 0; j < d; j++ {
			ms += o[i*d+j] * o[i*d+j] / float64(d)
		}
		r := math.Sqrt(ms + eps)
		for j := 0; j < d; j++ {
			o[i*d+j] = o[i*d+j] / r * p.outNorm[j]
		}
	}
	y := make([]float64, B*T*D)
	for r := 0; r < B*T; r++ {
		for c := 0; c < D; c++ {
			s := 0.0
			for e := 0; e < E; e++ {
				s += o[r*E+e] * p.out[e*D+c]
			}
			y[r*D+c] = s
		}
	}
	return y
}
