package curvature

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

// toy is a tiny closed-form PRISM objective in prototype space (doc.go, the sum form under equation 8), with the
// routing a_t, the REC weights and the nearest-neighbour assignments frozen:
//
//	L(P) = Σ_t CE(W r_t + W P a_t, y_t) + λ_rec Σ_t w_t ‖z_t − P a_t‖² + λ_1 Σ_j ‖p_j − z_{t(j)}‖² + λ_2 Σ_t ‖z_t − p_{j(t)}‖²
//
// Awkward sizes: K = 3, D = 2, V = 5, N = 4.
type toy struct {
	K, D, V            int
	W                  *mat.Dense
	r, z               [][]float64
	y                  []int
	codes              []Code
	w                  []float64
	protoTok, tokProto []int // t(j), j(t)
	lRec, l1, l2       float64
}

func newToy(seed uint64) toy {
	rng := rand.New(rand.NewPCG(seed, 7))
	K, D, V := 3, 2, 5
	tt := toy{K: K, D: D, V: V, W: mat.NewDense(V, D, nil), y: []int{0, 3, 4, 1},
		codes: []Code{{Idx: []int{0, 2}, Val: []float64{0.7, 0.4}}, {Idx: []int{1}, Val: []float64{0.9}},
			{Idx: []int{2, 1}, Val: []float64{0.5, 0.3}}, {Idx: []int{0, 1}, Val: []float64{0.2, 0.6}}},
		protoTok: []int{0, 1, 3}, tokProto: []int{0, 1, 2, 1}, lRec: 0.3, l1: 0.2, l2: 0.7}
	for v := 0; v < V; v++ {
		for m := 0; m < D; m++ {
			tt.W.Set(v, m, rng.NormFloat64())
		}
	}
	for range tt.y {
		tt.r = append(tt.r, []float64{rng.NormFloat64(), rng.NormFloat64()})
		tt.z = append(tt.z, []float64{rng.NormFloat64() + 1, rng.NormFloat64()})
	}
	tt.w = RecWeights(tt.z)
	return tt
}

// loss evaluates L at vec(P) (p_j = P[j·D : (j+1)·D]) with plain loops.
func (tt toy) loss(P []float64) float64 {
	K, D, V := tt.K, tt.D, tt.V
	_ = K
	L := 0.0
	for t := range tt.y {
		zhat := make([]float64, D)
		for x, j := range tt.codes[t].Idx {
			for m := 0; m < D; m++ {
				zhat[m] += tt.codes[t].Val[x] * P[j*D+m]
			}
		}
		logits := make([]float64, V)
		mx := math.Inf(-1)
		for v := 0; v < V; v++ {
			for m := 0; m < D; m++ {
				logits[v] += tt.W.At(v, m) * (tt.r[t][m] + zhat[m])
			}
			mx = math.Max(mx, logits[v])
		}
		lse := 0.0
		for v := 0; v < V; v++ {
			lse += math.Exp(logits[v] - mx)
		}
		L += math.Log(lse) + mx - logits[tt.y[t]]
		for m := 0; m < D; m++ {
			d := tt.z[t][m] - zhat[m]
			L += tt.lRec * tt.w[t] * d * d
			e := tt.z[t][m] - P[tt.tokProto[t]*D+m]
			L += tt.l2 * e * e
		}
	}
	for j, t := range tt.protoTok {
		for m := 0; m < D; m++ {
			d := P[j*D+m] - tt.z[t][m]
			L += tt.l1 * d * d
		}
	}
	return L
}

// analytic returns the Hessian of the toy from the package: H_GN (with G_t at P) + 2λ_rec C_rec ⊗ I + diag(δ) ⊗ I.
func (tt toy) analytic(P []float64) *mat.SymDense {
	gs := make([]*mat.SymDense, len(tt.y))
	for t := range tt.y {
		x := append([]float64(nil), tt.r[t]...)
		for k, j := range tt.codes[t].Idx {
			for m := 0; m < tt.D; m++ {
				x[m] += tt.codes[t].Val[k] * P[j*tt.D+m]
			}
		}
		gs[t] = OutputCurvature(tt.W, Softmax(Logits(tt.W, x)))
	}
	h := GaussNewton(tt.K, tt.codes, gs)
	delta := ClusterDiag(tt.K, tt.l1, tt.l2, tt.tokProto)
	h.AddSym(h, Isotropic(CoUsage(tt.K, tt.codes, tt.w), tt.lRec, delta, tt.D))
	return h
}

// centralHessian is the central finite-difference Hessian, H_ij ≈ [f(x+he_i+he_j) − f(x+he_i−he_j) − f(x−he_i+he_j)
// + f(x−he_i−he_j)]/(4h²), with O(h²) error (gonum's fd.Hessian is first order).
func centralHessian(f func([]float64) float64, x []float64, h float64) *mat.SymDense {
	n := len(x)
	out := mat.NewSymDense(n, nil)
	at := func(i int, si float64, j int, sj float64) float64 {
		y := append([]float64(nil), x...)
		y[i] += si * h
		y[j] += sj * h
		return f(y)
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			out.SetSym(i, j, (at(i, 1, j, 1)-at(i, 1, j, -1)-at(i, -1, j, 1)+at(i, -1, j, -1))/(4*h*h))
		}
	}
	return out
}

func randomBank(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 11))
	P := make([]float64, n)
	for i := range P {
		P[i] = rng.NormFloat64()
	}
	return P
}

// TestGaussNewtonPlusIsotropic_MatchesFiniteDifferenceHessian checks equations 1, 3, 4, 7 and the isotropic part of 8
// against a central finite-difference Hessian of the closed-form toy loss (exact for frozen routing).
func TestGaussNewtonPlusIsotropic_MatchesFiniteDifferenceHessian(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		tt := newToy(seed)
		P := randomBank(seed, tt.K*tt.D)
		want := centralHessian(tt.loss, P, 1e-4)
		got := tt.analytic(P)
		n := tt.K * tt.D
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if w, g := want.At(i, j), got.At(i, j); math.Abs(g-w) > 1e-5*(1+math.Abs(w)) {
					t.Fatalf("seed %d: H[%d,%d] = %.9g, finite differences %.9g", seed, i, j, g, w)
				}
			}
		}
	}
}

// TestOutputGradient_MatchesFiniteDifferences checks equation 2 against the gradient of −log softmax(W x)[y].
func TestOutputGradient_MatchesFiniteDifferences(t *testing.T) {
	tt := newToy(5)
	x := []float64{0.3, -1.1}
	for y := 0; y < tt.V; y++ {
		f := func(x []float64) float64 {
			l := Logits(tt.W, x)
			pi := Softmax(l)
			return -math.Log(pi[y])
		}
		want := fd.Gradient(nil, f, x, &fd.Settings{Formula: fd.Central, Step: 1e-6})
		got := OutputGradient(tt.W, Softmax(Logits(tt.W, x)), y)
		for m := range want {
			if math.Abs(got[m]-want[m]) > 1e-7*(1+math.Abs(want[m])) {
				t.Fatalf("y=%d: u[%d] = %.9g, finite differences %.9g", y, m, got[m], want[m])
			}
		}
	}
}

// TestCosineDistHessian_MatchesFiniteDifferences checks equation 10, and its parallel limit (I − q qᵀ)/‖p‖².
func TestCosineDistHessian_MatchesFiniteDifferences(t *testing.T) {
	p, z := []float64{0.8, -0.3, 1.7}, []float64{-0.2, 0.9, 1.1}
	f := func(p []float64) float64 {
		return 1 - (p[0]*z[0]+p[1]*z[1]+p[2]*z[2])/(norm(p)*norm(z))
	}
	want := centralHessian(f, p, 1e-4)
	got := CosineDistHessian(p, z)
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			if math.Abs(got.At(i, j)-want.At(i, j)) > 1e-6*(1+math.Abs(want.At(i, j))) {
				t.Fatalf("H[%d,%d] = %.9g, finite differences %.9g", i, j, got.At(i, j), want.At(i, j))
			}
		}
	}
	par := CosineDistHessian(p, []float64{2 * p[0], 2 * p[1], 2 * p[2]})
	np2 := p[0]*p[0] + p[1]*p[1] + p[2]*p[2]
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			w := -p[i] * p[j] / np2 / np2
			if i == j {
				w += 1 / np2
			}
			if math.Abs(par.At(i, j)-w) > 1e-12 {
				t.Fatalf("parallel H[%d,%d] = %.15g, want (I − qqᵀ)/‖p‖² = %.15g", i, j, par.At(i, j), w)
			}
		}
	}
}
