package linattn

import "math"

// This file holds the slow float64 oracles, written from the equations in doc.go with plain loops over flat
// row-major slices. They share no code with the graph implementation.

// refAct is the activation of eq. (2).
func refAct(v float64, act string) float64 {
	if act == ReLU {
		return math.Max(v, 0)
	}
	return v * 0.5 * (1 + math.Erf(v/math.Sqrt2))
}

// refMLPW is an MLP of eq. (2): w1 [in, h], b1 [h], w2 [h, out], b2 [out].
type refMLPW struct {
	in, h, out     int
	w1, b1, w2, b2 []float64
}

func (w refMLPW) apply(u []float64, act string) []float64 {
	hid := make([]float64, w.h)
	for j := 0; j < w.h; j++ {
		s := w.b1[j]
		for i := 0; i < w.in; i++ {
			s += u[i] * w.w1[i*w.h+j]
		}
		hid[j] = refAct(s, act)
	}
	out := make([]float64, w.out)
	for o := 0; o < w.out; o++ {
		s := w.b2[o]
		for j := 0; j < w.h; j++ {
			s += hid[j] * w.w2[j*w.out+o]
		}
		out[o] = s
	}
	return out
}

// refPatch holds donor keys [B, N, M] and a mask [B, M] (nil: no patch).
type refPatch struct{ keys, mask []float64 }

// patched applies eq. (7) to key k of context b, token i, channel m.
func (p *refPatch) patched(k float64, b, i, m, N, M int) float64 {
	if p == nil {
		return k
	}
	w := p.mask[b*M+m]
	return k + w*(p.keys[(b*N+i)*M+m]-k)
}

// refOut is θ̂ [B, D_out], p [B, M], keys [B, N, M].
type refOut struct{ theta, p, keys []float64 }

// refForwardA is eqs. (3)–(4). layer ℓ's key MLP reads u = [x_i; p_{ℓ−1}] with first-layer weights [D+ℓ−1, H]
// (rows 0…D−1 act on x, the rest on p), written here as one concatenated input, as in the spec.
func refForwardA(x, y []float64, B, N, D int, keys []refMLPW, readout refMLPW, act string, gk, g float64,
	patch *refPatch) refOut {
	L := len(keys)
	out := refOut{p: make([]float64, B*L), keys: make([]float64, B*N*L)}
	for b := 0; b < B; b++ {
		var p []float64
		for l := 1; l <= L; l++ {
			phi := 0.0
			for i := 0; i < N; i++ {
				u := append([]float64{}, x[(b*N+i)*D:(b*N+i+1)*D]...)
				for _, v := range p {
					u = append(u, gk*v) // eq. (8)
				}
				k := keys[l-1].apply(u, act)[0]
				k = patch.patched(k, b, i, l-1, N, L)
				out.keys[(b*N+i)*L+l-1] = k
				phi += k * y[b*N+i]
			}
			p = append(p, phi/float64(N))
		}
		copy(out.p[b*L:], p)
		out.theta = append(out.theta, readout.apply(scaled(p, g), act)...)
	}
	return out
}

// refForwardB is eq. (5): heads[h] maps x_i ∈ R^D to a key.
func refForwardB(x, y []float64, B, N, D int, heads []refMLPW, readout refMLPW, act string, g float64,
	patch *refPatch) refOut {
	M := len(heads)
	out := refOut{p: make([]float64, B*M), keys: make([]float64, B*N*M)}
	for b := 0; b < B; b++ {
		for h := 0; h < M; h++ {
			phi := 0.0
			for i := 0; i < N; i++ {
				k := heads[h].apply(x[(b*N+i)*D:(b*N+i+1)*D], act)[0]
				k = patch.patched(k, b, i, h, N, M)
				out.keys[(b*N+i)*M+h] = k
				phi += k * y[b*N+i]
			}
			out.p[b*M+h] = phi / float64(N)
		}
		out.theta = append(out.theta, readout.apply(scaled(out.p[b*M:(b+1)*M], g), act)...)
	}
	return out
}

// refForwardC is eq. (6): wk [M, D], wo [D, M].
func refForwardC(x, y []float64, B, N, D, M int, wk, wo []float64, patch *refPatch) refOut {
	out := refOut{p: make([]float64, B*M), keys: make([]float64, B*N*M), theta: make([]float64, B*D)}
	for b := 0; b < B; b++ {
		for m := 0; m < M; m++ {
			phi := 0.0
			for i := 0; i < N; i++ {
				k := 0.0
				for d := 0; d < D; d++ {
					k += wk[m*D+d] * x[(b*N+i)*D+d]
				}
				k = patch.patched(k, b, i, m, N, M)
				out.keys[(b*N+i)*M+m] = k
				phi += k * y[b*N+i]
			}
			out.p[b*M+m] = phi / float64(N)
		}
		for d := 0; d < D; d++ {
			for m := 0; m < M; m++ {
				out.theta[b*D+d] += wo[d*M+m] * out.p[b*M+m]
			}
		}
	}
	return out
}

// scaled returns g·v.
func scaled(v []float64, g float64) []float64 {
	out := make([]float64, len(v))
	for i := range v {
		out[i] = g * v[i]
	}
	return out
}

// refForwardAPrime is eq. (9): layer 1's query is q1 [D]; layer ℓ's is queries[ℓ−2] applied to g·p_{ℓ−1}.
func refForwardAPrime(x, y []float64, B, N, D int, q1 []float64, queries []refMLPW, readout refMLPW, act string,
	g float64, patch *refPatch) refOut {
	L := len(queries) + 1
	out := refOut{p: make([]float64, B*L), keys: make([]float64, B*N*L)}
	for b := 0; b < B; b++ {
		var p []float64
		for l := 1; l <= L; l++ {
			q := q1
			if l > 1 {
				q = queries[l-2].apply(scaled(p, g), act)
			}
			phi := 0.0
			for i := 0; i < N; i++ {
				k := 0.0
				for d := 0; d < D; d++ {
					k += q[d] * x[(b*N+i)*D+d]
				}
				k = patch.patched(k, b, i, l-1, N, L)
				out.keys[(b*N+i)*L+l-1] = k
				phi += k * y[b*N+i]
			}
			p = append(p, phi/float64(N))
		}
		copy(out.p[b*L:], p)
		out.theta = append(out.theta, readout.apply(scaled(p, g), act)...)
	}
	return out
}
