package influence

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
	"os"
	"slices"

	"github.com/pkg/errors"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// ColumnCache is the per-sequence form of the cached statistics (doc.go, equation 12; docs/spec/prism.md §6.2 option A):
// for every training sequence s and every column j of its active set, the gradient column g_{s,j} [D], stored once
// and grouped by column, so that the postings of column j are the (s, g_{s,j}) of the sequences that use it. Unlike
// CodeCache it keeps no per-token rows, so a column may hold any gradient the caller sums per sequence (PRISM: the
// routing term ∂a/∂P besides a_{t,j} u_t), at the price of per-token attribution. Build it with NewColumnCache,
// AddSequence for each sequence in order, then Index.
type ColumnCache struct {
	K, D int
	// NumSeqs is the number of sequences added.
	NumSeqs int
	// ColStart [K+1] delimit the postings of each column; PostSeq [N_post] is their sequence and PostGrad
	// [N_post, D] the column g_{s,j}.
	ColStart []int64
	PostSeq  []int32
	PostGrad []float32

	// Sequence-major rows kept between AddSequence and Index.
	rowCols []int32
	rowGrad []float32
}

// NewColumnCache returns an empty cache of K columns of width D. It fails on non-positive sizes.
func NewColumnCache(K, D int) (*ColumnCache, error) {
	if K <= 0 || D <= 0 {
		return nil, errors.Errorf("influence.NewColumnCache: K=%d, D=%d; want positive sizes", K, D)
	}
	return &ColumnCache{K: K, D: D}, nil
}

// AddSequence appends the next sequence: its columns cols (strictly ascending, in [0, K)) and g [len(cols)][D]. It
// fails on bad sizes, on unsorted columns and after Index.
func (c *ColumnCache) AddSequence(cols []int32, g [][]float64) error {
	if len(cols) != len(g) {
		return errors.Errorf("influence.ColumnCache.AddSequence: %d columns but %d vectors", len(cols), len(g))
	}
	for n, j := range cols {
		if j < 0 || int(j) >= c.K || (n > 0 && j <= cols[n-1]) {
			return errors.Errorf("influence.ColumnCache.AddSequence: columns %v are not strictly ascending in [0, %d)", cols, c.K)
		}
		if len(g[n]) != c.D {
			return errors.Errorf("influence.ColumnCache.AddSequence: vector %d has length %d, want %d", n, len(g[n]), c.D)
		}
	}
	if c.ColStart != nil {
		return errors.New("influence.ColumnCache.AddSequence: the cache is already indexed")
	}
	// A sequence boundary is a marker −1 in rowCols, so that Index can recover the sequence numbers.
	c.rowCols = append(c.rowCols, -1)
	c.rowCols = append(c.rowCols, cols...)
	for _, v := range g {
		for _, x := range v {
			c.rowGrad = append(c.rowGrad, float32(x))
		}
	}
	c.NumSeqs++
	return nil
}

// Index groups the rows by column (counting sort; within a column, sequences stay in order) and frees the rows.
func (c *ColumnCache) Index() {
	if c.ColStart != nil {
		return
	}
	D := c.D
	start := make([]int64, c.K+1)
	for _, j := range c.rowCols {
		if j >= 0 {
			start[j+1]++
		}
	}
	for j := 0; j < c.K; j++ {
		start[j+1] += start[j]
	}
	n := start[c.K]
	c.PostSeq, c.PostGrad = make([]int32, n), make([]float32, n*int64(D))
	next := append([]int64(nil), start[:c.K]...)
	s, row := int32(-1), 0
	for _, j := range c.rowCols {
		if j < 0 {
			s++
			continue
		}
		p := next[j]
		next[j]++
		c.PostSeq[p] = s
		copy(c.PostGrad[p*int64(D):(p+1)*int64(D)], c.rowGrad[row*D:(row+1)*D])
		row++
	}
	c.ColStart, c.rowCols, c.rowGrad = start, nil, nil
}

// NumPostings returns the number of stored columns Σ_s |act(s)| (0 before Index).
func (c *ColumnCache) NumPostings() int { return len(c.PostSeq) }

// Bytes returns the memory of the indexed cache: 4 + 4D bytes per posting plus the offsets.
func (c *ColumnCache) Bytes() int64 {
	return int64(8*len(c.ColStart) + 4*len(c.PostSeq) + 4*len(c.PostGrad))
}

// Scores returns, for every sequence s, Σ_n ⟨h_n, g_{s,cols[n]}⟩ over the query columns cols with vectors
// h [len(cols)][D] (equation 12): with h = H⁻¹ vec(G_q) the influence I(q, s), whatever preconditioner produced h.
// Panics if Index was not called, on bad sizes or on a column outside [0, K).
func (c *ColumnCache) Scores(cols []int32, h [][]float64) []float64 {
	if c.ColStart == nil || len(cols) != len(h) {
		panic(errors.Errorf("influence.ColumnCache.Scores: indexed=%v, %d columns, %d vectors", c.ColStart != nil, len(cols), len(h)))
	}
	D := c.D
	scores := make([]float64, c.NumSeqs)
	h32 := make([]float32, D)
	var y []float32
	for n, j := range cols {
		if j < 0 || int(j) >= c.K || len(h[n]) != D {
			panic(errors.Errorf("influence.ColumnCache.Scores: column %d with a vector of length %d (K=%d, D=%d)", j, len(h[n]), c.K, D))
		}
		lo, hi := c.ColStart[j], c.ColStart[j+1]
		if lo == hi {
			continue
		}
		// The postings of column j are a [n_j, D] matrix: one float32 matrix-vector product (gonum's assembly
		// kernels), each dot product of D terms accumulated in float32, then summed per sequence in float64.
		for d, v := range h[n] {
			h32[d] = float32(v)
		}
		y = slices.Grow(y[:0], int(hi-lo))[:hi-lo]
		blas32.Gemv(blas.NoTrans, 1, blas32.General{Rows: int(hi - lo), Cols: D, Stride: D, Data: c.PostGrad[lo*int64(D) : hi*int64(D)]},
			blas32.Vector{N: D, Inc: 1, Data: h32}, 0, blas32.Vector{N: int(hi - lo), Inc: 1, Data: y})
		for p, v := range y {
			scores[c.PostSeq[lo+int64(p)]] += float64(v)
		}
	}
	return scores
}

// columnMagic starts a ColumnCache file; the version is its last byte.
var columnMagic = [8]byte{'P', 'L', 'C', 'O', 'L', 'S', 'S', 1}

// Save writes the cache to path atomically (little-endian: magic, K, D, N_seq, N_post as int64, then ColStart,
// PostSeq, PostGrad). Index must have been called.
func (c *ColumnCache) Save(path string) error {
	if c.ColStart == nil {
		return errors.Errorf("influence.ColumnCache.Save %s: call Index first", path)
	}
	header := []int64{int64(c.K), int64(c.D), int64(c.NumSeqs), int64(len(c.PostSeq))}
	return writeArrays(path, columnMagic, header, c.ColStart, c.PostSeq, c.PostGrad)
}

// LoadColumnCache reads a cache written by Save, checking its magic, that the header's sizes describe exactly the
// file's bytes (before allocating), and its offsets and sequences.
func LoadColumnCache(path string) (*ColumnCache, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "influence.LoadColumnCache")
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var magic [8]byte
	header := make([]int64, 4)
	if err := binary.Read(r, binary.LittleEndian, &magic); err != nil || magic != columnMagic {
		return nil, errors.Errorf("influence.LoadColumnCache %s: not a column cache (magic %q)", path, magic[:])
	}
	if err := binary.Read(r, binary.LittleEndian, header); err != nil {
		return nil, errors.Wrapf(err, "influence.LoadColumnCache %s: header", path)
	}
	K, D, nSeq, nPost := header[0], header[1], header[2], header[3]
	if K <= 0 || D <= 0 || nSeq < 0 || nPost < 0 || K > math.MaxInt32 || D > math.MaxInt32 || nSeq > math.MaxInt32 ||
		nPost > nSeq*K { // postings hold int32 sequences; both factors are below 2^31, so nSeq·K fits
		return nil, errors.Errorf("influence.LoadColumnCache %s: bad header %v", path, header)
	}
	var l cacheLayout
	l.add(int64(len(columnMagic))+8*int64(len(header)), 1)
	l.add(K+1, 8)
	l.add(nPost, 4)
	l.add(l.mul(nPost, D), 4)
	if err := l.check(f, header); err != nil {
		return nil, errors.WithMessagef(err, "influence.LoadColumnCache %s", path)
	}
	c := &ColumnCache{K: int(K), D: int(D), NumSeqs: int(nSeq), ColStart: make([]int64, K+1),
		PostSeq: make([]int32, nPost), PostGrad: make([]float32, nPost*D)}
	for _, x := range []any{c.ColStart, c.PostSeq, c.PostGrad} {
		if err := binary.Read(r, binary.LittleEndian, x); err != nil {
			return nil, errors.Wrapf(err, "influence.LoadColumnCache %s: truncated", path)
		}
	}
	if c.ColStart[0] != 0 || c.ColStart[K] != nPost {
		return nil, errors.Errorf("influence.LoadColumnCache %s: offsets disagree with the header", path)
	}
	for j := 0; j < int(K); j++ {
		if c.ColStart[j+1] < c.ColStart[j] {
			return nil, errors.Errorf("influence.LoadColumnCache %s: offsets of column %d decrease", path, j)
		}
	}
	for _, s := range c.PostSeq {
		if s < 0 || int64(s) >= nSeq {
			return nil, errors.Errorf("influence.LoadColumnCache %s: sequence %d outside [0, %d)", path, s, nSeq)
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, errors.Errorf("influence.LoadColumnCache %s: trailing bytes", path)
	}
	return c, nil
}
