package influence

import (
	"github.com/pkg/errors"
)

// CoUsage is the full curvature H = C ⊗ S + E ⊗ I_D + λI of equation 8 with its solver (doc.go, "Co-usage
// solver"): exact in the eigenbasis of S (KronEigenSolver, D·K² floats) for banks of up to directMaxK prototypes,
// else conjugate gradients to a relative residual preconditioned by the diagonal-C blocks.
type CoUsage struct {
	H      *KronSum
	Direct *KronEigenSolver // nil when solved by CG
	// Iters records the CG iterations of each solve since it was last cleared (none with the direct solver).
	Iters []int
	pre   *Blocks
	cgTol float64
	cgMax int
}

// NewCoUsage validates h and, when h.K ≤ directMaxK, factorises it for the direct solver; otherwise Solve runs CG
// preconditioned by pre (nil: none) to the relative residual cgTol in at most cgMaxIter iterations. It fails on
// inconsistent sizes or a system that is not positive definite.
func NewCoUsage(h *KronSum, pre *Blocks, directMaxK int, cgTol float64, cgMaxIter int) (*CoUsage, error) {
	if err := h.Validate(); err != nil {
		return nil, errors.WithMessage(err, "influence.NewCoUsage")
	}
	if pre != nil && (pre.K != h.K || pre.D != h.D) {
		return nil, errors.Errorf("influence.NewCoUsage: blocks of K=%d, D=%d for H of K=%d, D=%d", pre.K, pre.D, h.K, h.D)
	}
	c := &CoUsage{H: h, pre: pre, cgTol: cgTol, cgMax: cgMaxIter}
	if h.K <= directMaxK {
		var err error
		if c.Direct, err = NewKronEigenSolver(h); err != nil {
			return nil, errors.WithMessage(err, "influence.NewCoUsage")
		}
	}
	return c, nil
}

// Solve returns H⁻¹ b for b [K·D] (row j = column j of X), directly or by CG; CG fails if it does not converge.
// Panics on a wrong length.
func (c *CoUsage) Solve(b []float64) ([]float64, error) {
	if c.Direct != nil {
		return c.Direct.Solve(b), nil
	}
	x, st, err := c.H.Solve(b, c.pre, c.cgTol, c.cgMax)
	c.Iters = append(c.Iters, st.Iterations)
	return x, err
}

// SolveColumns returns the non-zero columns of H⁻¹ vec(G) for G [D, K] given by its non-zero columns: indices cols
// and g [len(cols)][D] (the form of ColumnGradients). The result has the same form, columns ascending. Panics on an
// index outside [0, K) or a column of the wrong length.
func (c *CoUsage) SolveColumns(cols []int32, g [][]float64) ([]int32, [][]float64, error) {
	D, K := c.H.D, c.H.K
	if len(g) != len(cols) {
		panic(errors.Errorf("influence.CoUsage.SolveColumns: %d columns and %d indices", len(g), len(cols)))
	}
	b := make([]float64, K*D)
	for n, j := range cols {
		if j < 0 || int(j) >= K || len(g[n]) != D {
			panic(errors.Errorf("influence.CoUsage.SolveColumns: column %d of length %d, want [0, %d) and %d", j, len(g[n]), K, D))
		}
		copy(b[int(j)*D:(int(j)+1)*D], g[n])
	}
	x, err := c.Solve(b)
	if err != nil {
		return nil, nil, err
	}
	var xc []int32
	var xg [][]float64
	for j := 0; j < K; j++ {
		if xj := x[j*D : (j+1)*D]; !allZero(xj) {
			xc, xg = append(xc, int32(j)), append(xg, xj)
		}
	}
	return xc, xg, nil
}

// Bytes returns the memory a solve reads: the direct solver's factors, or the sparse C and E (12 bytes a non-zero)
// and S.
func (c *CoUsage) Bytes() int64 {
	if c.Direct != nil {
		return c.Direct.Bytes()
	}
	nnz := c.H.C.NNZ()
	if c.H.E != nil {
		nnz += c.H.E.NNZ()
	}
	return int64(12*nnz + 8*c.H.D*c.H.D)
}

// OffDiagonalMass returns Σ_{i≠j}|C_ij| / Σ|C_ij| of the co-usage C.
func (c *CoUsage) OffDiagonalMass() float64 { return c.H.C.OffDiagonalMass() }
