package attention

import "math"

// This file holds the slow float64 oracles, written from the equations in doc.go with plain loops over flat
// row-major slices. They share no code with the graph implementation.

// referenceMatMul returns x·w for x [N, K] and w [K, M] (row-major).
func referenceMatMul(x, w []float64, N, K, M int) []float64 {
	out := make([]float64, N*M)
	for n := 0; n < N; n++ {
		for m := 0; m < M; m++ {
			s := 0.0
			for k := 0; k < K; k++ {
				s += x[n*K+k] * w[k*M+m]
			}
			out[n*M+m] = s
		}
	}
	return out
}

// referenceRoPE rotates x [B, T, H, Dh] by equation (3); pos(b, t) gives the position of token t in row b.
func referenceRoPE(x []float64, B, T, H, Dh int, pos func(b, t int) int, base float64) []float64 {
	out := make([]float64, len(x))
	F := Dh / 2
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			for h := 0; h < H; h++ {
				row := ((b*T+t)*H + h) * Dh
				for i := 0; i < F; i++ {
					a := float64(pos(b, t)) * math.Pow(base, -2*float64(i)/float64(Dh))
					x1, x2 := x[row+i], x[row+F+i]
					out[row+i] = x1*math.Cos(a) - x2*math.Sin(a)
					out[row+F+i] = x2*math.Cos(a) + x1*math.Sin(a)
				}
			}
		}
	}
	return out
}

// referenceAttend computes equation (4)–(5) before the output projection: q [B, T, H, Dh], k and v
// [B, S, Hkv, Dh] → [B, T, H, Dh]. allowed(b, h, t, s) is the mask (nil: everything allowed).
func referenceAttend(q, k, v []float64, B, T, S, H, Hkv, Dh int, allowed func(b, h, t, s int) bool) []float64 {
	out := make([]float64, B*T*H*Dh)
	G := H / Hkv
	for b := 0; b < B; b++ {
		for h := 0; h < H; h++ {
			kh := h / G
			for t := 0; t < T; t++ {
				qRow := ((b*T+t)*H + h) * Dh
				logits := make([]float64, S)
				maxLogit := math.Inf(-1)
				for s := 0; s < S; s++ {
					if allowed != nil && !allowed(b, h, t, s) {
						continue
					}
					kRow := ((b*S+s)*Hkv + kh) * Dh
					dot := 0.0
					for d := 0; d < Dh; d++ {
						dot += q[qRow+d] * k[kRow+d]
					}
					logits[s] = dot / math.Sqrt(float64(Dh))
					maxLogit = math.Max(maxLogit, logits[s])
				}
				weights := make([]float64, S)
				sum := 0.0
				for s := 0; s < S; s++ {
					if allowed != nil && !allowed(b, h, t, s) {
						continue
					}
					weights[s] = math.Exp(logits[s] - maxLogit)
					sum += weights[s]
				}
				for s := 0; s < S; s++ {
					vRow := ((b*S+s)*Hkv + kh) * Dh
					for d := 0; d < Dh; d++ {
						out[qRow+d] += weights[s] / sum * v[vRow+d]
					}
				}
			}
		}
	}
	return out
}

// referenceMixer is the whole causal attention layer: x [B, T, D] with weights wq [D, H·Dh], wk, wv [D, Hkv·Dh],
// wo [H·Dh, D] → [B, T, D], positions 0…T−1.
func referenceMixer(x, wq, wk, wv, wo []float64, B, T, D, H, Hkv, Dh int, base float64) []float64 {
	q := referenceMatMul(x, wq, B*T, D, H*Dh)
	k := referenceMatMul(x, wk, B*T, D, Hkv*Dh)
	v := referenceMatMul(x, wv, B*T, D, Hkv*Dh)
	pos := func(_, t int) int { return t }
	q = referenceRoPE(q, B, T, H, Dh, pos, base)
	k = referenceRoPE(k, B, T, Hkv, Dh, pos, base)
	o := referenceAttend(q, k, v, B, T, T, H, Hkv, Dh, func(_, _, t, s int) bool { return s <= t })
	return referenceMatMul(o, wo, B*T, H*Dh, D)
}

// referenceAttendVJP returns the gradients of ⟨o, dO⟩ with respect to q [B, T, H, Dh], k and v [B, T, Hkv, Dh] for
// causal attention o (equations (4)–(5), S = T), by the chain rule through the softmax of each row:
// dv_s += A_ts·dO_t, dA_ts = ⟨dO_t, v_s⟩, dℓ_ts = A_ts·(dA_ts − Σ_r A_tr·dA_tr), dq_t += Σ_s dℓ_ts·k_s/√Dh and
// dk_s += dℓ_ts·q_t/√Dh.
func referenceAttendVJP(q, k, v, dO []float64, B, T, H, Hkv, Dh int) (dq, dk, dv []float64) {
	dq, dk, dv = make([]float64, len(q)), make([]float64, len(k)), make([]float64, len(v))
	G := H / Hkv
	scale := 1 / math.Sqrt(float64(Dh))
	for b := 0; b < B; b++ {
		for h := 0; h < H; h++ {
			kh := h / G
			for t := 0; t < T; t++ {
				qRow := ((b*T+t)*H + h) * Dh
				kRow := func(s int) int { return ((b*T+s)*Hkv + kh) * Dh }
				logits := make([]float64, t+1)
				maxLogit := math.Inf(-1)
				for s := 0; s <= t; s++ {
					for d := 0; d < Dh; d++ {
						logits[s] += q[qRow+d] * k[kRow(s)+d] * scale
					}
					maxLogit = math.Max(maxLogit, logits[s])
				}
				weights, sum := make([]float64, t+1), 0.0
				for s := range weights {
					weights[s] = math.Exp(logits[s] - maxLogit)
					sum += weights[s]
				}
				dA, dot := make([]float64, t+1), 0.0
				for s := range weights {
					weights[s] /= sum
					for d := 0; d < Dh; d++ {
						dA[s] += dO[qRow+d] * v[kRow(s)+d]
						dv[kRow(s)+d] += weights[s] * dO[qRow+d]
					}
					dot += weights[s] * dA[s]
				}
				for s := range weights {
					dl := weights[s] * (dA[s] - dot)
					for d := 0; d < Dh; d++ {
						dq[qRow+d] += dl * k[kRow(s)+d] * scale
						dk[kRow(s)+d] += dl * q[qRow+d] * scale
					}
				}
			}
		}
	}
	return dq, dk, dv
}
