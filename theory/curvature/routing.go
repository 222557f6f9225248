package curvature

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// ActivationGrad returns ∇_p a for the cosine activation a = ReLU(cos(z, p)) (equation 15 of doc.go): with
// q = p/‖p‖, w = z/‖z‖ and c = ⟨q, w⟩ > 0 it is (w − c q)/‖p‖; it is zero when c ≤ 0. ε of the cosine is ignored.
// Panics if the lengths differ or p or z is zero.
func ActivationGrad(p, z []float64) []float64 {
	D := len(p)
	if len(z) != D {
		panic(fmt.Sprintf("curvature.ActivationGrad: len(p)=%d, len(z)=%d", len(p), len(z)))
	}
	np, nz := norm(p), norm(z)
	if np == 0 || nz == 0 {
		panic("curvature.ActivationGrad: p and z must be non-zero")
	}
	c := 0.0
	for m := range p {
		c += p[m] * z[m]
	}
	c /= np * nz
	out := make([]float64, D)
	if c <= 0 {
		return out
	}
	for m := range out {
		out[m] = (z[m]/nz - c*p[m]/np) / np
	}
	return out
}

// RoutedJacobian returns J = ∂ẑ/∂p_i = a_i I + p_i (∇_{p_i} a_i)ᵀ [D, D] (equation 16) for the reconstruction
// ẑ = Σ_i a_i p_i with cosine activations, at prototype p_i and hidden state z. Panics like ActivationGrad.
func RoutedJacobian(p, z []float64) *mat.Dense {
	g := ActivationGrad(p, z)
	D := len(p)
	a := 0.0
	for m := range p {
		a += p[m] * z[m]
	}
	a /= norm(p) * norm(z)
	if a < 0 {
		a = 0
	}
	J := mat.NewDense(D, D, nil)
	for r := 0; r < D; r++ {
		for c := 0; c < D; c++ {
			v := p[r] * g[c]
			if r == c {
				v += a
			}
			J.Set(r, c, v)
		}
	}
	return J
}

// GaussNewtonRouted returns Σ_t Σ_{i,j ∈ K_t} blocks (i, j) += J_{t,i}ᵀ M_t J_{t,j} [KD, KD] (equation 17): the
// Gauss–Newton matrix of a loss of the reconstructions ẑ_t(P) with curvature M_t [D, D] in ẑ-space, with the
// routing's dependence on P included through the Jacobians jac[t][x] of prototype codes[t].Idx[x] (RoutedJacobian).
// Panics on a size mismatch.
func GaussNewtonRouted(K int, codes []Code, jac [][]*mat.Dense, ms []*mat.SymDense) *mat.SymDense {
	if len(codes) != len(jac) || len(codes) != len(ms) || len(ms) == 0 {
		panic(fmt.Sprintf("curvature.GaussNewtonRouted: %d codes, %d Jacobian lists, %d curvatures", len(codes),
			len(jac), len(ms)))
	}
	D := ms[0].SymmetricDim()
	h := mat.NewSymDense(K*D, nil)
	var mj, blk mat.Dense
	for t, code := range codes {
		checkCode("GaussNewtonRouted", code, K)
		if len(jac[t]) != len(code.Idx) {
			panic(fmt.Sprintf("curvature.GaussNewtonRouted: token %d has %d Jacobians for %d prototypes", t,
				len(jac[t]), len(code.Idx)))
		}
		for y, j := range code.Idx {
			mj.Mul(ms[t], jac[t][y]) // M_t J_j
			for x, i := range code.Idx {
				if i > j {
					continue
				}
				blk.Mul(jac[t][x].T(), &mj) // J_iᵀ M_t J_j
				for m := 0; m < D; m++ {
					for mp := 0; mp < D; mp++ {
						r, c := i*D+m, j*D+mp
						if i == j && r > c {
							continue
						}
						h.SetSym(r, c, h.At(r, c)+blk.At(m, mp))
					}
				}
			}
		}
	}
	return h
}
