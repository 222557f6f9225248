package icl

import (
	"math"

	"github.com/protolab/protolab/theory/prior"
)

// Vectors describes the function vectors (workspaces p_ℓ) of a model on a batch of tree-prior contexts.
type Vectors struct {
	// ProbeAccuracy[ℓ−1][k−1] is the held-out accuracy of a logistic-regression probe decoding bit b_k from
	// p_ℓ = (φ_1 … φ_ℓ) (spec §6 item 4): trained on the first half of the batch, tested on the second.
	ProbeAccuracy [][]float64 `json:"probe_accuracy"`
	// Centroids[ℓ−1][c] is the mean of φ_ℓ over contexts whose first ℓ bits, read as a binary number with b_1
	// most significant, equal c (0 if no context took that prefix): how the new statistic of layer ℓ depends on the
	// path so far.
	Centroids [][]float64 `json:"centroids"`
	// Workspace holds p_L of the first contexts (at most 500; [i][ℓ−1]) and Leaves their tree leaves.
	Workspace [][]float64 `json:"workspace"`
	Leaves    []int       `json:"leaves"`
}

// FunctionVectors probes the function vectors of m on b, contexts of the tree prior t (b.Leaves set).
func (m *Model) FunctionVectors(b *Batch, t prior.Tree) (Vectors, error) {
	L, K := m.Config.Measurements, t.Depth
	var v Vectors
	out, err := m.Evaluate(b, nil, nil)
	if err != nil {
		return v, err
	}
	E := b.B
	half := E / 2
	for l := 1; l <= L; l++ {
		feats := make([][]float64, E)
		for i := range feats {
			feats[i] = out.Workspace[i*L : i*L+l]
		}
		accs := make([]float64, K)
		for k := 1; k <= K; k++ {
			labels := make([]bool, E)
			for i := range labels {
				labels[i] = t.Bit(b.Leaves[i], k) == 1
			}
			w := fitLogistic(feats[:half], labels[:half])
			accs[k-1] = accuracy(w, feats[half:], labels[half:])
		}
		v.ProbeAccuracy = append(v.ProbeAccuracy, accs)
		sum, n := make([]float64, 1<<l), make([]float64, 1<<l)
		for i := 0; i < E; i++ {
			c := b.Leaves[i] >> (K - l) // the first l bits, b_1 most significant
			sum[c] += out.Workspace[i*L+l-1]
			n[c]++
		}
		for c := range sum {
			if n[c] > 0 {
				sum[c] /= n[c]
			}
		}
		v.Centroids = append(v.Centroids, sum)
	}
	for i := 0; i < min(E, 500); i++ {
		v.Workspace = append(v.Workspace, out.Workspace[i*L:(i+1)*L])
		v.Leaves = append(v.Leaves, b.Leaves[i])
	}
	return v, nil
}

// fitLogistic fits P(label) = σ(w₀ + Σ_j w_j·x_j) by Newton's method with a small ridge penalty (so separable data
// give finite weights); features are standardised inside. It returns [w₀, w_1 …] on the standardised features, with
// the means and scales appended so that accuracy can apply them.
func fitLogistic(x [][]float64, y []bool) []float64 {
	p := len(x[0])
	mu, sd := make([]float64, p), make([]float64, p)
	for _, r := range x {
		for j, v := range r {
			mu[j] += v
		}
	}
	for j := range mu {
		mu[j] /= float64(len(x))
	}
	for _, r := range x {
		for j, v := range r {
			sd[j] += (v - mu[j]) * (v - mu[j])
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j]/float64(len(x))) + 1e-12
	}
	z := func(r []float64, j int) float64 { // design column j (0 = intercept)
		if j == 0 {
			return 1
		}
		return (r[j-1] - mu[j-1]) / sd[j-1]
	}
	const ridge = 1e-3
	n := p + 1
	w := make([]float64, n)
	for iter := 0; iter < 30; iter++ {
		g := make([]float64, n)
		h := make([][]float64, n)
		for a := range h {
			h[a] = make([]float64, n)
			h[a][a] = ridge * float64(len(x))
			g[a] = ridge * float64(len(x)) * w[a]
		}
		for i, r := range x {
			eta := 0.0
			for j := 0; j < n; j++ {
				eta += w[j] * z(r, j)
			}
			pr := 1 / (1 + math.Exp(-eta))
			t := 0.0
			if y[i] {
				t = 1
			}
			for a := 0; a < n; a++ {
				za := z(r, a)
				g[a] += (pr - t) * za
				for b := 0; b < n; b++ {
					h[a][b] += pr * (1 - pr) * za * z(r, b)
				}
			}
		}
		step := solve(h, g)
		for a := range w {
			w[a] -= step[a]
		}
	}
	return append(append(w, mu...), sd...)
}

// accuracy is the fraction of rows whose predicted label (probability > ½) matches y, for weights from fitLogistic.
func accuracy(w []float64, x [][]float64, y []bool) float64 {
	p := len(x[0])
	mu, sd := w[p+1:2*p+1], w[2*p+1:]
	right := 0
	for i, r := range x {
		eta := w[0]
		for j, v := range r {
			eta += w[j+1] * (v - mu[j]) / sd[j]
		}
		if (eta > 0) == y[i] {
			right++
		}
	}
	return float64(right) / float64(len(x))
}

// solve returns h⁻¹g by Gaussian elimination with partial pivoting (h is small and positive definite).
func solve(h [][]float64, g []float64) []float64 {
	n := len(g)
	a := make([][]float64, n)
	for i := range a {
		a[i] = append(append([]float64{}, h[i]...), g[i])
	}
	for c := 0; c < n; c++ {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		a[c], a[piv] = a[piv], a[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k <= n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := a[r][n]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x
}
