package influence

import (
	"math"

	"github.com/pkg/errors"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// KronSum is H = C ⊗ S + E ⊗ I_D + λI over vec(X), X [D, K] (doc.go, equation 8), with C and E sparse symmetric
// [K, K] and S [D, D] dense. Vectors are stored as K rows of D (row j is column j of X).
type KronSum struct {
	D, K    int
	S       []float64 // [D, D]
	C, E    *SparseSym
	Damping float64 // λ
}

// Validate checks the sizes.
func (h *KronSum) Validate() error {
	if h.D <= 0 || len(h.S) != h.D*h.D || h.C == nil || h.C.K != h.K || (h.E != nil && h.E.K != h.K) {
		return errors.Errorf("influence.KronSum: D=%d, len(S)=%d, K=%d, want S [D, D] and C, E [K, K]", h.D, len(h.S), h.K)
	}
	return nil
}

// Apply returns H x for x [K·D] (row layout). Panics on a wrong length.
func (h *KronSum) Apply(x []float64) []float64 {
	D, K := h.D, h.K
	if len(x) != K*D {
		panic(errors.Errorf("influence.KronSum.Apply: len(x)=%d, want K·D = %d", len(x), K*D))
	}
	t := sparseRowMix(h.C, x, D) // row j: Σ_i C_ij x_i
	y := make([]float64, K*D)
	mat.NewDense(K, D, y).Mul(mat.NewDense(K, D, t), mat.NewDense(D, D, h.S)) // rows (S t_j)ᵀ, S symmetric
	if h.E != nil {
		e := sparseRowMix(h.E, x, D)
		for i := range y {
			y[i] += e[i]
		}
	}
	for i := range y {
		y[i] += h.Damping * x[i]
	}
	return y
}

// sparseRowMix returns rows t_j = Σ_i M_ij x_i for x [K, D].
func sparseRowMix(m *SparseSym, x []float64, D int) []float64 {
	t := make([]float64, len(x))
	for j := 0; j < m.K; j++ {
		tj := t[j*D : (j+1)*D]
		for p := m.RowStart[j]; p < m.RowStart[j+1]; p++ {
			i, v := int(m.Cols[p]), m.Vals[p]
			xi := x[i*D : (i+1)*D]
			for d, xv := range xi {
				tj[d] += v * xv
			}
		}
	}
	return t
}

// CGStats reports a conjugate-gradient solve.
type CGStats struct {
	Iterations int     `json:"iterations"`
	Residual   float64 `json:"residual"` // ‖b − Hx‖/‖b‖ at exit
}

// Solve returns x = H⁻¹ b for b [K·D] by conjugate gradients to ‖b − Hx‖ ≤ tol·‖b‖, preconditioned by pre (the
// diagonal-C blocks, which must match D and K) or unpreconditioned when pre is nil. It fails if the tolerance is not
// reached within maxIter iterations (the partial x is returned with the error) or on bad sizes.
func (h *KronSum) Solve(b []float64, pre *Blocks, tol float64, maxIter int) ([]float64, CGStats, error) {
	if err := h.Validate(); err != nil {
		return nil, CGStats{}, err
	}
	n := h.K * h.D
	if len(b) != n || (pre != nil && (pre.D != h.D || pre.K != h.K)) {
		return nil, CGStats{}, errors.Errorf("influence.KronSum.Solve: len(b)=%d, want %d, or preconditioner size mismatch", len(b), n)
	}
	applyPre := func(r []float64) []float64 {
		if pre == nil {
			return append([]float64(nil), r...)
		}
		z := make([]float64, n)
		for j := 0; j < h.K; j++ {
			rj := r[j*h.D : (j+1)*h.D]
			if allZero(rj) {
				continue
			}
			copy(z[j*h.D:(j+1)*h.D], pre.Apply(j, rj))
		}
		return z
	}
	x := make([]float64, n)
	bnorm := math.Sqrt(Dot(b, b))
	if bnorm == 0 {
		return x, CGStats{}, nil
	}
	r := append([]float64(nil), b...)
	z := applyPre(r)
	p := append([]float64(nil), z...)
	rz := Dot(r, z)
	var st CGStats
	for st.Iterations = 0; st.Iterations < maxIter; st.Iterations++ {
		st.Residual = math.Sqrt(Dot(r, r)) / bnorm
		if st.Residual <= tol {
			return x, st, nil
		}
		hp := h.Apply(p)
		alpha := rz / Dot(p, hp)
		for i := range x {
			x[i] += alpha * p[i]
			r[i] -= alpha * hp[i]
		}
		z = applyPre(r)
		rzNew := Dot(r, z)
		beta := rzNew / rz
		rz = rzNew
		for i := range p {
			p[i] = z[i] + beta*p[i]
		}
	}
	st.Residual = math.Sqrt(Dot(r, r)) / bnorm
	if st.Residual <= tol {
		return x, st, nil
	}
	return x, st, errors.Errorf("influence.KronSum.Solve: relative residual %.3g after %d iterations, want ≤ %g",
		st.Residual, maxIter, tol)
}

func allZero(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

// KronEigenSolver solves H x = b exactly for H = C ⊗ S + E ⊗ I + λI (doc.go, equation 8) through the eigenbasis of
// S = Q diag(σ) Qᵀ: with X̃ = X Q (row layout: x̃_j = Qᵀ x_j), H splits into D independent K×K systems
// (σ_m C + E + λI) x̃_{·,m} = b̃_{·,m} (docs/spec/prism.md §5), each inverted once (through its Cholesky factor). Memory
// D·K² float64s, so it is meant for banks of up to a few thousand prototypes. A right-hand side with n non-zero rows
// (a query's active prototypes) costs n·D² + D·K·n + K·D² multiply-adds.
type KronEigenSolver struct {
	D, K     int
	Q, Sigma []float64
	inv      [][]float64 // [D][K·K]: (σ_m C + E + λI)⁻¹, symmetric
}

// NewKronEigenSolver factorises and inverts the D systems of h. It fails if S's eigendecomposition fails or a
// system is not positive definite.
func NewKronEigenSolver(h *KronSum) (*KronEigenSolver, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	D, K := h.D, h.K
	q, sigma, err := EigenSym(h.S, D)
	if err != nil {
		return nil, err
	}
	dense := func(m *SparseSym, c float64, dst []float64) {
		if m == nil {
			return
		}
		for i := 0; i < K; i++ {
			for p := m.RowStart[i]; p < m.RowStart[i+1]; p++ {
				dst[i*K+int(m.Cols[p])] += c * m.Vals[p]
			}
		}
	}
	s := &KronEigenSolver{D: D, K: K, Q: q, Sigma: sigma, inv: make([][]float64, D)}
	a := make([]float64, K*K)
	var chol mat.Cholesky
	for m := 0; m < D; m++ {
		clear(a)
		dense(h.C, sigma[m], a)
		dense(h.E, 1, a)
		for i := 0; i < K; i++ {
			a[i*K+i] += h.Damping
		}
		if !chol.Factorize(mat.NewSymDense(K, a)) {
			return nil, errors.Errorf("influence.NewKronEigenSolver: system %d (σ=%g) is not positive definite", m, sigma[m])
		}
		var inv mat.SymDense
		if err := chol.InverseTo(&inv); err != nil {
			return nil, errors.Wrapf(err, "influence.NewKronEigenSolver: inverting system %d", m)
		}
		s.inv[m] = make([]float64, K*K)
		for i := 0; i < K; i++ {
			for j := 0; j < K; j++ {
				s.inv[m][i*K+j] = inv.At(i, j)
			}
		}
	}
	return s, nil
}

// Solve returns H⁻¹ b for b [K·D] (row layout), skipping the zero rows of b. Panics on a wrong length.
func (s *KronEigenSolver) Solve(b []float64) []float64 {
	D, K := s.D, s.K
	if len(b) != K*D {
		panic(errors.Errorf("influence.KronEigenSolver.Solve: len(b)=%d, want K·D = %d", len(b), K*D))
	}
	Q := mat.NewDense(D, D, s.Q)
	xt := make([]float64, D*K) // [D, K]: row m is x̃_{·,m}
	bt := mat.NewVecDense(D, nil)
	for j := 0; j < K; j++ {
		bj := b[j*D : (j+1)*D]
		if allZero(bj) {
			continue
		}
		bt.MulVec(Q.T(), mat.NewVecDense(D, bj)) // b̃_j = Qᵀ b_j
		for m := 0; m < D; m++ {
			// x̃_{·,m} += (row j of the symmetric inverse)·b̃_{j,m}
			floats.AddScaled(xt[m*K:(m+1)*K], bt.AtVec(m), s.inv[m][j*K:(j+1)*K])
		}
	}
	var x mat.Dense
	x.Mul(mat.NewDense(D, K, xt).T(), Q.T()) // rows x_jᵀ = x̃_jᵀ Qᵀ: [K, D]
	return denseData(&x)
}

// Bytes returns the memory of the D inverses and Q, σ.
func (s *KronEigenSolver) Bytes() int64 { return 8 * int64(s.D*s.K*s.K+s.D*s.D+s.D) }
