package prism

import (
	"math"
	"slices"

	"github.com/pkg/errors"
	"gonum.org/v1/gonum/mat"

	"github.com/protolab/protolab/theory/curvature"
)

// CurvatureScore compares one matrix with the exact Hessian (theory/curvature, equations 11–14).
type CurvatureScore struct {
	Name string `json:"name"`
	// RelFrobenius is ‖A − H‖_F/‖H‖_F against the exact H (0 for the exact Hessian itself).
	RelFrobenius float64 `json:"rel_frobenius"`
	// BlockMass is the share of ‖A‖_F² on the D×D diagonal blocks.
	BlockMass float64 `json:"block_mass"`
	// MinEig and MaxEig are the extreme eigenvalues; Cond is κ = MaxEig/MinEig (+Inf, stored as -1, when
	// MinEig ≤ 0).
	MinEig float64 `json:"min_eig"`
	MaxEig float64 `json:"max_eig"`
	Cond   float64 `json:"cond"`
	// DampedCond is κ of A + λI with λ = 0.1 × the mean diagonal entry of the structured approximation (spec §5's
	// damping heuristic), the matrix a preconditioner actually inverts.
	DampedCond float64 `json:"damped_cond"`
	// BlockCondMedian and BlockCondMax summarise κ of the M diagonal blocks (−1 for +Inf).
	BlockCondMedian float64 `json:"block_cond_median"`
	BlockCondMax    float64 `json:"block_cond_max"`
	// BlockMinEig and BlockMaxEig are the extreme eigenvalues of each diagonal block, in the order of
	// Curvature.Prototypes: κ of the blocks at any damping (BlockCondMedianAt).
	BlockMinEig []float64 `json:"block_min_eig"`
	BlockMaxEig []float64 `json:"block_max_eig"`
	// Blocks is the M×M matrix of block Frobenius norms ‖A_ij‖_F (the heatmap of the block structure).
	Blocks [][]float64 `json:"blocks"`
}

// CondAt returns κ(A + λI) at damping λ from the extreme eigenvalues; NaN when A + λI is not positive definite.
func (s CurvatureScore) CondAt(lambda float64) float64 {
	return curvatureNaNIfInf(curvature.DampedCondition([]float64{s.MinEig, s.MaxEig}, lambda))
}

// BlockCondMedianAt returns the median over the diagonal blocks of κ(A_jj + λI) at damping λ; NaN when a block is
// not positive definite at that damping, or when the scores hold no block spectra.
func (s CurvatureScore) BlockCondMedianAt(lambda float64) float64 {
	if len(s.BlockMinEig) == 0 || len(s.BlockMinEig) != len(s.BlockMaxEig) {
		return math.NaN()
	}
	k := make([]float64, len(s.BlockMinEig))
	for j := range k {
		k[j] = curvature.DampedCondition([]float64{s.BlockMinEig[j], s.BlockMaxEig[j]}, lambda)
		if math.IsInf(k[j], 0) {
			return math.NaN()
		}
	}
	slices.Sort(k)
	return k[len(k)/2]
}

func curvatureNaNIfInf(x float64) float64 {
	if math.IsInf(x, 0) {
		return math.NaN()
	}
	return x
}

// curvatureScoreOf compares A with the exact H (theory/curvature equations 11–14).
func curvatureScoreOf(name string, A, H *mat.SymDense, D int, damping float64) (CurvatureScore, error) {
	s := CurvatureScore{Name: name, RelFrobenius: curvature.RelFrobenius(A, H), BlockMass: curvature.BlockMass(A, D),
		Blocks: curvature.BlockMassMatrix(A, D)}
	eig, err := curvature.Eigenvalues(A)
	if err != nil {
		return s, errors.WithMessagef(err, "prism: spectrum of %s", name)
	}
	s.MinEig, s.MaxEig, s.Cond = eig[0], eig[len(eig)-1], curvatureFinite(curvature.Condition(eig))
	damped := make([]float64, len(eig))
	for i, e := range eig {
		damped[i] = e + damping
	}
	s.DampedCond = curvatureFinite(curvature.Condition(damped))
	if s.BlockMinEig, s.BlockMaxEig, err = curvature.BlockEigenRanges(A, D); err != nil {
		return s, errors.WithMessagef(err, "prism: block spectra of %s", name)
	}
	bc := make([]float64, len(s.BlockMinEig))
	for j := range bc {
		bc[j] = curvature.Condition([]float64{s.BlockMinEig[j], s.BlockMaxEig[j]})
	}
	slices.Sort(bc)
	s.BlockCondMedian, s.BlockCondMax = curvatureFinite(bc[len(bc)/2]), curvatureFinite(bc[len(bc)-1])
	return s, nil
}

// finite maps +Inf (an indefinite or singular matrix) to −1, which JSON can store.
func curvatureFinite(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return -1
	}
	return x
}

func curvatureRows(m mat.Symmetric) [][]float64 {
	n := m.SymmetricDim()
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, n)
		for j := range out[i] {
			out[i][j] = m.At(i, j)
		}
	}
	return out
}
