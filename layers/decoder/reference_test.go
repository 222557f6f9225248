package decoder

import "math"

// This file holds the slow float64 oracles, written from the equations in doc.go and in layers/attention's
// doc.go with plain loops over flat row-major slices. They share no code with the graph implementation.

// refParams holds a model's weights by variable path ("/embed/embeddings", "/block_00/ffn/gate", …).
type refParams map[string][]float64

// refMatMul returns x·w for x [N, K], w [K, M].
func refMatMul(x, w []float64, N, K, M int) []float64 {
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

// referenceRMSNorm is equation (2) over rows of width D.
func referenceRMSNorm(x, gain []float64, D int, eps float64) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < len(x)/D; r++ {
		ss := 0.0
		for d := 0; d < D; d++ {
			ss += x[r*D+d] * x[r*D+d]
		}
		inv := 1 / math.Sqrt(ss/float64(D)+eps)
		for d := 0; d < D; d++ {
			out[r*D+d] = x[r*D+d] * inv * gain[d]
		}
	}
	return out
}

// referenceSwiGLU is equation (5) for N rows: x [N, D], gate and up [D, F], down [F, D].
func referenceSwiGLU(x, gate, up, down []float64, N, D, F int) []float64 {
	a := refMatMul(x, gate, N, D, F)
	b := refMatMul(x, up, N, D, F)
	for i := range a {
		a[i] = a[i] / (1 + math.Exp(-a[i])) * b[i]
	}
	return refMatMul(a, down, N, F, D)
}

// referenceAttention is causal multi-head attention with rotate-half RoPE at positions 0…T−1
// (layers/attention equations (1)–(5)): x [B, T, D] → [B, T, D].
func referenceAttention(x, wq, wk, wv, wo []float64, B, T, D, H, Hkv, Dh int, base float64) []float64 {
	q := refMatMul(x, wq, B*T, D, H*Dh)
	k := refMatMul(x, wk, B*T, D, Hkv*Dh)
	v := refMatMul(x, wv, B*T, D, Hkv*Dh)
	rope := func(u []float64, heads int) {
		F := Dh / 2
		for bt := 0; bt < B*T; bt++ {
			t := bt % T
			for h := 0; h < heads; h++ {
				row := (bt*heads + h) * Dh
				for i := 0; i < F; i++ {
					a := float64(t) * math.Pow(base, -2*float64(i)/float64(Dh))
					x1, x2 := u[row+i], u[row+F+i]
					u[row+i] = x1*math.Cos(a) - x2*math.Sin(a)
					u[row+F+i] = x2*math.Cos(a) + x1*math.Sin(a)
				}
			}
		}
	}
	rope(q, H)
	rope(k, Hkv)
	o := make([]float64, B*T*H*Dh)
	G := H / Hkv
	for b := 0; b < B; b++ {
		for h := 0; h < H; h++ {
			for t := 0; t < T; t++ {
				qRow := ((b*T+t)*H + h) * Dh
				w := make([]float64, t+1)
				maxLogit, sum := math.Inf(-1), 0.0
				for s := 0; s <= t; s++ {
					kRow := ((b*T+s)*Hkv + h/G) * Dh
					for d := 0; d < Dh; d++ {
						w[s] += q[qRow+d] * k[kRow+d]
					}
					w[s] /= math.Sqrt(float64(Dh))
					maxLogit = math.Max(maxLogit, w[s])
				}
				for s := range w {
					w[s] = math.Exp(w[s] - maxLogit)
					sum += w[s]
				}
				for s := range w {
					vRow := ((b*T+s)*Hkv + h/G) * Dh
					for d := 0; d < Dh; d++ {
						o[qRow+d] += w[s] / sum * v[vRow+d]
					}
				}
			}
		}
	}
	return refMatMul(o, wo, B*T, H*Dh, D)
}

// referenceBlock is equations (3)–(4) for block `prefix` (e.g. "/block_00") with the attention mixer:
// h [B, T, D] → [B, T, D].
func referenceBlock(p refParams, prefix string, cfg Config, h []float64, B, T int) []float64 {
	D, F := cfg.Width, cfg.FFNWidth()
	ac := cfg.Attention
	n := referenceRMSNorm(h, p[prefix+"/attn_norm/gain"], D, cfg.NormEpsilon)
	a := referenceAttention(n, p[prefix+"/attention/q"], p[prefix+"/attention/k"], p[prefix+"/attention/v"],
		p[prefix+"/attention/o"], B, T, D, ac.NumHeads, ac.KVHeads(), ac.HeadSize(D), ac.RoPEBase)
	u := make([]float64, len(h))
	for i := range h {
		u[i] = h[i] + a[i]
	}
	n = referenceRMSNorm(u, p[prefix+"/ffn_norm/gain"], D, cfg.NormEpsilon)
	f := referenceSwiGLU(n, p[prefix+"/ffn/gate"], p[prefix+"/ffn/up"], p[prefix+"/ffn/down"], B*T, D, F)
	for i := range u {
		u[i] += f[i]
	}
	return u
}

// referenceLogits is equations (1)–(6): tokens [B][T] → logits [B, T, V].
func referenceLogits(p refParams, cfg Config, tokens [][]int32) []float64 {
	B, T, D, V := len(tokens), len(tokens[0]), cfg.Width, cfg.VocabSize
	E := p["/embed/embeddings"]
	h := make([]float64, 0, B*T*D)
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			tok := int(tokens[b][t])
			h = append(h, E[tok*D:(tok+1)*D]...)
		}
	}
	for l := 0; l < cfg.NumLayers; l++ {
		h = referenceBlock(p, "/"+BlockScope(l), cfg, h, B, T)
	}
	h = referenceRMSNorm(h, p["/final_norm/gain"], D, cfg.NormEpsilon)
	W := E
	if !cfg.TieEmbeddings {
		W = p["/lm_head/weights"]
	}
	logits := make([]float64, B*T*V)
	for r := 0; r < B*T; r++ {
		for v := 0; v < V; v++ {
			for d := 0; d < D; d++ {
				logits[r*V+v] += h[r*D+d] * W[v*D+d]
			}
		}
	}
	return logits
}

// referenceCrossEntropy is equation (7) per token: logits [N, V], targets [N] → [N].
func referenceCrossEntropy(logits []float64, targets []int32, V int) []float64 {
	out := make([]float64, len(targets))
	for n, y := range targets {
		row := logits[n*V : (n+1)*V]
		m := math.Inf(-1)
		for _, z := range row {
			m = math.Max(m, z)
		}
		s := 0.0
		for _, z := range row {
			s += math.Exp(z - m)
		}
		out[n] = m + math.Log(s) - row[y]
	}
	return out
}
