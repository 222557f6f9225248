package influence

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/protolab/protolab/workbench/wbtest"
)

// TestCoUsage_SolveMatchesDenseSolve: on a small random case (K = 5, D = 3, k = 2, so C is not diagonal) both solvers
// of CoUsage, and its column form, equal a dense LU solve (gonum mat) of the explicit H of equation 8.
func TestCoUsage_SolveMatchesDenseSolve(t *testing.T) {
	rng := wbtest.RNG(21)
	K, D := 5, 3
	h, Hm := toyKronSum(t, rng, K, D, 2, 25, []float64{0.3, 0.1, 0.3, 0.5, 0.2})
	pre, err := NewBlocks(h.S, D, h.C.Diag(), h.E.Diag(), h.Damping, 0)
	if err != nil {
		t.Fatal(err)
	}
	H := mat.NewDense(K*D, K*D, Hm)
	denseSolve := func(b []float64) []float64 {
		var x mat.VecDense
		if err := x.SolveVec(H, mat.NewVecDense(K*D, b)); err != nil {
			t.Fatal(err)
		}
		return x.RawVector().Data
	}
	b := randVec(rng, K*D)
	// A query gradient with two non-zero columns, 3 and 1, given in the column form.
	cols := []int32{3, 1}
	g := [][]float64{randVec(rng, D), randVec(rng, D)}
	bCols := make([]float64, K*D)
	copy(bCols[3*D:4*D], g[0])
	copy(bCols[1*D:2*D], g[1])
	wantCols := denseSolve(bCols)

	for _, direct := range []bool{true, false} {
		maxK := K // K ≤ directMaxK: the eigenbasis solver
		if !direct {
			maxK = K - 1
		}
		c, err := NewCoUsage(h, pre, maxK, 1e-13, 500)
		if err != nil {
			t.Fatal(err)
		}
		if (c.Direct != nil) != direct {
			t.Fatalf("directMaxK=%d: Direct=%v, want direct=%v", maxK, c.Direct != nil, direct)
		}
		x, err := c.Solve(b)
		if err != nil {
			t.Fatal(err)
		}
		wbtest.RequireClose(t, "H⁻¹ b", denseSolve(b), x, 1e-10)
		if direct && len(c.Iters) != 0 || !direct && (len(c.Iters) != 1 || c.Iters[0] == 0) {
			t.Fatalf("direct=%v: Iters=%v", direct, c.Iters)
		}
		xc, xg, err := c.SolveColumns(cols, g)
		if err != nil {
			t.Fatal(err)
		}
		var want []float64
		for n, j := range xc {
			if n > 0 && j <= xc[n-1] {
				t.Fatalf("columns %v are not ascending", xc)
			}
			want = append(want, wantCols[int(j)*D:(int(j)+1)*D]...)
		}
		if len(xc) != K { // C couples every prototype here, so no column of H⁻¹ vec(G) is zero
			t.Fatalf("SolveColumns returned columns %v, want all %d", xc, K)
		}
		var got []float64
		for _, col := range xg {
			got = append(got, col...)
		}
		wbtest.RequireClose(t, "H⁻¹ vec(G) by columns", want, got, 1e-10)
		wantBytes := int64(12*(h.C.NNZ()+h.E.NNZ()) + 8*D*D)
		if direct {
			wantBytes = c.Direct.Bytes()
		}
		if c.Bytes() != wantBytes {
			t.Fatalf("direct=%v: Bytes=%d, want %d", direct, c.Bytes(), wantBytes)
		}
		if got, want := c.OffDiagonalMass(), h.C.OffDiagonalMass(); got != want || !(got > 0 && got < 1) {
			t.Fatalf("OffDiagonalMass=%g, want C's %g in (0, 1) for k = 2", got, want)
		}
	}

	if _, err := NewCoUsage(&KronSum{D: D, K: K, S: h.S[:D], C: h.C}, nil, K, 1e-6, 10); err == nil {
		t.Fatal("NewCoUsage accepted S of the wrong size")
	}
	if _, err := NewCoUsage(&KronSum{D: D, K: K - 1, S: h.S, C: h.C}, nil, K, 1e-6, 10); err == nil {
		t.Fatal("NewCoUsage accepted C of the wrong size")
	}
	c, err := NewCoUsage(h, pre, 0, 1e-13, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Solve(b); err == nil {
		t.Fatal("CG reported convergence after one iteration")
	}
}
