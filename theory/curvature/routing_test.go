package curvature

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

// reconstruct returns ẑ = Σ_i ReLU(cos(z, p_i)) p_i over the prototypes idx of the bank P [K·D] (plain loops).
func reconstruct(P []float64, D int, idx []int, z []float64) []float64 {
	out := make([]float64, D)
	for _, i := range idx {
		p := P[i*D : (i+1)*D]
		c := 0.0
		for m := range p {
			c += p[m] * z[m]
		}
		c /= norm(p) * norm(z)
		if c > 0 {
			for m := range out {
				out[m] += c * p[m]
			}
		}
	}
	return out
}

// TestRoutedJacobian_MatchesFiniteDifferences checks equations 15 and 16 against central differences of ẑ.
func TestRoutedJacobian_MatchesFiniteDifferences(t *testing.T) {
	D := 3
	P := []float64{0.9, 0.2, -0.4, 0.3, 1.1, 0.5, -0.2, 0.4, 0.8}
	z := []float64{0.7, 0.6, 0.1}
	idx := []int{0, 2, 1}
	for _, i := range idx {
		J := RoutedJacobian(P[i*D:(i+1)*D], z)
		for c := 0; c < D; c++ {
			f := func(x float64) []float64 {
				Q := append([]float64(nil), P...)
				Q[i*D+c] += x
				return reconstruct(Q, D, idx, z)
			}
			const h = 1e-6
			plus, minus := f(h), f(-h)
			for r := 0; r < D; r++ {
				want := (plus[r] - minus[r]) / (2 * h)
				if math.Abs(J.At(r, c)-want) > 1e-8*(1+math.Abs(want)) {
					t.Fatalf("prototype %d: J[%d,%d] = %.10g, finite differences %.10g", i, r, c, J.At(r, c), want)
				}
			}
		}
	}
	// A prototype with a negative cosine contributes nothing and has a zero activation gradient.
	g := ActivationGrad([]float64{-1, 0, 0}, z)
	for _, v := range g {
		if v != 0 {
			t.Fatalf("ActivationGrad with a negative cosine = %v, want 0", g)
		}
	}
	gd := fd.Gradient(nil, func(p []float64) float64 {
		return math.Max(0, (p[0]*z[0]+p[1]*z[1]+p[2]*z[2])/(norm(p)*norm(z)))
	}, P[:3], &fd.Settings{Formula: fd.Central, Step: 1e-6})
	ga := ActivationGrad(P[:3], z)
	for m := range gd {
		if math.Abs(gd[m]-ga[m]) > 1e-8 {
			t.Fatalf("∇a = %v, finite differences %v", ga, gd)
		}
	}
}

// TestGaussNewtonRouted_ZeroResidualLossHessian checks equation 17: for L(P) = Σ_t ½ eᵀ M_t e with e = ẑ_t(P) −
// ẑ_t(P_0), the Hessian at P_0 (zero residual) is exactly the routed Gauss–Newton matrix.
func TestGaussNewtonRouted_ZeroResidualLossHessian(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	K, D := 3, 2
	P0 := make([]float64, K*D)
	for i := range P0 {
		P0[i] = 0.5 + rng.Float64()
	}
	zs := [][]float64{{1, 0.3}, {0.2, 1.4}, {0.8, 0.7}}
	idx := [][]int{{0, 2}, {1}, {2, 1}}
	ms := make([]*mat.SymDense, len(zs))
	for t := range ms {
		a := mat.NewDense(D, D, []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()})
		ms[t] = mat.NewSymDense(D, nil)
		ms[t].SymOuterK(1, a) // a aᵀ: symmetric positive semi-definite
	}
	target := make([][]float64, len(zs))
	for t := range zs {
		target[t] = reconstruct(P0, D, idx[t], zs[t])
	}
	loss := func(P []float64) float64 {
		L := 0.0
		for t := range zs {
			e := mat.NewVecDense(D, reconstruct(P, D, idx[t], zs[t]))
			e.SubVec(e, mat.NewVecDense(D, target[t]))
			L += 0.5 * mat.Inner(e, ms[t], e)
		}
		return L
	}
	want := centralHessian(loss, P0, 1e-4)
	codes := make([]Code, len(zs))
	jac := make([][]*mat.Dense, len(zs))
	for t := range zs {
		for _, i := range idx[t] {
			codes[t].Idx = append(codes[t].Idx, i)
			codes[t].Val = append(codes[t].Val, 1) // values are not used by GaussNewtonRouted
			jac[t] = append(jac[t], RoutedJacobian(P0[i*D:(i+1)*D], zs[t]))
		}
	}
	requireSym(t, "H_GN,routed", GaussNewtonRouted(K, codes, jac, ms), dense(want), 1e-6)
}
