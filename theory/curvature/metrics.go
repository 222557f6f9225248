package curvature

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// RelFrobenius returns ‖A − H‖_F / ‖H‖_F (equation 11); +Inf when H = 0 and A ≠ H. Panics on a size mismatch.
func RelFrobenius(A, H mat.Symmetric) float64 {
	n := H.SymmetricDim()
	if A.SymmetricDim() != n {
		panic(fmt.Sprintf("curvature.RelFrobenius: sizes %d and %d", A.SymmetricDim(), n))
	}
	diff, ref := 0.0, 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d := A.At(i, j) - H.At(i, j)
			diff += d * d
			ref += H.At(i, j) * H.At(i, j)
		}
	}
	if ref == 0 {
		if diff == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Sqrt(diff / ref)
}

// BlockMass returns Σ_j ‖H_jj‖_F² / ‖H‖_F² (equation 12) for H [KD, KD] with blocks of size D: the share of the
// squared Frobenius norm on the diagonal blocks (1 for block-diagonal H; 0 for H = 0). Panics unless D divides the
// size of H.
func BlockMass(H mat.Symmetric, D int) float64 {
	n := H.SymmetricDim()
	if D <= 0 || n%D != 0 {
		panic(fmt.Sprintf("curvature.BlockMass: block size %d does not divide %d", D, n))
	}
	diag, all := 0.0, 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := H.At(i, j) * H.At(i, j)
			all += v
			if i/D == j/D {
				diag += v
			}
		}
	}
	if all == 0 {
		return 0
	}
	return diag / all
}

// OffDiagonalMass returns Σ_{i≠j} |C_ij| / Σ_ij |C_ij| (equation 13); 0 for C = 0.
func OffDiagonalMass(C mat.Symmetric) float64 {
	n := C.SymmetricDim()
	off, all := 0.0, 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := math.Abs(C.At(i, j))
			all += v
			if i != j {
				off += v
			}
		}
	}
	if all == 0 {
		return 0
	}
	return off / all
}

// Eigenvalues returns the eigenvalues of a symmetric matrix in ascending order.
func Eigenvalues(H mat.Symmetric) ([]float64, error) {
	var e mat.EigenSym
	if !e.Factorize(H, false) {
		return nil, fmt.Errorf("curvature.Eigenvalues: the %d×%d eigendecomposition did not converge",
			H.SymmetricDim(), H.SymmetricDim())
	}
	return e.Values(nil), nil
}

// Condition returns κ = λ_max/λ_min of the eigenvalues (ascending, as Eigenvalues returns them) (equation 14):
// +Inf when λ_min ≤ 0, NaN for no eigenvalues.
func Condition(eigs []float64) float64 {
	if len(eigs) == 0 {
		return math.NaN()
	}
	lo, hi := eigs[0], eigs[len(eigs)-1]
	if lo <= 0 {
		return math.Inf(1)
	}
	return hi / lo
}

// Block returns a copy of the diagonal block j [D, D] of H [KD, KD]. Panics if the block is outside H.
func Block(H mat.Symmetric, j, D int) *mat.SymDense {
	if j < 0 || (j+1)*D > H.SymmetricDim() {
		panic(fmt.Sprintf("curvature.Block: block %d of width %d outside a matrix of size %d", j, D, H.SymmetricDim()))
	}
	b := mat.NewSymDense(D, nil)
	for m := 0; m < D; m++ {
		for mp := m; mp < D; mp++ {
			b.SetSym(m, mp, H.At(j*D+m, j*D+mp))
		}
	}
	return b
}

// BlockConditions returns κ of each diagonal block of H [KD, KD] (blocks of size D).
func BlockConditions(H mat.Symmetric, D int) ([]float64, error) {
	n := H.SymmetricDim()
	if D <= 0 || n%D != 0 {
		return nil, fmt.Errorf("curvature.BlockConditions: block size %d does not divide %d", D, n)
	}
	out := make([]float64, n/D)
	for j := range out {
		e, err := Eigenvalues(Block(H, j, D))
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", j, err)
		}
		out[j] = Condition(e)
	}
	return out, nil
}

// Damped returns H + λI, with λ = scale × the mean diagonal entry of H (spec §5 damps with 0.1 × the mean of
// c_j σ_m + 2λ_rec c_j^rec + δ_j, which is the mean diagonal entry of H_diagC in the eigenbasis of S). Also returns λ.
func Damped(H mat.Symmetric, scale float64) (*mat.SymDense, float64) {
	n := H.SymmetricDim()
	tr := 0.0
	for i := 0; i < n; i++ {
		tr += H.At(i, i)
	}
	lambda := scale * tr / float64(n)
	out := mat.NewSymDense(n, nil)
	out.CopySym(H)
	for i := 0; i < n; i++ {
		out.SetSym(i, i, out.At(i, i)+lambda)
	}
	return out, lambda
}

// BlockMassMatrix returns the K×K matrix of block Frobenius norms ‖H_ij‖_F of H [KD, KD], the heatmap of the
// Hessian's block structure. Panics unless D divides the size of H.
func BlockMassMatrix(H mat.Symmetric, D int) [][]float64 {
	n := H.SymmetricDim()
	if D <= 0 || n%D != 0 {
		panic(fmt.Sprintf("curvature.BlockMassMatrix: block size %d does not divide %d", D, n))
	}
	K := n / D
	out := make([][]float64, K)
	for i := range out {
		out[i] = make([]float64, K)
	}
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			v := H.At(r, c)
			out[r/D][c/D] += v * v
		}
	}
	for i := range out {
		for j := range out[i] {
			out[i][j] = math.Sqrt(out[i][j])
		}
	}
	return out
}

// DampedCondition returns κ(A + λI) = (λ_max + λ)/(λ_min + λ) from the eigenvalues of A in ascending order
// (equation 14 of the damped matrix): only the first and last entries are read, so {λ_min, λ_max} suffices. +Inf when
// λ_min + λ ≤ 0, NaN for no eigenvalues.
func DampedCondition(eigs []float64, lambda float64) float64 {
	if len(eigs) == 0 {
		return math.NaN()
	}
	lo, hi := eigs[0]+lambda, eigs[len(eigs)-1]+lambda
	if lo <= 0 {
		return math.Inf(1)
	}
	return hi / lo
}

// BlockEigenRanges returns the smallest and the largest eigenvalue of each diagonal block H_jj [D, D] of
// H [KD, KD], so that κ(H_jj + λI) can be computed for any damping λ (DampedCondition). Errors unless D divides the
// size of H, or when a block's eigendecomposition fails.
func BlockEigenRanges(H mat.Symmetric, D int) (lo, hi []float64, err error) {
	n := H.SymmetricDim()
	if D <= 0 || n%D != 0 {
		return nil, nil, fmt.Errorf("curvature.BlockEigenRanges: block size %d does not divide %d", D, n)
	}
	lo, hi = make([]float64, n/D), make([]float64, n/D)
	for j := range lo {
		e, err := Eigenvalues(Block(H, j, D))
		if err != nil {
			return nil, nil, fmt.Errorf("block %d: %w", j, err)
		}
		lo[j], hi[j] = e[0], e[len(e)-1]
	}
	return lo, hi, nil
}
