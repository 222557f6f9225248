package influence

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/protolab/protolab/workbench/stats"
)

// Plain-loop float64 references, written from the equations of doc.go without gonum.

// refSolve solves M x = b by Gaussian elimination with partial pivoting (M [n, n] row-major, copied).
func refSolve(t testing.TB, m []float64, b []float64) []float64 {
	t.Helper()
	n := len(b)
	a := append([]float64(nil), m...)
	x := append([]float64(nil), b...)
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r*n+c]) > math.Abs(a[p*n+c]) {
				p = r
			}
		}
		if a[p*n+c] == 0 {
			t.Fatalf("refSolve: singular matrix at column %d", c)
		}
		for j := 0; j < n; j++ {
			a[c*n+j], a[p*n+j] = a[p*n+j], a[c*n+j]
		}
		x[c], x[p] = x[p], x[c]
		for r := c + 1; r < n; r++ {
			f := a[r*n+c] / a[c*n+c]
			for j := c; j < n; j++ {
				a[r*n+j] -= f * a[c*n+j]
			}
			x[r] -= f * x[c]
		}
	}
	for c := n - 1; c >= 0; c-- {
		s := x[c]
		for j := c + 1; j < n; j++ {
			s -= a[c*n+j] * x[j]
		}
		x[c] = s / a[c*n+c]
	}
	return x
}

// refOrthogonal returns a random orthogonal n×n matrix (Gram–Schmidt of a Gaussian matrix), columns orthonormal.
func refOrthogonal(rng *rand.Rand, n int) []float64 {
	q := make([]float64, n*n)
	for c := 0; c < n; c++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		for p := 0; p < c; p++ {
			d := 0.0
			for i := 0; i < n; i++ {
				d += v[i] * q[i*n+p]
			}
			for i := 0; i < n; i++ {
				v[i] -= d * q[i*n+p]
			}
		}
		norm := 0.0
		for _, x := range v {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		for i := 0; i < n; i++ {
			q[i*n+c] = v[i] / norm
		}
	}
	return q
}

// refFisher returns F = (1/N) Σ_n vec(G_n) vec(G_n)ᵀ with vec(G)[o·In + i] = G[o][i], each G [Out, In] row-major.
func refFisher(grads [][]float64) []float64 {
	n := len(grads[0])
	f := make([]float64, n*n)
	for _, g := range grads {
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				f[a*n+b] += g[a] * g[b] / float64(len(grads))
			}
		}
	}
	return f
}

// refSeqGrad returns Σ_t g_t a_tᵀ [out, in] by loops.
func refSeqGrad(a, g []float64, in, out int) []float64 {
	G := make([]float64, out*in)
	for t := 0; t < len(a)/in; t++ {
		for o := 0; o < out; o++ {
			for i := 0; i < in; i++ {
				G[o*in+i] += g[t*out+o] * a[t*in+i]
			}
		}
	}
	return G
}

// refKFAC returns A ⊗ S + λI in the vec(G)[o·In + i] layout: entry ((o,i),(o',i')) = A[i][i']·S[o][o'].
func refKFAC(A, S []float64, in, out int, lambda float64) []float64 {
	n := in * out
	m := make([]float64, n*n)
	for o := 0; o < out; o++ {
		for i := 0; i < in; i++ {
			for o2 := 0; o2 < out; o2++ {
				for i2 := 0; i2 < in; i2++ {
					m[(o*in+i)*n+o2*in+i2] = A[i*in+i2] * S[o*out+o2]
				}
			}
		}
	}
	for d := 0; d < n; d++ {
		m[d*n+d] += lambda
	}
	return m
}

// refPrototypeHessian returns H = C ⊗ S + E ⊗ I + λI over vec(X), X [D, K], in the row layout of KronSum
// (index j·D + d): entry ((j,d),(j',d')) = C[j][j']·S[d][d'] + E[j][j']·[d = d'] + λ·[(j,d) = (j',d')].
func refPrototypeHessian(C, E, S []float64, K, D int, lambda float64) []float64 {
	n := K * D
	h := make([]float64, n*n)
	for j := 0; j < K; j++ {
		for d := 0; d < D; d++ {
			for j2 := 0; j2 < K; j2++ {
				for d2 := 0; d2 < D; d2++ {
					v := C[j*K+j2] * S[d*D+d2]
					if d == d2 {
						v += E[j*K+j2]
					}
					h[(j*D+d)*n+j2*D+d2] = v
				}
			}
		}
	}
	for i := 0; i < n; i++ {
		h[i*n+i] += lambda
	}
	return h
}

// refColumns returns the dense G = Σ_t u_t a_tᵀ stored as K rows of D (row j = column g_j) from codes.
func refColumns(K, D, k int, idx []int32, acts, u []float64) []float64 {
	G := make([]float64, K*D)
	for t := 0; t < len(idx)/k; t++ {
		for i := 0; i < k; i++ {
			j := idx[t*k+i]
			for d := 0; d < D; d++ {
				G[int(j)*D+d] += acts[t*k+i] * u[t*D+d]
			}
		}
	}
	return G
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// refCodeGradient returns G = Σ_t w_t u_t a_tᵀ [D, K] by loops over the dense code a_t [K] (w nil: all 1).
func refCodeGradient(K, D, k int, idx []int32, acts, u, w []float64) []float64 {
	G := make([]float64, D*K)
	for t := 0; t < len(idx)/k; t++ {
		a := make([]float64, K)
		for i := 0; i < k; i++ {
			a[idx[t*k+i]] += acts[t*k+i]
		}
		wt := 1.0
		if w != nil {
			wt = w[t]
		}
		for d := 0; d < D; d++ {
			for j := 0; j < K; j++ {
				G[d*K+j] += wt * u[t*D+d] * a[j]
			}
		}
	}
	return G
}

// refPrismLogits returns the logits l_t = W r_t + W P a_t [V] of docs/spec/prism.md §5 (backbone and routing frozen), for
// W [V, D], r_t [D], P [D, K] and the dense code a_t built from idx, acts [k].
func refPrismLogits(W, r, P []float64, V, D, K int, idx []int32, acts []float64) []float64 {
	z := append([]float64(nil), r...) // r_t + P a_t
	for i, j := range idx {
		for d := 0; d < D; d++ {
			z[d] += P[d*K+int(j)] * acts[i]
		}
	}
	l := make([]float64, V)
	for v := 0; v < V; v++ {
		for d := 0; d < D; d++ {
			l[v] += W[v*D+d] * z[d]
		}
	}
	return l
}

// refPrismCELoss returns L(P) = Σ_t w_t CE(l_t(P), y_t), CE(l, y) = −log softmax(l)_y, the weighted cross-entropy
// whose gradient with respect to P is Σ_t w_t u_t a_tᵀ with u_t = Wᵀ(softmax(l_t) − e_{y_t}) (docs/spec/prism.md §5).
func refPrismCELoss(W, r, P []float64, V, D, K, k int, idx []int32, acts []float64, y []int, w []float64) float64 {
	L := 0.0
	for t := range y {
		l := refPrismLogits(W, r[t*D:(t+1)*D], P, V, D, K, idx[t*k:(t+1)*k], acts[t*k:(t+1)*k])
		L -= w[t] * math.Log(stats.Softmax(l)[y[t]])
	}
	return L
}
