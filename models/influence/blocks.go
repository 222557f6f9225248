package influence

import (
	"math"
	"sort"

	"github.com/pkg/errors"
	"gonum.org/v1/gonum/mat"

	"github.com/protolab/protolab/workbench/stats"
)

// SparseSym is a symmetric K×K matrix in compressed sparse rows, both triangles stored: row i holds the columns
// Cols[RowStart[i]:RowStart[i+1]] (ascending) and values Vals[...] .
type SparseSym struct {
	K        int
	RowStart []int64
	Cols     []int32
	Vals     []float64
}

// Diag returns the diagonal [K].
func (s *SparseSym) Diag() []float64 {
	d := make([]float64, s.K)
	for i := 0; i < s.K; i++ {
		for p := s.RowStart[i]; p < s.RowStart[i+1]; p++ {
			if int(s.Cols[p]) == i {
				d[i] = s.Vals[p]
			}
		}
	}
	return d
}

// NNZ returns the number of stored entries.
func (s *SparseSym) NNZ() int { return len(s.Cols) }

// OffDiagonalMass returns Σ_{i≠j}|M_ij| / Σ_ij |M_ij| (0 for the zero matrix).
func (s *SparseSym) OffDiagonalMass() float64 {
	off, all := 0.0, 0.0
	for i := 0; i < s.K; i++ {
		for p := s.RowStart[i]; p < s.RowStart[i+1]; p++ {
			v := math.Abs(s.Vals[p])
			all += v
			if int(s.Cols[p]) != i {
				off += v
			}
		}
	}
	if all == 0 {
		return 0
	}
	return off / all
}

// Accumulator returns an accumulator holding the same matrix, to be scaled or added to.
func (s *SparseSym) Accumulator() *SymAccumulator {
	a := NewSymAccumulator(s.K)
	for i := 0; i < s.K; i++ {
		for p := s.RowStart[i]; p < s.RowStart[i+1]; p++ {
			if j := int(s.Cols[p]); j >= i {
				a.Add(i, j, s.Vals[p])
			}
		}
	}
	return a
}

// SymAccumulator sums entries of a symmetric K×K matrix; Add(i, j, v) adds v to M_ij and M_ji once (i ≠ j) or to M_ii.
type SymAccumulator struct {
	K int
	m map[uint64]float64 // key i·K + j with i ≤ j
}

// NewSymAccumulator returns an empty accumulator of a K×K matrix.
func NewSymAccumulator(K int) *SymAccumulator { return &SymAccumulator{K: K, m: map[uint64]float64{}} }

// Add adds v to M_ij (and M_ji). Panics if i or j is outside [0, K).
func (a *SymAccumulator) Add(i, j int, v float64) {
	if i < 0 || j < 0 || i >= a.K || j >= a.K {
		panic(errors.Errorf("influence.SymAccumulator.Add: (%d, %d) outside [0, %d)²", i, j, a.K))
	}
	if i > j {
		i, j = j, i
	}
	a.m[uint64(i)*uint64(a.K)+uint64(j)] += v
}

// Scaled returns a copy whose entries are multiplied by c.
func (a *SymAccumulator) Scaled(c float64) *SymAccumulator {
	b := NewSymAccumulator(a.K)
	for k, v := range a.m {
		b.m[k] = c * v
	}
	return b
}

// AddTo adds c·b to a (same K). Panics if the sizes differ.
func (a *SymAccumulator) AddTo(b *SymAccumulator, c float64) {
	if a.K != b.K {
		panic(errors.Errorf("influence.SymAccumulator.AddTo: K=%d and %d", a.K, b.K))
	}
	for k, v := range b.m {
		a.m[k] += c * v
	}
}

// AddDiag adds d_i to M_ii. Panics unless len(d) = K.
func (a *SymAccumulator) AddDiag(d []float64) {
	if len(d) != a.K {
		panic(errors.Errorf("influence.SymAccumulator.AddDiag: len=%d, want %d", len(d), a.K))
	}
	for i, v := range d {
		if v != 0 {
			a.Add(i, i, v)
		}
	}
}

// Sparse returns the accumulated matrix in CSR form, both triangles.
func (a *SymAccumulator) Sparse() *SparseSym {
	type entry struct {
		i, j int32
		v    float64
	}
	var es []entry
	for k, v := range a.m {
		i, j := int32(k/uint64(a.K)), int32(k%uint64(a.K))
		es = append(es, entry{i, j, v})
		if i != j {
			es = append(es, entry{j, i, v})
		}
	}
	sort.Slice(es, func(x, y int) bool {
		if es[x].i != es[y].i {
			return es[x].i < es[y].i
		}
		return es[x].j < es[y].j
	})
	s := &SparseSym{K: a.K, RowStart: make([]int64, a.K+1), Cols: make([]int32, len(es)), Vals: make([]float64, len(es))}
	for p, e := range es {
		s.RowStart[e.i+1]++
		s.Cols[p], s.Vals[p] = e.j, e.v
	}
	for i := 0; i < a.K; i++ {
		s.RowStart[i+1] += s.RowStart[i]
	}
	return s
}

// Blocks is the diagonal-C preconditioner of doc.go, equation 9: the blocks H_jj = c_j S + (e_j + λ) I of
// H = C ⊗ S + E ⊗ I + λI, inverted through one eigendecomposition S = Q diag(σ) Qᵀ shared by all K blocks.
type Blocks struct {
	D, K int
	// Q [D, D] holds the eigenvectors of S as columns; Sigma [D] its eigenvalues, ascending.
	Q, Sigma []float64
	// Scale [K] is c_j = C_jj; Shift [K] is e_j = E_jj.
	Scale, Shift []float64
	// Damping is λ.
	Damping float64
}

// NewBlocks builds the preconditioner from S [D, D] (symmetric, float64), c = diag(C) [K] and e = diag(E) [K].
// damping < 0 selects the heuristic λ = dampingScale·mean_{j,m}(c_j σ_m + e_j) (equation 10); otherwise λ = damping.
// It fails on bad lengths or if the eigendecomposition fails.
func NewBlocks(S []float64, D int, c, e []float64, damping, dampingScale float64) (*Blocks, error) {
	if D <= 0 || len(S) != D*D || len(c) != len(e) || len(c) == 0 {
		return nil, errors.Errorf("influence.NewBlocks: len(S)=%d, D=%d, len(c)=%d, len(e)=%d; want D·D, D > 0, equal K > 0",
			len(S), D, len(c), len(e))
	}
	q, sigma, err := EigenSym(S, D)
	if err != nil {
		return nil, err
	}
	b := &Blocks{D: D, K: len(c), Q: q, Sigma: sigma, Scale: append([]float64(nil), c...), Shift: append([]float64(nil), e...)}
	b.Damping = damping
	if damping < 0 {
		b.Damping = dampingScale * (stats.Mean(c)*stats.Mean(sigma) + stats.Mean(e))
	}
	return b, nil
}

// Apply returns (H_jj)⁻¹ g = Q diag(1/(c_j σ_m + e_j + λ)) Qᵀ g for one column g [D] of prototype j. Panics on a bad
// j or length.
func (b *Blocks) Apply(j int, g []float64) []float64 {
	if j < 0 || j >= b.K || len(g) != b.D {
		panic(errors.Errorf("influence.Blocks.Apply: j=%d, len(g)=%d; want j in [0, %d), len %d", j, len(g), b.K, b.D))
	}
	D := b.D
	out := make([]float64, D)
	coef := make([]float64, D) // Qᵀ g, then scaled
	for i := 0; i < D; i++ {
		gi := g[i]
		if gi == 0 {
			continue
		}
		row := b.Q[i*D : (i+1)*D]
		for m, q := range row {
			coef[m] += q * gi
		}
	}
	for m := range coef {
		coef[m] /= b.Scale[j]*b.Sigma[m] + b.Shift[j] + b.Damping
	}
	for i := 0; i < D; i++ {
		row := b.Q[i*D : (i+1)*D]
		s := 0.0
		for m, q := range row {
			s += q * coef[m]
		}
		out[i] = s
	}
	return out
}

// Condition returns the condition number of block j, (c_j σ_max + e_j + λ)/(c_j σ_min + e_j + λ).
func (b *Blocks) Condition(j int) float64 {
	lo := b.Scale[j]*b.Sigma[0] + b.Shift[j] + b.Damping
	hi := b.Scale[j]*b.Sigma[b.D-1] + b.Shift[j] + b.Damping
	return hi / lo
}

// Bytes returns the preconditioner's memory in float64: Q, σ, c and e.
func (b *Blocks) Bytes() int64 { return 8 * int64(b.D*b.D+b.D+2*b.K) }

// symMatVec returns S x for S [D, D] row-major.
func symMatVec(S []float64, D int, x []float64) []float64 {
	out := make([]float64, D)
	mat.NewVecDense(D, out).MulVec(mat.NewDense(D, D, S), mat.NewVecDense(D, x))
	return out
}
