package influence

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
	"os"
	"sort"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/store"
)

// CodeCache is the cached statistics of a sparse-coded linear layer over an attribution corpus (doc.go, equations
// 7 and 11; docs/spec/prism.md §6.2 option B): per token its code (k column indices and activations) and output gradient
// u_t, grouped by sequence, and per column j the postings (sequence, token, a_{t,j}) of the tokens that use it with a
// non-zero activation. Build it with NewCodeCache, AddSequence for each sequence in order, then Index.
type CodeCache struct {
	K, D, TopK int
	// SeqStart [N_seq+1] are token offsets: sequence s owns tokens SeqStart[s] … SeqStart[s+1]−1.
	SeqStart []int64
	// Indices and Acts [N_tok, k] are the codes; Grads [N_tok, D] the output gradients u_t.
	Indices []int32
	Acts    []float32
	Grads   []float32
	// PostStart [K+1] delimit the postings of each column; PostSeq, PostTok and PostAct are their sequence, global
	// token index and activation a_{t,j}.
	PostStart []int64
	PostSeq   []int32
	PostTok   []int32
	PostAct   []float32
}

// NewCodeCache returns an empty cache for K columns, output width D and k entries per code. It fails on
// non-positive sizes or k > K.
func NewCodeCache(K, D, k int) (*CodeCache, error) {
	if K <= 0 || D <= 0 || k <= 0 || k > K {
		return nil, errors.Errorf("influence.NewCodeCache: K=%d, D=%d, k=%d; want positive sizes with k ≤ K", K, D, k)
	}
	return &CodeCache{K: K, D: D, TopK: k, SeqStart: []int64{0}}, nil
}

// NumSeqs returns the number of sequences added.
func (c *CodeCache) NumSeqs() int { return len(c.SeqStart) - 1 }

// NumTokens returns the number of tokens added.
func (c *CodeCache) NumTokens() int { return int(c.SeqStart[len(c.SeqStart)-1]) }

// AddSequence appends one sequence of n tokens: idx [n, k] column indices in [0, K), acts [n, k] activations,
// grads [n, D] output gradients. It invalidates the postings until Index is called again.
func (c *CodeCache) AddSequence(idx []int32, acts, grads []float32) error {
	k, D := c.TopK, c.D
	if len(idx)%k != 0 || len(acts) != len(idx) || len(grads) != len(idx)/k*D {
		return errors.Errorf("influence.CodeCache.AddSequence: len(idx)=%d, len(acts)=%d, len(grads)=%d; want n·%d, n·%d, n·%d",
			len(idx), len(acts), len(grads), k, k, D)
	}
	for _, j := range idx {
		if j < 0 || int(j) >= c.K {
			return errors.Errorf("influence.CodeCache.AddSequence: index %d outside [0, %d)", j, c.K)
		}
	}
	c.Indices = append(c.Indices, idx...)
	c.Acts = append(c.Acts, acts...)
	c.Grads = append(c.Grads, grads...)
	c.SeqStart = append(c.SeqStart, c.SeqStart[len(c.SeqStart)-1]+int64(len(idx)/k))
	c.PostStart = nil
	return nil
}

// Index builds the postings of every column from the codes (entries with a zero activation are left out).
func (c *CodeCache) Index() {
	k := c.TopK
	counts := make([]int64, c.K+1)
	for p, j := range c.Indices {
		if c.Acts[p] != 0 {
			counts[j+1]++
		}
	}
	for j := 0; j < c.K; j++ {
		counts[j+1] += counts[j]
	}
	c.PostStart = append([]int64(nil), counts...)
	n := counts[c.K]
	c.PostSeq, c.PostTok, c.PostAct = make([]int32, n), make([]int32, n), make([]float32, n)
	next := counts[:c.K]
	for s := 0; s < c.NumSeqs(); s++ {
		for t := c.SeqStart[s]; t < c.SeqStart[s+1]; t++ {
			for i := 0; i < k; i++ {
				a := c.Acts[t*int64(k)+int64(i)]
				if a == 0 {
					continue
				}
				j := c.Indices[t*int64(k)+int64(i)]
				p := next[j]
				next[j]++
				c.PostSeq[p], c.PostTok[p], c.PostAct[p] = int32(s), int32(t), a
			}
		}
	}
}

// Postings returns the number of postings of column j (0 before Index).
func (c *CodeCache) Postings(j int) int {
	if c.PostStart == nil {
		return 0
	}
	return int(c.PostStart[j+1] - c.PostStart[j])
}

// Bytes returns the memory of the cache's arrays: N_tok·(8k + 4D) for the codes and gradients plus 12 bytes per
// posting and the offsets.
func (c *CodeCache) Bytes() int64 {
	return int64(8*len(c.SeqStart)+4*len(c.Indices)+4*len(c.Acts)+4*len(c.Grads)) +
		int64(8*len(c.PostStart)+4*len(c.PostSeq)+4*len(c.PostTok)+4*len(c.PostAct))
}

// ColumnGradients returns the non-zero columns of G = Σ_t u_t a_tᵀ (doc.go, equation 7) of n tokens: idx [n, k],
// acts [n, k], grads [n, D] → the columns j (ascending) and g_j [D] for each. Panics on inconsistent lengths.
func ColumnGradients(D, k int, idx []int32, acts, grads []float64) (cols []int32, g [][]float64) {
	if len(idx)%k != 0 || len(acts) != len(idx) || len(grads) != len(idx)/k*D {
		panic(errors.Errorf("influence.ColumnGradients: len(idx)=%d, len(acts)=%d, len(grads)=%d; want n·%d, n·%d, n·%d",
			len(idx), len(acts), len(grads), k, k, D))
	}
	byCol := map[int32][]float64{}
	for p, j := range idx {
		a := acts[p]
		if a == 0 {
			continue
		}
		col, ok := byCol[j]
		if !ok {
			col = make([]float64, D)
			byCol[j] = col
		}
		u := grads[p/k*D : (p/k+1)*D]
		for d, v := range u {
			col[d] += a * v
		}
	}
	for j := range byCol {
		cols = append(cols, j)
	}
	sort.Slice(cols, func(a, b int) bool { return cols[a] < cols[b] })
	for _, j := range cols {
		g = append(g, byCol[j])
	}
	return cols, g
}

// SequenceColumns returns ColumnGradients of training sequence s from the cache.
func (c *CodeCache) SequenceColumns(s int) (cols []int32, g [][]float64) {
	lo, hi := c.SeqStart[s], c.SeqStart[s+1]
	k, D := int64(c.TopK), int64(c.D)
	return ColumnGradients(c.D, c.TopK, c.Indices[lo*k:hi*k], toF64(c.Acts[lo*k:hi*k]), toF64(c.Grads[lo*D:hi*D]))
}

func toF64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// Scores returns, for every sequence s, Σ_j Σ_{(s, t, a) ∈ post_j} a·⟨h_j, u_t⟩ for the query columns cols with
// vectors h [len(cols)][D]: with h_j = (H_jj)⁻¹ g_{q,j} the cached influence of equation 11, with h_j = g_{q,j} the
// prototype-space gradient dot product. When the query's postings cover more than a quarter of all code entries it
// scans the tokens in order instead, forming Σ_{i: j_i ∈ cols} a_{t,i} h_{j_i} per token before one dot product with
// u_t (the same sum, read sequentially). Panics if Index was not called or on bad sizes.
func (c *CodeCache) Scores(cols []int32, h [][]float64) []float64 {
	if c.PostStart == nil || len(cols) != len(h) {
		panic(errors.Errorf("influence.CodeCache.Scores: postings built=%v, %d columns, %d vectors", c.PostStart != nil, len(cols), len(h)))
	}
	postings := int64(0)
	for n, j := range cols {
		if len(h[n]) != c.D {
			panic(errors.Errorf("influence.CodeCache.Scores: vector %d has length %d, want %d", n, len(h[n]), c.D))
		}
		postings += c.PostStart[j+1] - c.PostStart[j]
	}
	if 4*postings > int64(len(c.Indices)) {
		return c.scoresScan(cols, h)
	}
	return c.scoresPostings(cols, h)
}

// scoresPostings is Scores by walking the postings of each query column.
func (c *CodeCache) scoresPostings(cols []int32, h [][]float64) []float64 {
	scores := make([]float64, c.NumSeqs())
	D := c.D
	for n, j := range cols {
		hj := h[n]
		for p := c.PostStart[j]; p < c.PostStart[j+1]; p++ {
			t := int(c.PostTok[p])
			scores[c.PostSeq[p]] += float64(c.PostAct[p]) * dot32(hj, c.Grads[t*D:(t+1)*D])
		}
	}
	return scores
}

// scoresScan is Scores by one sequential pass over the tokens.
func (c *CodeCache) scoresScan(cols []int32, h [][]float64) []float64 {
	byCol := make([][]float64, c.K)
	for n, j := range cols {
		byCol[j] = h[n]
	}
	scores := make([]float64, c.NumSeqs())
	D, k := c.D, c.TopK
	v := make([]float64, D)
	for s := 0; s < c.NumSeqs(); s++ {
		total := 0.0
		for t := int(c.SeqStart[s]); t < int(c.SeqStart[s+1]); t++ {
			used := false
			for i := 0; i < k; i++ {
				hj, a := byCol[c.Indices[t*k+i]], c.Acts[t*k+i]
				if hj == nil || a == 0 {
					continue
				}
				if !used {
					clear(v)
					used = true
				}
				af := float64(a)
				for d, x := range hj {
					v[d] += af * x
				}
			}
			if used {
				total += dot32(v, c.Grads[t*D:(t+1)*D])
			}
		}
		scores[s] = total
	}
	return scores
}

// dot32 returns Σ_d h_d·u_d for len(u) ≥ len(h), accumulated in float64 over four independent sums.
func dot32(h []float64, u []float32) float64 {
	u = u[:len(h)]
	var s0, s1, s2, s3 float64
	d := 0
	for ; d+4 <= len(h); d += 4 {
		s0 += h[d] * float64(u[d])
		s1 += h[d+1] * float64(u[d+1])
		s2 += h[d+2] * float64(u[d+2])
		s3 += h[d+3] * float64(u[d+3])
	}
	for ; d < len(h); d++ {
		s0 += h[d] * float64(u[d])
	}
	return (s0 + s1) + (s2 + s3)
}

// TokenScores returns the per-token contributions of Scores to sequence s: [tokens of s], their sum is Scores[s].
func (c *CodeCache) TokenScores(s int, cols []int32, h [][]float64) []float64 {
	lo, hi := c.SeqStart[s], c.SeqStart[s+1]
	out := make([]float64, hi-lo)
	k, D := c.TopK, c.D
	byCol := make(map[int32][]float64, len(cols))
	for n, j := range cols {
		byCol[j] = h[n]
	}
	for t := lo; t < hi; t++ {
		for i := 0; i < k; i++ {
			p := int(t)*k + i
			hj, ok := byCol[c.Indices[p]]
			if !ok || c.Acts[p] == 0 {
				continue
			}
			out[t-lo] += float64(c.Acts[p]) * dot32(hj, c.Grads[int(t)*D:(int(t)+1)*D])
		}
	}
	return out
}

// codeMagic starts a CodeCache file; the version is its last byte.
var codeMagic = [8]byte{'P', 'L', 'C', 'O', 'D', 'E', 'S', 1}

// Save writes the cache to path atomically (little-endian: magic, K, D, k, N_seq, N_tok, N_post as int64, then
// SeqStart, Indices, Acts, Grads, PostStart, PostSeq, PostTok, PostAct). Index must have been called.
func (c *CodeCache) Save(path string) error {
	if c.PostStart == nil {
		return errors.Errorf("influence.CodeCache.Save %s: call Index first", path)
	}
	header := []int64{int64(c.K), int64(c.D), int64(c.TopK), int64(c.NumSeqs()), int64(c.NumTokens()), int64(len(c.PostSeq))}
	return writeArrays(path, codeMagic, header, c.SeqStart, c.Indices, c.Acts, c.Grads, c.PostStart, c.PostSeq, c.PostTok, c.PostAct)
}

// writeArrays writes the fixed-size values (arrays and slices) to path atomically, little-endian, in order.
func writeArrays(path string, values ...any) error {
	return store.WriteFileAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		for _, x := range values {
			if err := binary.Write(bw, binary.LittleEndian, x); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
}

// LoadCodeCache reads a cache written by Save, checking its magic, that the header's sizes describe exactly the
// file's bytes (before allocating), and every offset and index the scoring functions use.
func LoadCodeCache(path string) (*CodeCache, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "influence.LoadCodeCache")
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var magic [8]byte
	header := make([]int64, 6)
	if err := binary.Read(r, binary.LittleEndian, &magic); err != nil || magic != codeMagic {
		return nil, errors.Errorf("influence.LoadCodeCache %s: not a code cache (magic %q)", path, magic[:])
	}
	if err := binary.Read(r, binary.LittleEndian, header); err != nil {
		return nil, errors.Wrapf(err, "influence.LoadCodeCache %s: header", path)
	}
	K, D, k, nSeq, nTok, nPost := header[0], header[1], header[2], header[3], header[4], header[5]
	if K <= 0 || D <= 0 || k <= 0 || k > K || nSeq < 0 || nTok < 0 || nPost < 0 || K > math.MaxInt32 ||
		D > math.MaxInt32 || nSeq > math.MaxInt32 || nTok > math.MaxInt32 { // postings hold int32 columns, sequences and tokens
		return nil, errors.Errorf("influence.LoadCodeCache %s: bad header %v", path, header)
	}
	var l cacheLayout
	l.add(int64(len(codeMagic))+8*int64(len(header)), 1)
	l.add(nSeq+1, 8)
	l.add(l.mul(nTok, k), 4+4) // Indices, Acts
	l.add(l.mul(nTok, D), 4)
	l.add(K+1, 8)
	l.add(nPost, 4+4+4) // PostSeq, PostTok, PostAct
	if err := l.check(f, header); err != nil {
		return nil, errors.WithMessagef(err, "influence.LoadCodeCache %s", path)
	}
	c := &CodeCache{K: int(K), D: int(D), TopK: int(k),
		SeqStart: make([]int64, nSeq+1), Indices: make([]int32, nTok*k), Acts: make([]float32, nTok*k),
		Grads: make([]float32, nTok*D), PostStart: make([]int64, K+1), PostSeq: make([]int32, nPost),
		PostTok: make([]int32, nPost), PostAct: make([]float32, nPost)}
	for _, x := range []any{c.SeqStart, c.Indices, c.Acts, c.Grads, c.PostStart, c.PostSeq, c.PostTok, c.PostAct} {
		if err := binary.Read(r, binary.LittleEndian, x); err != nil {
			return nil, errors.Wrapf(err, "influence.LoadCodeCache %s: truncated", path)
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, errors.Errorf("influence.LoadCodeCache %s: trailing bytes", path)
	}
	if err := c.validate(); err != nil {
		return nil, errors.WithMessagef(err, "influence.LoadCodeCache %s", path)
	}
	return c, nil
}

// validate checks what the scoring functions index with: the offsets of sequences and postings, the column of
// every code entry, and the sequence and token of every posting (the token must belong to the sequence).
func (c *CodeCache) validate() error {
	if err := checkOffsets("sequence", c.SeqStart, int64(len(c.Indices)/c.TopK)); err != nil {
		return err
	}
	if err := checkOffsets("posting", c.PostStart, int64(len(c.PostSeq))); err != nil {
		return err
	}
	for p, j := range c.Indices {
		if j < 0 || int(j) >= c.K {
			return errors.Errorf("code entry %d: index %d outside [0, %d)", p, j, c.K)
		}
	}
	for p, s := range c.PostSeq {
		if s < 0 || int(s) >= c.NumSeqs() || int64(c.PostTok[p]) < c.SeqStart[s] || int64(c.PostTok[p]) >= c.SeqStart[s+1] {
			return errors.Errorf("posting %d: token %d of sequence %d is not one of its tokens", p, c.PostTok[p], s)
		}
	}
	return nil
}
