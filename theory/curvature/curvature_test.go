package curvature

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func requireSym(t *testing.T, name string, got mat.Symmetric, want [][]float64, tol float64) {
	t.Helper()
	if got.SymmetricDim() != len(want) {
		t.Fatalf("%s: size %d, want %d", name, got.SymmetricDim(), len(want))
	}
	for i := range want {
		for j := range want[i] {
			if math.Abs(got.At(i, j)-want[i][j]) > tol*(1+math.Abs(want[i][j])) {
				t.Fatalf("%s[%d,%d] = %.15g, want %.15g", name, i, j, got.At(i, j), want[i][j])
			}
		}
	}
}

func dense(m mat.Symmetric) [][]float64 {
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

// TestKron_HandCase checks A ⊗ B entry by entry for 2×2 matrices.
func TestKron_HandCase(t *testing.T) {
	A := mat.NewSymDense(2, []float64{1, 2, 2, 3})
	B := mat.NewSymDense(2, []float64{4, 5, 5, 6})
	requireSym(t, "A⊗B", Kron(A, B), [][]float64{
		{1 * 4, 1 * 5, 2 * 4, 2 * 5},
		{1 * 5, 1 * 6, 2 * 5, 2 * 6},
		{2 * 4, 2 * 5, 3 * 4, 3 * 5},
		{2 * 5, 2 * 6, 3 * 5, 3 * 6},
	}, 0)
}

// TestCoUsage_HandCase checks C = Σ a aᵀ and the weighted C_rec on two tokens, and the off-diagonal mass.
func TestCoUsage_HandCase(t *testing.T) {
	codes := []Code{{Idx: []int{0, 2}, Val: []float64{1, 2}}, {Idx: []int{2}, Val: []float64{3}}}
	C := CoUsage(3, codes, nil)
	requireSym(t, "C", C, [][]float64{{1, 0, 2}, {0, 0, 0}, {2, 0, 4 + 9}}, 0)
	requireSym(t, "C_rec", CoUsage(3, codes, []float64{1, 0.5}), [][]float64{{1, 0, 2}, {0, 0, 0}, {2, 0, 4 + 4.5}}, 0)
	if got, want := OffDiagonalMass(C), (2.0+2)/(1+13+2+2); math.Abs(got-want) > 1e-15 {
		t.Fatalf("OffDiagonalMass = %g, want %g", got, want)
	}
	if got := OffDiagonalMass(mat.NewSymDense(2, []float64{3, 0, 0, 1})); got != 0 {
		t.Fatalf("OffDiagonalMass of a diagonal matrix = %g, want 0", got)
	}
}

// TestOutputCurvature_TwoTokens checks G = Wᵀ(diag π − ππᵀ)W for W = I (V = D = 2): the Bernoulli variance pattern.
func TestOutputCurvature_TwoTokens(t *testing.T) {
	p := 0.3
	W := mat.NewDense(2, 2, []float64{1, 0, 0, 1})
	v := p * (1 - p)
	requireSym(t, "G", OutputCurvature(W, []float64{p, 1 - p}), [][]float64{{v, -v}, {-v, v}}, 1e-15)
	pi := Softmax([]float64{1000, 1000, 1000})
	for _, x := range pi {
		if math.Abs(x-1.0/3) > 1e-15 {
			t.Fatalf("Softmax of equal large logits = %v, want thirds", pi)
		}
	}
}

// TestGaussNewton_OneTokenIsKFAC checks that for a single token H_GN = (a aᵀ) ⊗ G = C ⊗ S (equations 3, 5, 6): the
// K-FAC factorisation is exact when every token shares one G.
func TestGaussNewton_OneTokenIsKFAC(t *testing.T) {
	tt := newToy(2)
	G := OutputCurvature(tt.W, Softmax([]float64{0.1, -0.4, 1.2, 0.3, 0}))
	codes := []Code{{Idx: []int{2, 0}, Val: []float64{0.6, 0.25}}}
	requireSym(t, "H_GN", GaussNewton(3, codes, []*mat.SymDense{G}), dense(Kron(CoUsage(3, codes, nil), G)), 1e-14)
	// Two tokens with the same G: still exact, with S = mean G = G.
	codes = append(codes, Code{Idx: []int{1, 2}, Val: []float64{0.9, 0.1}})
	gs := []*mat.SymDense{G, G}
	requireSym(t, "H_GN(2)", GaussNewton(3, codes, gs), dense(Kron(CoUsage(3, codes, nil), MeanSym(gs))), 1e-14)
}

// TestDiagonalC_ExactWhenOnePrototypePerToken checks that with one prototype per token (C diagonal) the diagonal-C
// approximation (9) equals the structured one (8), and that otherwise it keeps exactly the diagonal blocks.
func TestDiagonalC_ExactWhenOnePrototypePerToken(t *testing.T) {
	S := mat.NewSymDense(2, []float64{2, 0.5, 0.5, 1})
	delta := ClusterDiag(3, 0.1, 0.2, []int{0, 2, 2, 1, -1, 7})
	if want := []float64{0.2 + 0.4, 0.2 + 0.4, 0.2 + 0.8}; math.Abs(delta[2]-want[2]) > 1e-15 || math.Abs(delta[0]-want[0]) > 1e-15 {
		t.Fatalf("ClusterDiag = %v, want %v", delta, want)
	}
	one := []Code{{Idx: []int{0}, Val: []float64{0.5}}, {Idx: []int{2}, Val: []float64{0.8}}, {Idx: []int{2}, Val: []float64{0.1}}}
	C, Crec := CoUsage(3, one, nil), CoUsage(3, one, []float64{0.5, 2, 1})
	requireSym(t, "diagC", DiagonalC(C, S, Crec, 0.3, delta), dense(Structured(C, S, Crec, 0.3, delta)), 1e-15)
	if m := BlockMass(Structured(C, S, Crec, 0.3, delta), 2); math.Abs(m-1) > 1e-15 {
		t.Fatalf("BlockMass of a block-diagonal H = %g, want 1", m)
	}

	two := append(one, Code{Idx: []int{0, 1}, Val: []float64{0.4, 0.7}})
	C, Crec = CoUsage(3, two, nil), CoUsage(3, two, []float64{0.5, 2, 1, 1})
	full, diag := Structured(C, S, Crec, 0.3, delta), DiagonalC(C, S, Crec, 0.3, delta)
	for r := 0; r < 6; r++ {
		for c := 0; c < 6; c++ {
			want := 0.0
			if r/2 == c/2 {
				want = full.At(r, c)
			}
			if math.Abs(diag.At(r, c)-want) > 1e-15 {
				t.Fatalf("diagC[%d,%d] = %g, want %g", r, c, diag.At(r, c), want)
			}
		}
	}
	if m := BlockMass(full, 2); !(m < 1 && m > 0) {
		t.Fatalf("BlockMass with co-usage = %g, want in (0, 1)", m)
	}
}

// TestBlockMass_HandCase checks equation 12 and the block norm matrix on a 4×4 matrix with 2×2 blocks.
func TestBlockMass_HandCase(t *testing.T) {
	H := mat.NewSymDense(4, []float64{
		1, 2, 3, 0,
		2, 1, 0, 4,
		3, 0, 2, 0,
		0, 4, 0, 2,
	})
	diag := 1.0 + 4 + 4 + 1 + 4 + 4
	off := 2 * (9.0 + 16)
	if got, want := BlockMass(H, 2), diag/(diag+off); math.Abs(got-want) > 1e-15 {
		t.Fatalf("BlockMass = %g, want %g", got, want)
	}
	bm := BlockMassMatrix(H, 2)
	if math.Abs(bm[0][1]-5) > 1e-15 || math.Abs(bm[1][0]-5) > 1e-15 || math.Abs(bm[0][0]-math.Sqrt(10)) > 1e-15 {
		t.Fatalf("BlockMassMatrix = %v, want [[√10, 5], [5, √8]]", bm)
	}
	if got := RelFrobenius(H, H); got != 0 {
		t.Fatalf("RelFrobenius(H, H) = %g", got)
	}
	Z := mat.NewSymDense(4, nil)
	if got := RelFrobenius(Z, H); math.Abs(got-1) > 1e-15 {
		t.Fatalf("RelFrobenius(0, H) = %g, want 1", got)
	}
}

// TestCondition_HandCases checks equation 14, the block conditions and the damping.
func TestCondition_HandCases(t *testing.T) {
	H := mat.NewSymDense(4, []float64{1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2, 1, 0, 0, 1, 2})
	e, err := Eigenvalues(H)
	if err != nil {
		t.Fatal(err)
	}
	if got := Condition(e); math.Abs(got-4) > 1e-12 { // eigenvalues 1, 4, 1, 3
		t.Fatalf("κ = %g (eigenvalues %v), want 4", got, e)
	}
	bc, err := BlockConditions(H, 2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(bc[0]-4) > 1e-12 || math.Abs(bc[1]-3) > 1e-12 {
		t.Fatalf("block κ = %v, want [4, 3]", bc)
	}
	if got := Condition([]float64{-1, 2}); !math.IsInf(got, 1) {
		t.Fatalf("κ with a negative eigenvalue = %g, want +Inf", got)
	}
	Hd, lambda := Damped(H, 0.1)
	if want := 0.1 * (1 + 4 + 2 + 2) / 4; math.Abs(lambda-want) > 1e-15 || math.Abs(Hd.At(1, 1)-4-want) > 1e-15 {
		t.Fatalf("Damped: λ = %g, H[1,1] = %g; want λ = %g", lambda, Hd.At(1, 1), want)
	}
}

// TestSampledFisher_StratifiedLabelsGiveExpectedFisher checks E_{ŷ∼π}[ũũᵀ] = G (equation 5): with the uniforms of
// one token at the midpoints of four equal strata and π = (1/4, 3/4), the labels are drawn in exact proportion.
func TestSampledFisher_StratifiedLabelsGiveExpectedFisher(t *testing.T) {
	W := mat.NewDense(2, 3, []float64{0.5, -1, 2, 1.5, 0.3, -0.7})
	pi := []float64{0.25, 0.75}
	got := SampledFisher(W, [][]float64{pi, pi, pi, pi}, []float64{0.125, 0.375, 0.625, 0.875})
	requireSym(t, "sampled S", got, dense(OutputCurvature(W, pi)), 1e-14)
}

// TestRestrict_PrincipalSubmatrices checks that the builders on restricted codes give the principal submatrices of
// the full ones (doc.go, last paragraph).
func TestRestrict_PrincipalSubmatrices(t *testing.T) {
	tt := newToy(3)
	P := randomBank(3, tt.K*tt.D)
	full := tt.analytic(P)
	J := []int{2, 0}
	rc, pos := Restrict(tt.K, tt.codes, J)
	if pos[1] != -1 || pos[2] != 0 || pos[0] != 1 {
		t.Fatalf("positions %v", pos)
	}
	nearest := make([]int, len(tt.tokProto))
	for i, j := range tt.tokProto {
		nearest[i] = pos[j]
	}
	// G_t depends on all of P through the logits, so compare with G_t from the full bank.
	gs := make([]*mat.SymDense, len(tt.y))
	for tok := range tt.y {
		x := append([]float64(nil), tt.r[tok]...)
		for k, j := range tt.codes[tok].Idx {
			for m := 0; m < tt.D; m++ {
				x[m] += tt.codes[tok].Val[k] * P[j*tt.D+m]
			}
		}
		gs[tok] = OutputCurvature(tt.W, Softmax(Logits(tt.W, x)))
	}
	got := GaussNewton(len(J), rc, gs)
	got.AddSym(got, Isotropic(CoUsage(len(J), rc, tt.w), tt.lRec, ClusterDiag(len(J), tt.l1, tt.l2, nearest), tt.D))
	// λ_1's 2λ_1 reaches every prototype of J (each has a nearest token), as in the full matrix.
	for r := 0; r < len(J)*tt.D; r++ {
		for c := 0; c < len(J)*tt.D; c++ {
			fr, fc := J[r/tt.D]*tt.D+r%tt.D, J[c/tt.D]*tt.D+c%tt.D
			if math.Abs(got.At(r, c)-full.At(fr, fc)) > 1e-14*(1+math.Abs(full.At(fr, fc))) {
				t.Fatalf("restricted H[%d,%d] = %g, full H[%d,%d] = %g", r, c, got.At(r, c), fr, fc, full.At(fr, fc))
			}
		}
	}
}
