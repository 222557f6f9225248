package mamba

import "math"

// This file is the float64 oracle: plain loops written from the equations of doc.go (docs/spec/protot.md §9.3), one token
// at a time, sharing no code with the package.

// refParams holds a layer's weights as flat row-major slices, shapes as in Weights.
type refParams struct {
	in, convKernel, convBias, xProj, dtProj, dtBias, aLog, dSkip, out []float64
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

// referenceScan runs eq. (5)–(6) without the skip term, token by token: u, delta [B, T, d], a [d, N], b, c [B, T, N]
// → y [B, T, d].
func referenceScan(u, delta, a, b, c []float64, B, T, d, N int) []float64 {
	y := make([]float64, B*T*d)
	for bb := 0; bb < B; bb++ {
		h := make([]float64, d*N)
		for t := 0; t < T; t++ {
			r := bb*T + t
			for i := 0; i < d; i++ {
				s := 0.0
				for n := 0; n < N; n++ {
					h[i*N+n] = math.Exp(delta[r*d+i]*a[i*N+n])*h[i*N+n] + delta[r*d+i]*u[r*d+i]*b[r*N+n]
					s += h[i*N+n] * c[r*N+n]
				}
				y[r*d+i] = s
			}
		}
	}
	return y
}

// referenceMix computes the Mamba layer, eq. (1)–(7): x [B, T, D] → [B, T, D], with inner width d, state size N,
// conv length K and Δ rank R.
func referenceMix(x []float64, p refParams, B, T, D, d, N, K, R int) []float64 {
	matmul := func(a []float64, rows, inner int, w []float64, cols int) []float64 {
		out := make([]float64, rows*cols)
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				s := 0.0
				for i := 0; i < inner; i++ {
					s += a[r*inner+i] * w[i*cols+c]
				}
				out[r*cols+c] = s
			}
		}
		return out
	}
	xz := matmul(x, B*T, D, p.in, 2*d)
	xc := make([]float64, B*T*d) // SiLU(conv(x) + bias)
	for bb := 0; bb < B; bb++ {
		for t := 0; t < T; t++ {
			for i := 0; i < d; i++ {
				s := p.convBias[i]
				for j := 0; j < K; j++ {
					if src := t - K + 1 + j; src >= 0 {
						s += p.convKernel[i*K+j] * xz[(bb*T+src)*2*d+i]
					}
				}
				xc[(bb*T+t)*d+i] = s * sigmoid(s)
			}
		}
	}
	proj := matmul(xc, B*T, d, p.xProj, R+2*N)
	delta := make([]float64, B*T*d)
	b, c := make([]float64, B*T*N), make([]float64, B*T*N)
	for r := 0; r < B*T; r++ {
		for i := 0; i < d; i++ {
			s := p.dtBias[i]
			for k := 0; k < R; k++ {
				s += proj[r*(R+2*N)+k] * p.dtProj[k*d+i]
			}
			delta[r*d+i] = softplus(s)
		}
		for n := 0; n < N; n++ {
			b[r*N+n] = proj[r*(R+2*N)+R+n]
			c[r*N+n] = proj[r*(R+2*N)+R+N+n]
		}
	}
	a := make([]float64, d*N)
	for i := range a {
		a[i] = -math.Exp(p.aLog[i])
	}
	y := referenceScan(xc, delta, a, b, c, B, T, d, N)
	gated := make([]float64, B*T*d)
	for r := 0; r < B*T; r++ {
		for i := 0; i < d; i++ {
			z := xz[r*2*d+d+i]
			gated[r*d+i] = (y[r*d+i] + p.dSkip[i]*xc[r*d+i]) * z * sigmoid(z)
		}
	}
	return matmul(gated, B*T, d, p.out, D)
}
