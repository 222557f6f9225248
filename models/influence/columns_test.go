package influence

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/protolab/protolab/workbench/wbtest"
)

// toyColumns builds nSeq sequences of random codes (T tokens each) and returns a ColumnCache of their column
// gradients (equation 7), the CodeCache of the same tokens, and the dense per-sequence gradients [nSeq][K·D].
func toyColumns(t *testing.T, nSeq, T, K, D, k int) (*ColumnCache, *CodeCache, [][]float64) {
	t.Helper()
	rng := wbtest.RNG(31)
	cc, err := NewColumnCache(K, D)
	if err != nil {
		t.Fatal(err)
	}
	codes, err := NewCodeCache(K, D, k)
	if err != nil {
		t.Fatal(err)
	}
	var dense [][]float64
	for s := 0; s < nSeq; s++ {
		idx, acts, u := toyCodes(rng, T, K, D, k)
		cols, g := ColumnGradients(D, k, idx, acts, u)
		if err := cc.AddSequence(cols, g); err != nil {
			t.Fatal(err)
		}
		if err := codes.AddSequence(idx, f32(acts), f32(u)); err != nil {
			t.Fatal(err)
		}
		dense = append(dense, refColumns(K, D, k, idx, acts, u))
	}
	cc.Index()
	codes.Index()
	return cc, codes, dense
}

// TestColumnCache_ScoresAreDotProductsOfSequenceGradients: equation 12 for a query touching a few columns equals the
// plain double loop Σ_j Σ_d x_{j,d}·G_s[j, d] over the dense per-sequence gradients.
func TestColumnCache_ScoresAreDotProductsOfSequenceGradients(t *testing.T) {
	K, D, k := 7, 5, 3
	cc, _, dense := toyColumns(t, 9, 4, K, D, k)
	rng := wbtest.RNG(32)
	cols := []int32{0, 2, 3, 6}
	h := make([][]float64, len(cols))
	for n := range h {
		h[n] = randVec(rng, D)
	}
	got := cc.Scores(cols, h)
	for s, G := range dense {
		want := 0.0
		for n, j := range cols {
			for d := 0; d < D; d++ {
				want += h[n][d] * G[int(j)*D+d]
			}
		}
		// g_{s,j} is stored in float32.
		wbtest.RequireClose(t, "score", []float64{want}, got[s:s+1], 1e-5)
	}
	if cc.NumSeqs != len(dense) {
		t.Fatalf("NumSeqs=%d, want %d", cc.NumSeqs, len(dense))
	}
}

// TestColumnCache_AgreesWithCodeCache: for columns of the form Σ_t a_{t,j} u_t, the per-sequence cache (option A) and
// the per-token cache (option B) score every query alike.
func TestColumnCache_AgreesWithCodeCache(t *testing.T) {
	K, D, k := 11, 4, 3
	cc, codes, _ := toyColumns(t, 13, 6, K, D, k)
	rng := wbtest.RNG(33)
	var cols []int32
	var h [][]float64
	for j := 0; j < K; j += 2 {
		cols, h = append(cols, int32(j)), append(h, randVec(rng, D))
	}
	wbtest.RequireClose(t, "scores", codes.Scores(cols, h), cc.Scores(cols, h), 1e-5)
	total := 0
	for s := 0; s < codes.NumSeqs(); s++ {
		c, _ := codes.SequenceColumns(s)
		total += len(c)
	}
	if cc.NumPostings() != total {
		t.Fatalf("NumPostings=%d, want Σ_s |act(s)| = %d", cc.NumPostings(), total)
	}
}

func TestColumnCache_BadInput(t *testing.T) {
	if _, err := NewColumnCache(0, 3); err == nil {
		t.Fatal("K=0 accepted")
	}
	cc, _ := NewColumnCache(4, 2)
	for _, tc := range []struct {
		cols []int32
		g    [][]float64
	}{
		{[]int32{1, 1}, [][]float64{{1, 2}, {3, 4}}}, // not strictly ascending
		{[]int32{4}, [][]float64{{1, 2}}},            // outside [0, K)
		{[]int32{0}, [][]float64{{1, 2, 3}}},         // wrong width
		{[]int32{0, 1}, [][]float64{{1, 2}}},         // count mismatch
	} {
		if err := cc.AddSequence(tc.cols, tc.g); err == nil {
			t.Fatalf("AddSequence(%v, %v) accepted", tc.cols, tc.g)
		}
	}
	if err := cc.AddSequence([]int32{0, 3}, [][]float64{{1, 2}, {3, 4}}); err != nil {
		t.Fatal(err)
	}
	cc.Index()
	if err := cc.AddSequence([]int32{1}, [][]float64{{1, 2}}); err == nil {
		t.Fatal("AddSequence after Index accepted")
	}
	if err := (&ColumnCache{K: 2, D: 1}).Save(filepath.Join(t.TempDir(), "x.bin")); err == nil {
		t.Fatal("Save before Index accepted")
	}
}

func TestColumnCache_SaveLoadRoundTrip(t *testing.T) {
	cc, _, _ := toyColumns(t, 6, 5, 9, 3, 2)
	dir := t.TempDir()
	path := filepath.Join(dir, "columns.bin")
	if err := cc.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadColumnCache(path)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if back.K != cc.K || back.D != cc.D || back.NumSeqs != cc.NumSeqs || back.Bytes() != cc.Bytes() {
		t.Fatalf("reloaded sizes differ: %+v vs %+v", back, cc)
	}
	cols := []int32{1, 4, 8}
	h := [][]float64{{1, -2, 0.5}, {0.3, 0, 1}, {-1, 1, 2}}
	wbtest.RequireClose(t, "reloaded", cc.Scores(cols, h), back.Scores(cols, h), 0)

	// A truncated file, another file format and trailing bytes are errors that name the file.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"truncated": raw[:len(raw)-3],
		"foreign":   append([]byte("PLCODES\x01"), raw[8:]...),
		"trailing":  append(append([]byte(nil), raw...), 0),
	} {
		p := filepath.Join(dir, name+".bin")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadColumnCache(p); err == nil {
			t.Fatalf("%s file loaded", name)
		}
	}
	if _, err := LoadColumnCache(filepath.Join(dir, "missing.bin")); err == nil {
		t.Fatal("missing file loaded")
	}
}

// TestSparseSym_AccumulatorRoundTrip: CSR → accumulator → CSR is the identity (both triangles kept).
func TestSparseSym_AccumulatorRoundTrip(t *testing.T) {
	rng := wbtest.RNG(34)
	idx, acts, u := toyCodes(rng, 20, 6, 2, 3)
	st := NewCodeStats(6, 2, true)
	if err := st.Add(3, idx, acts, nil, nil, u); err != nil {
		t.Fatal(err)
	}
	s := st.CoUse.Sparse()
	back := s.Accumulator().Sparse()
	wbtest.RequireClose(t, "vals", s.Vals, back.Vals, 0)
	if len(back.Cols) != len(s.Cols) || back.RowStart[6] != s.RowStart[6] {
		t.Fatalf("pattern changed: %v vs %v", back.Cols, s.Cols)
	}
	for p := range s.Cols {
		if s.Cols[p] != back.Cols[p] {
			t.Fatalf("column %d: %d vs %d", p, back.Cols[p], s.Cols[p])
		}
	}
}
