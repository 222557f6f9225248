package curvature

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Eps is the ε of the REC weight 1/(‖z‖² + ε) (layers/prism.Eps).
const Eps = 1e-6

// Code is the sparse code a_t of one token: the prototypes Idx with non-zero activations Val (equal lengths, Idx
// distinct). Entries with Val = 0 may be present; they contribute nothing.
type Code struct {
	Idx []int
	Val []float64
}

// Softmax returns π = softmax(logits), computed with the maximum subtracted.
func Softmax(logits []float64) []float64 {
	m := math.Inf(-1)
	for _, x := range logits {
		m = math.Max(m, x)
	}
	out := make([]float64, len(logits))
	sum := 0.0
	for i, x := range logits {
		out[i] = math.Exp(x - m)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// Logits returns l = W z: W [V, D], z [D] → [V]. Panics on a size mismatch.
func Logits(W *mat.Dense, z []float64) []float64 {
	V, D := W.Dims()
	if len(z) != D {
		panic(fmt.Sprintf("curvature.Logits: len(z)=%d, want D=%d", len(z), D))
	}
	out := make([]float64, V)
	mat.NewVecDense(V, out).MulVec(W, mat.NewVecDense(D, z))
	return out
}

// OutputCurvature returns G = Wᵀ(diag π − π πᵀ)W [D, D] (equation 1): the Hessian of −log softmax(l)[y] with respect
// to the input of l = W x, which does not depend on y. W [V, D], pi [V]. Panics on a size mismatch.
func OutputCurvature(W *mat.Dense, pi []float64) *mat.SymDense {
	V, D := W.Dims()
	if len(pi) != V {
		panic(fmt.Sprintf("curvature.OutputCurvature: len(pi)=%d, want V=%d", len(pi), V))
	}
	// Wᵀ diag(π) W − (Wᵀπ)(Wᵀπ)ᵀ
	sw := mat.NewDense(V, D, nil)
	for v := 0; v < V; v++ {
		s := math.Sqrt(pi[v])
		for m := 0; m < D; m++ {
			sw.Set(v, m, s*W.At(v, m))
		}
	}
	g := mat.NewSymDense(D, nil)
	g.SymOuterK(1, sw.T()) // swᵀsw: [D, V]·[V, D]
	wp := mat.NewVecDense(D, nil)
	wp.MulVec(W.T(), mat.NewVecDense(V, pi))
	g.SymRankOne(g, -1, wp)
	return g
}

// OutputGradient returns u = Wᵀ(π − e_y) [D] (equation 2): the gradient of −log softmax(W x)[y] with respect to x.
// Panics on a size mismatch or y outside [0, V).
func OutputGradient(W *mat.Dense, pi []float64, y int) []float64 {
	V, D := W.Dims()
	if len(pi) != V || y < 0 || y >= V {
		panic(fmt.Sprintf("curvature.OutputGradient: len(pi)=%d, y=%d, want V=%d and y in [0, V)", len(pi), y, V))
	}
	r := append([]float64(nil), pi...)
	r[y]--
	out := make([]float64, D)
	mat.NewVecDense(D, out).MulVec(W.T(), mat.NewVecDense(V, r))
	return out
}

// CoUsage returns Σ_t w_t a_t a_tᵀ [K, K] (equation 4); weights nil means w_t = 1 (the co-usage C). Panics on an
// index outside [0, K), a code with unequal lengths, or len(weights) ≠ len(codes).
func CoUsage(K int, codes []Code, weights []float64) *mat.SymDense {
	if weights != nil && len(weights) != len(codes) {
		panic(fmt.Sprintf("curvature.CoUsage: %d weights for %d codes", len(weights), len(codes)))
	}
	c := mat.NewSymDense(K, nil)
	for t, code := range codes {
		checkCode("CoUsage", code, K)
		w := 1.0
		if weights != nil {
			w = weights[t]
		}
		for x, i := range code.Idx {
			for y, j := range code.Idx {
				if i <= j {
					c.SetSym(i, j, c.At(i, j)+w*code.Val[x]*code.Val[y])
				}
			}
		}
	}
	return c
}

func checkCode(caller string, c Code, K int) {
	if len(c.Idx) != len(c.Val) {
		panic(fmt.Sprintf("curvature.%s: code has %d indices and %d values", caller, len(c.Idx), len(c.Val)))
	}
	for _, i := range c.Idx {
		if i < 0 || i >= K {
			panic(fmt.Sprintf("curvature.%s: prototype %d outside [0, %d)", caller, i, K))
		}
	}
}

// RecWeights returns w_t = 1/(‖z_t‖² + Eps) for hidden states z [N][D]: the weights of C_rec for the scale-free
// L_REC. (For the plain L_REC, C_rec = C: pass nil weights to CoUsage.)
func RecWeights(z [][]float64) []float64 {
	out := make([]float64, len(z))
	for t, v := range z {
		s := 0.0
		for _, x := range v {
			s += x * x
		}
		out[t] = 1 / (s + Eps)
	}
	return out
}

// MeanSym returns (1/N) Σ_t G_t, S of equation 5. Panics if gs is empty or the sizes differ.
func MeanSym(gs []*mat.SymDense) *mat.SymDense {
	if len(gs) == 0 {
		panic("curvature.MeanSym: no matrices")
	}
	n := gs[0].SymmetricDim()
	s := mat.NewSymDense(n, nil)
	for _, g := range gs {
		s.AddSym(s, g)
	}
	s.ScaleSym(1/float64(len(gs)), s)
	return s
}

// SampledFisher returns (1/N) Σ_t ũ_t ũ_tᵀ with ũ_t = Wᵀ(π_t − e_{ŷ_t}) and one label ŷ_t drawn from π_t by the
// uniform variates uniforms[t] ∈ [0, 1) (the true-Fisher S of spec §5 and §6.2). pis [N][V]. Panics on a size
// mismatch.
func SampledFisher(W *mat.Dense, pis [][]float64, uniforms []float64) *mat.SymDense {
	if len(pis) != len(uniforms) || len(pis) == 0 {
		panic(fmt.Sprintf("curvature.SampledFisher: %d distributions, %d variates; want equal and > 0", len(pis),
			len(uniforms)))
	}
	_, D := W.Dims()
	s := mat.NewSymDense(D, nil)
	for t, pi := range pis {
		y, acc := len(pi)-1, 0.0
		for v, p := range pi {
			acc += p
			if uniforms[t] < acc {
				y = v
				break
			}
		}
		s.SymRankOne(s, 1, mat.NewVecDense(D, OutputGradient(W, pi, y)))
	}
	s.ScaleSym(1/float64(len(pis)), s)
	return s
}

// Kron returns the Kronecker product A ⊗ B of symmetric matrices: entry ((i·n_B + m), (j·n_B + m′)) = A_ij·B_mm′.
func Kron(A, B mat.Symmetric) *mat.SymDense {
	na, nb := A.SymmetricDim(), B.SymmetricDim()
	out := mat.NewSymDense(na*nb, nil)
	for i := 0; i < na; i++ {
		for j := i; j < na; j++ {
			a := A.At(i, j)
			if a == 0 {
				continue
			}
			for m := 0; m < nb; m++ {
				for mp := 0; mp < nb; mp++ {
					r, c := i*nb+m, j*nb+mp
					if r <= c {
						out.SetSym(r, c, a*B.At(m, mp))
					}
				}
			}
		}
	}
	return out
}

// GaussNewton returns H_GN = Σ_t (a_t a_tᵀ) ⊗ G_t [KD, KD] (equation 3), the exact Hessian of Σ_t CE_t with respect
// to vec(P) when the routing is frozen. codes[t] and gs[t] [D, D] belong to token t. Panics on a size mismatch or an
// index outside [0, K).
func GaussNewton(K int, codes []Code, gs []*mat.SymDense) *mat.SymDense {
	if len(codes) != len(gs) || len(gs) == 0 {
		panic(fmt.Sprintf("curvature.GaussNewton: %d codes, %d curvatures; want equal and > 0", len(codes), len(gs)))
	}
	D := gs[0].SymmetricDim()
	h := mat.NewSymDense(K*D, nil)
	for t, code := range codes {
		checkCode("GaussNewton", code, K)
		g := gs[t]
		for x, i := range code.Idx {
			for y, j := range code.Idx {
				if i > j {
					continue
				}
				s := code.Val[x] * code.Val[y]
				if s == 0 {
					continue
				}
				addBlock(h, i, j, D, g, s)
			}
		}
	}
	return h
}

// addBlock adds s·B to block (i, j) of h (i ≤ j; for i < j the mirror block (j, i) follows by symmetry).
func addBlock(h *mat.SymDense, i, j, D int, B mat.Symmetric, s float64) {
	for m := 0; m < D; m++ {
		for mp := 0; mp < D; mp++ {
			r, c := i*D+m, j*D+mp
			if i == j && r > c {
				continue
			}
			h.SetSym(r, c, h.At(r, c)+s*B.At(m, mp))
		}
	}
}

// AddBlock adds s·B [D, D] to the diagonal block j of H [KD, KD] in place. Panics on a size mismatch.
func AddBlock(H *mat.SymDense, j int, B mat.Symmetric, s float64) {
	D := B.SymmetricDim()
	if (j+1)*D > H.SymmetricDim() || j < 0 {
		panic(fmt.Sprintf("curvature.AddBlock: block %d of width %d outside H of size %d", j, D, H.SymmetricDim()))
	}
	addBlock(H, j, j, D, B, s)
}

// ClusterDiag returns δ_j = 2λ_1 + 2λ_2·n_j (equation 7) for a bank of K prototypes, where nearest[t] is the
// nearest prototype of token t (entries outside [0, K) are ignored: a restricted bank's outsiders).
func ClusterDiag(K int, lambda1, lambda2 float64, nearest []int) []float64 {
	n := make([]float64, K)
	for _, j := range nearest {
		if j >= 0 && j < K {
			n[j]++
		}
	}
	out := make([]float64, K)
	for j := range out {
		out[j] = 2*lambda1 + 2*lambda2*n[j]
	}
	return out
}

// Structured returns H_struct = C ⊗ S + 2λ_rec·C_rec ⊗ I_D + diag(δ) ⊗ I_D (equation 8). C, Crec [K, K], S [D, D],
// delta [K]. Crec may be nil when λ_rec = 0. Panics on a size mismatch.
func Structured(C, S, Crec mat.Symmetric, lambdaRec float64, delta []float64) *mat.SymDense {
	if len(delta) != C.SymmetricDim() {
		panic(fmt.Sprintf("curvature.Structured: len(delta)=%d, want K=%d", len(delta), C.SymmetricDim()))
	}
	h := Kron(C, S)
	h.AddSym(h, Isotropic(Crec, lambdaRec, delta, S.SymmetricDim()))
	return h
}

// Isotropic returns the non-CE part of equation 8, 2λ_rec·C_rec ⊗ I_D + diag(δ) ⊗ I_D [KD, KD], with K = len(delta).
// It is exact (routing and nearest-neighbour choices frozen) for the REC term and for squared-L2 clustering terms.
// Crec may be nil when λ_rec = 0. Panics on a size mismatch.
func Isotropic(Crec mat.Symmetric, lambdaRec float64, delta []float64, D int) *mat.SymDense {
	K := len(delta)
	h := mat.NewSymDense(K*D, nil)
	if lambdaRec != 0 {
		if Crec == nil || Crec.SymmetricDim() != K {
			panic(fmt.Sprintf("curvature.Isotropic: Crec must be [K=%d, K] when lambdaRec ≠ 0", K))
		}
		h.AddSym(h, scaledKronIdentity(Crec, D, 2*lambdaRec))
	}
	for j, d := range delta {
		for m := 0; m < D; m++ {
			r := j*D + m
			h.SetSym(r, r, h.At(r, r)+d)
		}
	}
	return h
}

// scaledKronIdentity returns s·(A ⊗ I_D).
func scaledKronIdentity(A mat.Symmetric, D int, s float64) *mat.SymDense {
	K := A.SymmetricDim()
	out := mat.NewSymDense(K*D, nil)
	for i := 0; i < K; i++ {
		for j := i; j < K; j++ {
			if a := A.At(i, j); a != 0 {
				for m := 0; m < D; m++ {
					out.SetSym(i*D+m, j*D+m, s*a)
				}
			}
		}
	}
	return out
}

// DiagonalC returns H_diagC (equation 9): block j is c_j·S + (2λ_rec·c_j^rec + δ_j)·I_D with c_j = C_jj and
// c_j^rec = (C_rec)_jj; off-diagonal blocks are zero. Crec may be nil when λ_rec = 0. Panics on a size mismatch.
func DiagonalC(C, S, Crec mat.Symmetric, lambdaRec float64, delta []float64) *mat.SymDense {
	K, D := C.SymmetricDim(), S.SymmetricDim()
	if len(delta) != K {
		panic(fmt.Sprintf("curvature.DiagonalC: len(delta)=%d, want K=%d", len(delta), K))
	}
	h := mat.NewSymDense(K*D, nil)
	for j := 0; j < K; j++ {
		addBlock(h, j, j, D, S, C.At(j, j))
		iso := delta[j]
		if lambdaRec != 0 {
			iso += 2 * lambdaRec * Crec.At(j, j)
		}
		for m := 0; m < D; m++ {
			r := j*D + m
			h.SetSym(r, r, h.At(r, r)+iso)
		}
	}
	return h
}

// CosineDistHessian returns ∇²_p (1 − cos(p, z)) [D, D] (equation 10), ignoring the ε of the cosine. Panics if the
// lengths differ or p or z is zero.
func CosineDistHessian(p, z []float64) *mat.SymDense {
	D := len(p)
	if len(z) != D {
		panic(fmt.Sprintf("curvature.CosineDistHessian: len(p)=%d, len(z)=%d", len(p), len(z)))
	}
	np, nz := norm(p), norm(z)
	if np == 0 || nz == 0 {
		panic("curvature.CosineDistHessian: p and z must be non-zero")
	}
	c := 0.0
	for m := range p {
		c += p[m] * z[m]
	}
	c /= np * nz
	h := mat.NewSymDense(D, nil)
	for m := 0; m < D; m++ {
		for mp := m; mp < D; mp++ {
			q, qp, w, wp := p[m]/np, p[mp]/np, z[m]/nz, z[mp]/nz
			v := w*qp + q*wp - 3*c*q*qp
			if m == mp {
				v += c
			}
			h.SetSym(m, mp, v/(np*np))
		}
	}
	return h
}

func norm(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// Restrict maps codes onto the prototype subset protos (distinct indices in [0, K)): index protos[r] becomes r, and
// entries of other prototypes are dropped. The builders applied to the result give the principal submatrix of J =
// protos (C_JJ, (C ⊗ S)_JJ = C_JJ ⊗ S, …). Also returns the map from prototype to its position (−1 outside J).
func Restrict(K int, codes []Code, protos []int) ([]Code, []int) {
	pos := make([]int, K)
	for i := range pos {
		pos[i] = -1
	}
	for r, j := range protos {
		if j < 0 || j >= K || pos[j] >= 0 {
			panic(fmt.Sprintf("curvature.Restrict: protos[%d]=%d is outside [0, %d) or repeated", r, j, K))
		}
		pos[j] = r
	}
	out := make([]Code, len(codes))
	for t, c := range codes {
		checkCode("Restrict", c, K)
		for x, i := range c.Idx {
			if pos[i] >= 0 {
				out[t].Idx = append(out[t].Idx, pos[i])
				out[t].Val = append(out[t].Val, c.Val[x])
			}
		}
	}
	return out, pos
}
