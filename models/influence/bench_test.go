package influence

import (
	"testing"

	"github.com/protolab/protolab/workbench/wbtest"
)

// BenchmarkCodeCacheScores times the postings scan of one query (doc.go, equation 11) at the Small preset's size:
// 111,488 tokens with k = 8 of K = 256 columns, D = 32, and a query touching 192 columns.
func BenchmarkCodeCacheScores(b *testing.B) {
	rng := wbtest.RNG(1)
	const K, D, k, T, nSeq = 256, 32, 8, 32, 3484
	c, err := NewCodeCache(K, D, k)
	if err != nil {
		b.Fatal(err)
	}
	for s := 0; s < nSeq; s++ {
		idx, acts, u := toyCodes(rng, T, K, D, k)
		if err := c.AddSequence(idx, f32(acts), f32(u)); err != nil {
			b.Fatal(err)
		}
	}
	c.Index()
	cols := make([]int32, 192)
	h := make([][]float64, len(cols))
	for n := range cols {
		cols[n] = int32(n)
		h[n] = randVec(rng, D)
	}
	for _, m := range []struct {
		name string
		fn   func([]int32, [][]float64) []float64
	}{{"postings", c.scoresPostings}, {"scan", c.scoresScan}} {
		b.Run(m.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = m.fn(cols, h)
			}
		})
	}
}

// BenchmarkColumnCacheScores times equation 12 over every column (a full-co-usage query) at the Small preset's
// size: 3,484 sequences of 32 tokens with k = 8 of K = 256 columns, D = 32.
func BenchmarkColumnCacheScores(b *testing.B) {
	rng := wbtest.RNG(1)
	const K, D, k, T, nSeq = 256, 32, 8, 32, 3484
	c, err := NewColumnCache(K, D)
	if err != nil {
		b.Fatal(err)
	}
	for s := 0; s < nSeq; s++ {
		idx, acts, u := toyCodes(rng, T, K, D, k)
		if err := c.AddSequence(ColumnGradients(D, k, idx, acts, u)); err != nil {
			b.Fatal(err)
		}
	}
	c.Index()
	cols := make([]int32, K)
	h := make([][]float64, K)
	for j := range cols {
		cols[j], h[j] = int32(j), randVec(rng, D)
	}
	b.ReportMetric(float64(c.NumPostings()), "postings")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = c.Scores(cols, h)
	}
}
