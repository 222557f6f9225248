package influence

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/diff/fd"

	"github.com/protolab/protolab/workbench/stats"
	"github.com/protolab/protolab/workbench/wbtest"
)

// exactCase builds a single linear layer In=3, Out=4 whose Fisher is diagonal in a Kronecker eigenbasis, so EK-FAC
// is exact: one token per sequence, inputs a = √w_i·R_A e_i (class i, distinct w_i), output gradients
// g = ±√d_{i,m}·Q_S e_m for every direction m and both signs, with a class-dependent spectrum d_i (so K-FAC, which
// assumes one spectrum for all classes, is not exact). Returns per-sequence (a, g) pairs.
func exactCase(seed uint64) (in, out int, as, gs [][]float64) {
	rng := wbtest.RNG(seed)
	in, out = 3, 4
	ra, qs := refOrthogonal(rng, in), refOrthogonal(rng, out)
	w := []float64{0.5, 1.3, 2.9}
	for i := 0; i < in; i++ {
		a := make([]float64, in)
		for r := 0; r < in; r++ {
			a[r] = math.Sqrt(w[i]) * ra[r*in+i]
		}
		for m := 0; m < out; m++ {
			d := 0.2 + 3*rng.Float64()
			for _, sign := range []float64{1, -1} {
				g := make([]float64, out)
				for r := 0; r < out; r++ {
					g[r] = sign * math.Sqrt(d) * qs[r*out+m]
				}
				as, gs = append(as, a), append(gs, g)
			}
		}
	}
	return in, out, as, gs
}

func fitEKFAC(t *testing.T, cfg EKFACConfig, in, out int, as, gs [][]float64) *EKFAC {
	t.Helper()
	e, err := NewEKFAC(cfg, []Linear{{Name: "w", In: in, Out: out}})
	if err != nil {
		t.Fatal(err)
	}
	for n := range as {
		if err := e.AddCovariances(0, as[n], gs[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Decompose(); err != nil {
		t.Fatal(err)
	}
	for n := range as {
		if err := e.AddLambda(0, SequenceGradient(as[n], gs[n], in, out)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Finish(); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEKFAC_ExactWhereFisherIsKroneckerDiagonal(t *testing.T) {
	in, out, as, gs := exactCase(1)
	var grads [][]float64
	for n := range as {
		grads = append(grads, refSeqGrad(as[n], gs[n], in, out))
	}
	fisher := refFisher(grads)
	rng := wbtest.RNG(2)
	for _, damping := range []float64{0, 0.05} { // heuristic and given
		cfg := DefaultEKFACConfig()
		cfg.Damping = damping
		e := fitEKFAC(t, cfg, in, out, as, gs)
		lambda := e.Layers[0].Damping
		if damping == 0 {
			want := DefaultDampingScale * stats.Mean(e.Layers[0].Lambda)
			if !wbtest.Close(want, lambda, 1e-14) {
				t.Fatalf("heuristic damping %g, want 0.1·mean(Λ) = %g", lambda, want)
			}
		}
		m := append([]float64(nil), fisher...)
		for d := 0; d < in*out; d++ {
			m[d*in*out+d] += lambda
		}
		for trial := 0; trial < 3; trial++ {
			gq := randVec(rng, in*out)
			wbtest.RequireClose(t, "EK-FAC IHVP vs (F+λI)⁻¹g", refSolve(t, m, gq), e.Precondition(0, gq), 1e-10)
		}
	}
	// Control: on the same data K-FAC is not exact (the class spectra differ), so the test above can fail.
	cfg := DefaultEKFACConfig()
	cfg.Eigenvalues, cfg.Damping = EigenKronecker, 0.05
	k := fitEKFAC(t, cfg, in, out, as, gs)
	m := append([]float64(nil), fisher...)
	for d := 0; d < in*out; d++ {
		m[d*in*out+d] += 0.05
	}
	gq := randVec(rng, in*out)
	if diff := wbtest.MaxAbsDiff(refSolve(t, m, gq), k.Precondition(0, gq)); diff < 1e-3 {
		t.Fatalf("K-FAC matched the exact inverse to %g on data built to break it", diff)
	}
}

// TestEKFAC_KFACEigenvaluesGiveKroneckerInverse checks that Λ = λ_S λ_Aᵀ reproduces (A ⊗ S + λI)⁻¹ on random data
// with several tokens per sequence, A and S computed by plain loops.
func TestEKFAC_KFACEigenvaluesGiveKroneckerInverse(t *testing.T) {
	rng := wbtest.RNG(3)
	in, out, seqs, T := 5, 3, 7, 4
	cfg := DefaultEKFACConfig()
	cfg.Eigenvalues = EigenKronecker
	e, err := NewEKFAC(cfg, []Linear{{Name: "w", In: in, Out: out}})
	if err != nil {
		t.Fatal(err)
	}
	A, S := make([]float64, in*in), make([]float64, out*out)
	for n := 0; n < seqs; n++ {
		a, g := randVec(rng, T*in), randVec(rng, T*out)
		if err := e.AddCovariances(0, a, g); err != nil {
			t.Fatal(err)
		}
		for tok := 0; tok < T; tok++ {
			for i := 0; i < in; i++ {
				for j := 0; j < in; j++ {
					A[i*in+j] += a[tok*in+i] * a[tok*in+j] / float64(seqs*T)
				}
			}
			for i := 0; i < out; i++ {
				for j := 0; j < out; j++ {
					S[i*out+j] += g[tok*out+i] * g[tok*out+j] / float64(seqs*T)
				}
			}
		}
	}
	if err := e.Decompose(); err != nil {
		t.Fatal(err)
	}
	if err := e.Finish(); err != nil {
		t.Fatal(err)
	}
	gq := randVec(rng, in*out)
	want := refSolve(t, refKFAC(A, S, in, out, e.Layers[0].Damping), gq)
	wbtest.RequireClose(t, "K-FAC IHVP", want, e.Precondition(0, gq), 1e-10)
}

// TestEKFAC_LambdaIsFisherDiagonalInEigenbasis checks equation 3 against loops on random multi-token data: Λ_{o,i} =
// (1/N) Σ_n (q_{S,o}ᵀ G_n q_{A,i})².
func TestEKFAC_LambdaIsFisherDiagonalInEigenbasis(t *testing.T) {
	rng := wbtest.RNG(4)
	in, out := 4, 3
	var as, gs [][]float64
	for n := 0; n < 6; n++ {
		as, gs = append(as, randVec(rng, 3*in)), append(gs, randVec(rng, 3*out))
	}
	e := fitEKFAC(t, DefaultEKFACConfig(), in, out, as, gs)
	f := e.Layers[0]
	want := make([]float64, in*out)
	for n := range as {
		G := refSeqGrad(as[n], gs[n], in, out)
		for o := 0; o < out; o++ {
			for i := 0; i < in; i++ {
				v := 0.0
				for r := 0; r < out; r++ {
					for c := 0; c < in; c++ {
						v += f.QS[r*out+o] * G[r*in+c] * f.QA[c*in+i]
					}
				}
				want[o*in+i] += v * v / float64(len(as))
			}
		}
	}
	wbtest.RequireClose(t, "Λ", want, f.Lambda, 1e-12)
}

func TestSequenceGradient_MatchesLoops(t *testing.T) {
	rng := wbtest.RNG(5)
	a, g := randVec(rng, 5*3), randVec(rng, 5*4)
	wbtest.RequireClose(t, "G", refSeqGrad(a, g, 3, 4), SequenceGradient(a, g, 3, 4), 1e-13)
}

func TestEKFAC_StageErrors(t *testing.T) {
	e, err := NewEKFAC(DefaultEKFACConfig(), []Linear{{Name: "w", In: 2, Out: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddLambda(0, make([]float64, 4)); err == nil {
		t.Fatal("AddLambda before Decompose succeeded")
	}
	if err := e.Decompose(); err == nil {
		t.Fatal("Decompose without tokens succeeded")
	}
	if err := e.AddCovariances(0, make([]float64, 3), make([]float64, 2)); err == nil {
		t.Fatal("AddCovariances with mismatched rows succeeded")
	}
	if _, err := NewEKFAC(EKFACConfig{Eigenvalues: "x", DampingScale: 0.1}, nil); err == nil {
		t.Fatal("bad eigenvalue mode accepted")
	}
}

// TestCodeGradient_MatchesLoopsAndFiniteDifferences: CodeGradient equals the loop over dense codes, and it is the
// gradient with respect to P of PRISM's weighted cross-entropy with frozen codes (refPrismCELoss) when u_t is that
// loss's output gradient Wᵀ(softmax(l_t) − e_{y_t}). Sizes V = 5, D = 3, K = 4, k = 2, n = 7 tokens, with a zero
// weight, a fractional one and zero activations. The finite differences use the five-point central stencil with
// h = 1e-3 (truncation ~h⁴·f⁽⁵⁾/30 ≈ 1e-13, rounding ~1e-16·|L|/h): the three-point one of wbtest.RequireGradient
// cannot resolve 1e-10.
func TestCodeGradient_MatchesLoopsAndFiniteDifferences(t *testing.T) {
	rng := wbtest.RNG(31)
	V, D, K, k, n := 5, 3, 4, 2, 7
	idx, acts, _ := toyCodes(rng, n, K, D, k)
	W, r, P := randVec(rng, V*D), randVec(rng, n*D), randVec(rng, D*K)
	y := make([]int, n)
	for i := range y {
		y[i] = rng.IntN(V)
	}
	w := []float64{1, 0.5, 0, 2, 1, 1.5, 1}
	u := make([]float64, n*D) // u_t = Wᵀ(softmax(l_t) − e_{y_t})
	for tk := 0; tk < n; tk++ {
		l := refPrismLogits(W, r[tk*D:(tk+1)*D], P, V, D, K, idx[tk*k:(tk+1)*k], acts[tk*k:(tk+1)*k])
		p := stats.Softmax(l)
		p[y[tk]]--
		for d := 0; d < D; d++ {
			for v := 0; v < V; v++ {
				u[tk*D+d] += W[v*D+d] * p[v]
			}
		}
	}
	G := CodeGradient(K, D, k, idx, acts, u, w)
	wbtest.RequireClose(t, "G vs loops", refCodeGradient(K, D, k, idx, acts, u, w), G, 1e-10)
	wbtest.RequireClose(t, "unweighted G vs loops", refCodeGradient(K, D, k, idx, acts, u, nil),
		CodeGradient(K, D, k, idx, acts, u, nil), 1e-10)
	loss := func(p []float64) float64 { return refPrismCELoss(W, r, p, V, D, K, k, idx, acts, y, w) }
	five := fd.Formula{Stencil: []fd.Point{{Loc: -2, Coeff: 1.0 / 12}, {Loc: -1, Coeff: -8.0 / 12},
		{Loc: 1, Coeff: 8.0 / 12}, {Loc: 2, Coeff: -1.0 / 12}}, Derivative: 1, Step: 1e-3}
	numeric := fd.Gradient(nil, loss, P, &fd.Settings{Formula: five})
	wbtest.RequireClose(t, "G vs finite differences of the loss", numeric, G, 1e-10)

	for name, bad := range map[string]func(){
		"short u":        func() { CodeGradient(K, D, k, idx, acts, u[:D], w) },
		"short w":        func() { CodeGradient(K, D, k, idx, acts, u, w[:2]) },
		"index ≥ K":      func() { CodeGradient(K, D, 1, []int32{int32(K)}, []float64{1}, u[:D], nil) },
		"k not dividing": func() { CodeGradient(K, D, 3, idx[:4], acts[:4], u[:D], nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("%s: CodeGradient did not panic", name)
				}
			}()
			bad()
		}()
	}
}
