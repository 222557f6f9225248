package influence

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/protolab/protolab/workbench/stats"
	"github.com/protolab/protolab/workbench/wbtest"
)

// toyCodes draws n tokens of k distinct columns in [0, K) with activations in [0, 1) (about one in five exactly 0,
// like a ReLU) and Gaussian output gradients [n, D].
func toyCodes(rng *rand.Rand, n, K, D, k int) (idx []int32, acts, u []float64) {
	for t := 0; t < n; t++ {
		perm := rng.Perm(K)
		for i := 0; i < k; i++ {
			idx = append(idx, int32(perm[i]))
			a := rng.Float64()
			if rng.IntN(5) == 0 {
				a = 0
			}
			acts = append(acts, a)
		}
	}
	return idx, acts, randVec(rng, n*D)
}

func f32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func dense(acc *SymAccumulator) []float64 {
	s := acc.Sparse()
	m := make([]float64, s.K*s.K)
	for i := 0; i < s.K; i++ {
		for p := s.RowStart[i]; p < s.RowStart[i+1]; p++ {
			m[i*s.K+int(s.Cols[p])] = s.Vals[p]
		}
	}
	return m
}

// TestBlocks_ExactWhenOnePrototypePerToken: with k = 1 the co-usage C is diagonal, so H of equation 8 is block
// diagonal and the blocks of equation 9 are its exact inverse (docs/spec/prism.md §12).
func TestBlocks_ExactWhenOnePrototypePerToken(t *testing.T) {
	rng := wbtest.RNG(10)
	K, D, k, n := 5, 3, 1, 40
	idx, acts, u := toyCodes(rng, n, K, D, k)
	weights := make([]float64, n)
	for i := range weights {
		weights[i] = 0.5 + rng.Float64()
	}
	st := NewCodeStats(K, D, true)
	if err := st.Add(k, idx, acts, weights, idx, u); err != nil {
		t.Fatal(err)
	}
	C, Cw := dense(st.CoUse), dense(st.CoUseW)
	for i := 0; i < K; i++ {
		for j := 0; j < K; j++ {
			if i != j && C[i*K+j] != 0 {
				t.Fatalf("C[%d][%d] = %g with one prototype per token", i, j, C[i*K+j])
			}
		}
	}
	// E = 2λ_rec·C_w + Δ with Δ_jj = 2λ_1 + 2λ_2·n_j.
	E := make([]float64, K*K)
	eDiag := make([]float64, K)
	for j := 0; j < K; j++ {
		eDiag[j] = 2*0.1*Cw[j*K+j] + 2*0.1 + 2*0.3*float64(st.Counts[j])
		E[j*K+j] = eDiag[j]
	}
	S := st.FisherMean()
	b, err := NewBlocks(S, D, st.Usage, eDiag, -1, DefaultDampingScale)
	if err != nil {
		t.Fatal(err)
	}
	H := refPrototypeHessian(C, E, S, K, D, b.Damping)
	x := randVec(rng, K*D)
	want := refSolve(t, H, x)
	for j := 0; j < K; j++ {
		wbtest.RequireClose(t, "block inverse", want[j*D:(j+1)*D], b.Apply(j, x[j*D:(j+1)*D]), 1e-10)
	}
	// The heuristic damping of equation 10, from loops.
	sigmaMean := 0.0
	for d := 0; d < D; d++ {
		sigmaMean += S[d*D+d] / float64(D) // mean eigenvalue = trace/D
	}
	cMean, eMean := stats.Mean(st.Usage), stats.Mean(eDiag)
	if want := 0.1 * (cMean*sigmaMean + eMean); !wbtest.Close(want, b.Damping, 1e-12) {
		t.Fatalf("damping %g, want %g", b.Damping, want)
	}
}

// toyKronSum builds H = C ⊗ S + E ⊗ I + λI of equation 8 from n toy tokens of k columns (C, C_w and S from their
// codes), with E = 0.2·C_w + diag(eDiag) and λ = 0.05, and returns it with its explicit matrix.
func toyKronSum(t *testing.T, rng *rand.Rand, K, D, k, n int, eDiag []float64) (h *KronSum, Hm []float64) {
	t.Helper()
	idx, acts, u := toyCodes(rng, n, K, D, k)
	st := NewCodeStats(K, D, true)
	if err := st.Add(k, idx, acts, nil, nil, u); err != nil {
		t.Fatal(err)
	}
	E := st.CoUseW.Scaled(0.2)
	E.AddDiag(eDiag)
	h = &KronSum{D: D, K: K, S: st.FisherMean(), C: st.CoUse.Sparse(), E: E.Sparse(), Damping: 0.05}
	return h, refPrototypeHessian(dense(st.CoUse), dense(E), h.S, K, D, h.Damping)
}

// TestKronSum_CGMatchesDenseSolve: the preconditioned CG reference and the eigenbasis solver equal a dense solve of
// the explicit H with a non-diagonal C (k = 2), and Apply equals the explicit matrix-vector product.
func TestKronSum_CGMatchesDenseSolve(t *testing.T) {
	rng := wbtest.RNG(11)
	K, D := 6, 4
	h, Hm := toyKronSum(t, rng, K, D, 2, 30, []float64{0.3, 0.3, 0.3, 0.3, 0.3, 0.7})
	x := randVec(rng, K*D)
	want := make([]float64, K*D)
	for r := range want {
		for c := range x {
			want[r] += Hm[r*K*D+c] * x[c]
		}
	}
	wbtest.RequireClose(t, "H x", want, h.Apply(x), 1e-12)
	pre, err := NewBlocks(h.S, D, h.C.Diag(), h.E.Diag(), h.Damping, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Blocks{pre, nil} {
		got, st, err := h.Solve(x, p, 1e-12, 500)
		if err != nil {
			t.Fatal(err)
		}
		if st.Iterations == 0 {
			t.Fatal("CG took no iteration")
		}
		wbtest.RequireClose(t, "CG solve", refSolve(t, Hm, x), got, 1e-9)
	}
	es, err := NewKronEigenSolver(h)
	if err != nil {
		t.Fatal(err)
	}
	wbtest.RequireClose(t, "eigenbasis solve", refSolve(t, Hm, x), es.Solve(x), 1e-10)
	// A right-hand side with zero rows (a query's inactive prototypes), which Solve skips.
	sparse := append([]float64(nil), x...)
	clear(sparse[D : 3*D])
	clear(sparse[5*D:])
	wbtest.RequireClose(t, "eigenbasis solve, zero rows", refSolve(t, Hm, sparse), es.Solve(sparse), 1e-10)
	if _, _, err := h.Solve(x, nil, 1e-12, 1); err == nil {
		t.Fatal("CG reported convergence after one iteration")
	}
	if off := h.C.OffDiagonalMass(); !(off > 0 && off < 1) {
		t.Fatalf("off-diagonal mass %g, want in (0, 1) for k = 2", off)
	}
}

// TestCodeCache_ScoresMatchBlockInfluence: the postings scores of equation 11 equal Σ_j g_qjᵀ (H_jj)⁻¹ g_sj computed
// from dense per-sequence gradients (loops), and unpreconditioned they equal ⟨G_q, G_s⟩.
func TestCodeCache_ScoresMatchBlockInfluence(t *testing.T) {
	rng := wbtest.RNG(12)
	K, D, k := 7, 3, 2
	c, err := NewCodeCache(K, D, k)
	if err != nil {
		t.Fatal(err)
	}
	type seq struct {
		idx       []int32
		acts, u   []float64
		denseCols []float64
	}
	var seqs []seq
	st := NewCodeStats(K, D, false)
	for s := 0; s < 5; s++ {
		idx, acts, u := toyCodes(rng, 2+s, K, D, k)
		// Round to float32 first, so the cache and the reference see the same numbers.
		a32, u32 := f32(acts), f32(u)
		acts, u = toF64(a32), toF64(u32)
		if err := c.AddSequence(idx, a32, u32); err != nil {
			t.Fatal(err)
		}
		if err := st.Add(k, idx, acts, nil, nil, u); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq{idx, acts, u, refColumns(K, D, k, idx, acts, u)})
	}
	c.Index()
	e := make([]float64, K)
	for j := range e {
		e[j] = 0.2
	}
	b, err := NewBlocks(st.FisherMean(), D, st.Usage, e, -1, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	qi, qa, qu := toyCodes(rng, 3, K, D, k)
	cols, g := ColumnGradients(D, k, qi, qa, qu)
	gq := refColumns(K, D, k, qi, qa, qu)
	h := make([][]float64, len(cols))
	for n, j := range cols {
		wbtest.RequireClose(t, "query column", gq[int(j)*D:(int(j)+1)*D], g[n], 1e-13)
		h[n] = b.Apply(int(j), g[n])
	}
	scores, plain := c.Scores(cols, h), c.Scores(cols, g)
	// Both strategies of Scores (the query here covers most entries, so Scores scans).
	wbtest.RequireClose(t, "postings vs scan", c.scoresPostings(cols, h), scores, 1e-12)
	wbtest.RequireClose(t, "postings vs scan, plain", c.scoresPostings(cols, g), plain, 1e-12)
	for s, sq := range seqs {
		want, wantPlain := 0.0, 0.0
		for j := 0; j < K; j++ {
			gqj := gq[j*D : (j+1)*D]
			if allZero(gqj) {
				continue
			}
			pj := b.Apply(j, gqj)
			for d := 0; d < D; d++ {
				want += pj[d] * sq.denseCols[j*D+d]
				wantPlain += gqj[d] * sq.denseCols[j*D+d]
			}
		}
		if !wbtest.Close(want, scores[s], 1e-10) || !wbtest.Close(wantPlain, plain[s], 1e-10) {
			t.Fatalf("sequence %d: scores %g, %g; want %g, %g", s, scores[s], plain[s], want, wantPlain)
		}
		tok := c.TokenScores(s, cols, h)
		sum := 0.0
		for _, v := range tok {
			sum += v
		}
		if !wbtest.Close(scores[s], sum, 1e-12) {
			t.Fatalf("sequence %d: token scores sum to %g, want %g", s, sum, scores[s])
		}
		sc, sg := c.SequenceColumns(s)
		for n, j := range sc {
			wbtest.RequireClose(t, "sequence column", sq.denseCols[int(j)*D:(int(j)+1)*D], sg[n], 1e-6)
		}
	}
}

func TestCodeCache_SaveLoadRoundTrip(t *testing.T) {
	rng := wbtest.RNG(13)
	K, D, k := 9, 4, 3
	c, err := NewCodeCache(K, D, k)
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 4; s++ {
		idx, acts, u := toyCodes(rng, 3+s, K, D, k)
		if err := c.AddSequence(idx, f32(acts), f32(u)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "codes.bin")
	if err := c.Save(path); err == nil {
		t.Fatal("Save before Index succeeded")
	}
	c.Index()
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCodeCache(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.K != K || got.D != D || got.TopK != k || got.NumSeqs() != 4 || got.NumTokens() != c.NumTokens() ||
		got.Bytes() != c.Bytes() {
		t.Fatalf("loaded sizes K=%d D=%d k=%d seqs=%d tokens=%d bytes=%d", got.K, got.D, got.TopK, got.NumSeqs(), got.NumTokens(), got.Bytes())
	}
	for i := range c.PostAct {
		if got.PostAct[i] != c.PostAct[i] || got.PostTok[i] != c.PostTok[i] || got.PostSeq[i] != c.PostSeq[i] {
			t.Fatalf("posting %d differs after the round trip", i)
		}
	}
	for i := range c.Grads {
		if got.Grads[i] != c.Grads[i] {
			t.Fatalf("gradient %d differs after the round trip", i)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("the folder holds %d entries after the atomic write, want 1", len(entries))
	}
	raw, _ := os.ReadFile(path)
	if err := os.WriteFile(path, raw[:len(raw)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCodeCache(path); err == nil {
		t.Fatal("a truncated cache loaded")
	}
}

func TestCodeCache_PostingsCountNonZeroUses(t *testing.T) {
	rng := wbtest.RNG(14)
	K, D, k := 6, 2, 2
	c, _ := NewCodeCache(K, D, k)
	idx, acts, u := toyCodes(rng, 25, K, D, k)
	if err := c.AddSequence(idx, f32(acts), f32(u)); err != nil {
		t.Fatal(err)
	}
	if err := c.AddSequence([]int32{0, int32(K)}, []float32{1, 1}, make([]float32, D)); err == nil {
		t.Fatal("an index ≥ K was accepted")
	}
	c.Index()
	want := make([]int, K)
	for p, j := range idx {
		if acts[p] != 0 {
			want[j]++
		}
	}
	for j := 0; j < K; j++ {
		if c.Postings(j) != want[j] {
			t.Fatalf("column %d has %d postings, want %d", j, c.Postings(j), want[j])
		}
	}
}

func TestCodeStats_MatchLoops(t *testing.T) {
	rng := wbtest.RNG(15)
	K, D, k, n := 5, 3, 3, 12
	idx, acts, u := toyCodes(rng, n, K, D, k)
	w := randVec(rng, n)
	counted := make([]int32, n)
	for t := range counted {
		counted[t] = idx[t*k]
	}
	st := NewCodeStats(K, D, true)
	if err := st.Add(k, idx, acts, w, counted, u); err != nil {
		t.Fatal(err)
	}
	C, Cw := make([]float64, K*K), make([]float64, K*K)
	usage, counts := make([]float64, K), make([]float64, K)
	for t := 0; t < n; t++ {
		for i := 0; i < k; i++ {
			for i2 := 0; i2 < k; i2++ {
				C[int(idx[t*k+i])*K+int(idx[t*k+i2])] += acts[t*k+i] * acts[t*k+i2]
				Cw[int(idx[t*k+i])*K+int(idx[t*k+i2])] += w[t] * acts[t*k+i] * acts[t*k+i2]
			}
			usage[idx[t*k+i]] += acts[t*k+i] * acts[t*k+i]
		}
		counts[counted[t]]++
	}
	wbtest.RequireClose(t, "C", C, dense(st.CoUse), 1e-13)
	wbtest.RequireClose(t, "C_w", Cw, dense(st.CoUseW), 1e-13)
	wbtest.RequireClose(t, "c_j", usage, st.Usage, 1e-13)
	wbtest.RequireClose(t, "c_j = diag C", st.CoUse.Sparse().Diag(), st.Usage, 1e-13)
	got := make([]float64, K)
	for j, v := range st.Counts {
		got[j] = float64(v)
	}
	wbtest.RequireClose(t, "n_j", counts, got, 0)
	S := make([]float64, D*D)
	for t := 0; t < n; t++ {
		for a := 0; a < D; a++ {
			for b := 0; b < D; b++ {
				S[a*D+b] += u[t*D+a] * u[t*D+b] / float64(n)
			}
		}
	}
	wbtest.RequireClose(t, "S", S, st.FisherMean(), 1e-13)
}

// TestLDS_PerfectAndReversedPredictions: when retrained losses are exactly minus the summed scores the LDS is 1; when
// they are the summed scores it is −1.
func TestLDS_PerfectAndReversedPredictions(t *testing.T) {
	rng := wbtest.RNG(16)
	nq, ns, M := 3, 10, 8
	scores := make([][]float64, nq)
	for q := range scores {
		scores[q] = randVec(rng, ns)
	}
	subsets := make([][]int, M)
	good, bad := make([][]float64, M), make([][]float64, M)
	for m := range subsets {
		subsets[m] = rng.Perm(ns)[:ns/2]
		good[m], bad[m] = make([]float64, nq), make([]float64, nq)
		for q := range scores {
			for _, s := range subsets[m] {
				good[m][q] -= scores[q][s]
			}
			bad[m][q] = -good[m][q]
		}
	}
	if v, _, err := LDS(scores, subsets, good); err != nil || !wbtest.Close(1, v, 1e-12) {
		t.Fatalf("LDS = %g, %v; want 1", v, err)
	}
	if v, _, err := LDS(scores, subsets, bad); err != nil || !wbtest.Close(-1, v, 1e-12) {
		t.Fatalf("LDS = %g, %v; want −1", v, err)
	}
	if _, _, err := LDS(scores, subsets[:2], good[:2]); err == nil {
		t.Fatal("LDS with 2 subsets succeeded")
	}
}
