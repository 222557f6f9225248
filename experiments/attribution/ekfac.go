package attribution

import (
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/influence"
)

// EK-FAC and gradient dot products (spec §7) over (i) the backbone's linear layers and (ii) the bank P alone.
// Fitting follows kronfluence: covariances over the corpus tokens with labels sampled from the model, then the
// eigenvalue correction over per-sequence gradients with the same sampled labels; scores use the gold labels.

// ekfacTiming records how long an EK-FAC baseline takes, in wall-clock seconds and (…CPU) process CPU seconds.
type ekfacTiming struct {
	QuerySec, QueryCPU []float64 // per query: its gradient (forward and backward) and the preconditioning
	PassSec, PassCPU   float64   // one scoring pass over the corpus for all queries: training gradients and dots
	// MatchedSec and MatchedCPU are the timed queries end to end at matched memory: the query's gradient and
	// preconditioning, the dot products with the stored training gradients, and the recomputation of the others.
	MatchedSec, MatchedCPU []float64
	// GradBytes is the memory of one stored training gradient (float32; for EK-FAC on P, its non-zero columns on
	// average); Stored the number of training sequences whose gradient is stored at matched memory.
	GradBytes int64
	Stored    int
}

// blockEKFAC is EK-FAC over the backbone's linear layers.
type blockEKFAC struct {
	f      *influence.EKFAC
	layers []influence.Linear
	timing ekfacTiming
	// stored holds the gradients of the first timing.Stored corpus sequences, all layers concatenated, in float32:
	// what fits at matched memory.
	stored [][]float32
}

func (a *Attributor) ekfacConfig() influence.EKFACConfig {
	c := influence.DefaultEKFACConfig()
	c.DampingScale = a.Settings.DampingScale
	return c
}

// rowGradients returns each row's per-layer sequence gradient G = Σ_t g_t a_tᵀ [Out, In] from a block pass.
func rowGradients(out *blockOut, layers []influence.Linear) [][][]float64 {
	T := out.T
	gs := make([][][]float64, out.rows)
	for r := range gs {
		gs[r] = make([][]float64, len(layers))
		for l, lin := range layers {
			gs[r][l] = influence.SequenceGradient(f64(out.a[l][r*T*lin.In:(r+1)*T*lin.In]),
				f64(out.g[l][r*T*lin.Out:(r+1)*T*lin.Out]), lin.In, lin.Out)
		}
	}
	return gs
}

// fitBlockEKFAC fits the factors: a covariance pass, the eigendecompositions and a Λ pass.
func (a *Attributor) fitBlockEKFAC() error {
	if a.ekfac != nil {
		return nil
	}
	b := &blockEKFAC{}
	start := time.Now()
	err := a.batches(0, func(first int, rows [][]int32) error {
		out, layers, err := a.graphs.runBlocks(rows, a.batch(), nil, true, a.Settings.Seed, labelTag(first))
		if err != nil {
			return err
		}
		if b.f == nil {
			b.layers = layers
			if b.f, err = influence.NewEKFAC(a.ekfacConfig(), layers); err != nil {
				return err
			}
		}
		for l := range layers {
			if err := b.f.AddCovariances(l, f64(out.a[l]), f64(out.g[l])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	a.Timings["ekfac_covariance"] = time.Since(start).Seconds()
	start = time.Now()
	if err := b.f.Decompose(); err != nil {
		return err
	}
	a.Timings["ekfac_eigen"] = time.Since(start).Seconds()
	start = time.Now()
	err = a.batches(0, func(first int, rows [][]int32) error {
		out, _, err := a.graphs.runBlocks(rows, a.batch(), nil, true, a.Settings.Seed, labelTag(first))
		if err != nil {
			return err
		}
		for _, gs := range rowGradients(out, b.layers) {
			for l, g := range gs {
				if err := b.f.AddLambda(l, g); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := b.f.Finish(); err != nil {
		return err
	}
	a.Timings["ekfac_lambda"] = time.Since(start).Seconds()
	b.timing.GradBytes = int64(4 * b.f.NumParams())
	a.ekfac = b
	return nil
}

// blockQueryGradients returns a query's per-layer gradient of its completion's cross-entropy and the
// preconditioned gradient.
func (a *Attributor) blockQueryGradients(q queryRow) (g, pre [][]float64, err error) {
	out, layers, err := a.graphs.runBlocks([][]int32{q.tokens}, 1, [][]float64{q.weights}, false, a.Settings.Seed, noNoise)
	if err != nil {
		return nil, nil, err
	}
	g = rowGradients(out, layers)[0]
	pre = make([][]float64, len(g))
	for l := range g {
		pre[l] = a.ekfac.f.Precondition(l, g[l])
	}
	return g, pre, nil
}

// blockScores scores the queries with EK-FAC and the gradient dot product in one pass over the corpus (the
// training gradients recomputed once for all queries), timing each stage; it keeps the gradients of the first
// timing.Stored sequences for the matched-memory queries.
func (a *Attributor) blockScores(qs []queryRow) (ekfac, graddot [][]float64, t *ekfacTiming, err error) {
	t = &a.ekfac.timing
	t.QuerySec, t.QueryCPU = nil, nil
	gq, pq := make([][][]float64, len(qs)), make([][][]float64, len(qs))
	for i, q := range qs {
		w := startWatch()
		if gq[i], pq[i], err = a.blockQueryGradients(q); err != nil {
			return nil, nil, nil, err
		}
		wall, cpu := w.stop()
		t.QuerySec, t.QueryCPU = append(t.QuerySec, wall), append(t.QueryCPU, cpu)
	}
	ekfac, graddot = make([][]float64, len(qs)), make([][]float64, len(qs))
	for i := range qs {
		ekfac[i], graddot[i] = make([]float64, len(a.Corpus)), make([]float64, len(a.Corpus))
	}
	a.ekfac.stored = nil
	pass := startWatch()
	err = a.batches(0, func(first int, rows [][]int32) error {
		out, layers, err := a.graphs.runBlocks(rows, a.batch(), nil, false, a.Settings.Seed, noNoise)
		if err != nil {
			return err
		}
		for r, g := range rowGradients(out, layers) {
			for i := range qs {
				for l := range g {
					ekfac[i][first+r] += influence.Dot(pq[i][l], g[l])
					graddot[i][first+r] += influence.Dot(gq[i][l], g[l])
				}
			}
			if first+r < t.Stored {
				a.ekfac.stored = append(a.ekfac.stored, flat32(g))
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	t.PassSec, t.PassCPU = pass.stop()
	for i := range qs {
		scale(ekfac[i], 1/float64(a.NumTokens))
		scale(graddot[i], 1/float64(a.NumTokens))
	}
	return ekfac, graddot, t, nil
}

// timeMatchedBlockQuery measures one EK-FAC query end to end at matched memory: the query gradient and its
// preconditioning, the dot products with the stored training gradients, and a pass recomputing every other training
// gradient with its dot product. It returns the scores (divided by N_tok).
func (a *Attributor) timeMatchedBlockQuery(q queryRow) ([]float64, error) {
	w := startWatch()
	_, pre, err := a.blockQueryGradients(q)
	if err != nil {
		return nil, err
	}
	x := flat64(pre)
	scores := make([]float64, len(a.Corpus))
	for s, g := range a.ekfac.stored {
		scores[s] = dot32(x, g)
	}
	err = a.batches(len(a.ekfac.stored), func(first int, rows [][]int32) error {
		out, layers, err := a.graphs.runBlocks(rows, a.batch(), nil, false, a.Settings.Seed, noNoise)
		if err != nil {
			return err
		}
		for r, g := range rowGradients(out, layers) {
			for l := range g {
				scores[first+r] += influence.Dot(pre[l], g[l])
			}
		}
		return nil
	})
	wall, cpu := w.stop()
	t := &a.ekfac.timing
	t.MatchedSec, t.MatchedCPU = append(t.MatchedSec, wall), append(t.MatchedCPU, cpu)
	return scale(scores, 1/float64(a.NumTokens)), err
}

// flat32 concatenates per-layer gradients into one float32 vector.
func flat32(g [][]float64) []float32 {
	var out []float32
	for _, gl := range g {
		for _, v := range gl {
			out = append(out, float32(v))
		}
	}
	return out
}

// flat64 concatenates per-layer gradients into one vector.
func flat64(g [][]float64) []float64 {
	var out []float64
	for _, gl := range g {
		out = append(out, gl...)
	}
	return out
}

// dot32 returns Σ_i x_i·y_i for a float64 x and a float32 y of the same length.
func dot32(x []float64, y []float32) float64 {
	s := 0.0
	for i, v := range y {
		s += x[i] * float64(v)
	}
	return s
}

// bankEKFAC is EK-FAC with the bank P as the only module: input the code a_t [K], output gradient u_t [D].
type bankEKFAC struct {
	f      *influence.EKFAC
	timing ekfacTiming
	// storedCols and storedGrad are the non-zero gradient columns (float32) of the first timing.Stored corpus
	// sequences, what fits at matched memory; storedBytes their memory (4 + 4D bytes a column).
	storedCols  [][]int32
	storedGrad  [][][]float32
	storedBytes int64
}

// fitBankEKFAC fits EK-FAC on P from the cache's codes and the sampled-label gradients ũ (recomputed by a head pass
// when the cache was loaded from disk).
func (a *Attributor) fitBankEKFAC() error {
	if a.bank != nil {
		return nil
	}
	K, D, k, T := a.pc.NumPrototypes, a.mc.Width, a.pc.TopK, a.Model.Config.Data.SeqLen
	if a.sampled == nil {
		err := a.batches(0, func(first int, rows [][]int32) error {
			h, err := a.graphs.runHead(rows, a.batch(), nil, true, false, a.Settings.Seed, labelTag(first))
			if err == nil {
				a.sampled = append(a.sampled, h.uSampled...)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	f, err := influence.NewEKFAC(a.ekfacConfig(), []influence.Linear{{Name: "prism.prototypes", In: K, Out: D}})
	if err != nil {
		return err
	}
	c := a.Cache
	start := time.Now()
	dense := make([]float64, T*K)
	for s := 0; s < c.NumSeqs(); s++ {
		lo, hi := int(c.SeqStart[s]), int(c.SeqStart[s+1])
		clear(dense)
		for t := lo; t < hi; t++ {
			for i := 0; i < k; i++ {
				dense[(t-lo)*K+int(c.Indices[t*k+i])] = float64(c.Acts[t*k+i])
			}
		}
		if err := f.AddCovariances(0, dense[:(hi-lo)*K], f64(a.sampled[lo*D:hi*D])); err != nil {
			return err
		}
	}
	a.Timings["ekfac_bank_covariance"] = time.Since(start).Seconds()
	start = time.Now()
	if err := f.Decompose(); err != nil {
		return err
	}
	a.Timings["ekfac_bank_eigen"] = time.Since(start).Seconds()
	start = time.Now()
	for s := 0; s < c.NumSeqs(); s++ {
		lo, hi := int(c.SeqStart[s]), int(c.SeqStart[s+1])
		G := influence.CodeGradient(K, D, k, c.Indices[lo*k:hi*k], f64(c.Acts[lo*k:hi*k]), f64(a.sampled[lo*D:hi*D]), nil)
		if err := f.AddLambda(0, G); err != nil {
			return err
		}
	}
	if err := f.Finish(); err != nil {
		return err
	}
	a.Timings["ekfac_bank_lambda"] = time.Since(start).Seconds()
	a.bank = &bankEKFAC{f: f}
	return nil
}

// bankQuery returns a query's preconditioned bank gradient Ĝ_q [D, K].
func (a *Attributor) bankQuery(q queryRow) ([]float64, error) {
	h, err := a.graphs.runHead([][]int32{q.tokens}, 1, nil, false, false, a.Settings.Seed, noNoise)
	if err != nil {
		return nil, err
	}
	G := influence.CodeGradient(a.pc.NumPrototypes, h.D, h.k, h.idx, f64(h.acts), f64(h.u), q.weights)
	return a.bank.f.Precondition(0, G), nil
}

// bankDot returns Σ_{j∈cols} ⟨Ĝ[:, j], g_j⟩ for Ĝ [D, K] and columns g_j [D].
func bankDot(pre []float64, K int, cols []int32, g [][]float64) float64 {
	s := 0.0
	for n, j := range cols {
		for d, v := range g[n] {
			s += pre[d*K+int(j)] * v
		}
	}
	return s
}

// bankScores scores the queries with EK-FAC on P: the training gradients' non-zero columns come from the cache.
func (a *Attributor) bankScores(qs []queryRow) ([][]float64, error) {
	t := &a.bank.timing
	t.QuerySec, t.QueryCPU = nil, nil
	K := a.pc.NumPrototypes
	pre := make([][]float64, len(qs))
	for i, q := range qs {
		w := startWatch()
		var err error
		if pre[i], err = a.bankQuery(q); err != nil {
			return nil, err
		}
		wall, cpu := w.stop()
		t.QuerySec, t.QueryCPU = append(t.QuerySec, wall), append(t.QueryCPU, cpu)
	}
	out := make([][]float64, len(qs))
	for i := range out {
		out[i] = make([]float64, len(a.Corpus))
	}
	pass := startWatch()
	for s := range a.Corpus {
		cols, g := a.Cache.SequenceColumns(s)
		for i := range qs {
			out[i][s] = bankDot(pre[i], K, cols, g) / float64(a.NumTokens)
		}
	}
	t.PassSec, t.PassCPU = pass.stop()
	return out, nil
}

// storeBankGradients keeps, in float32, the gold-label gradient columns of the first corpus sequences whose
// columns fit in budget bytes (4 + 4D a column), as EK-FAC on P would store them at matched memory.
func (a *Attributor) storeBankGradients(budget int64) {
	b := a.bank
	b.storedCols, b.storedGrad, b.storedBytes = nil, nil, 0
	D := int64(a.mc.Width)
	for s := range a.Corpus {
		cols, g := a.Cache.SequenceColumns(s)
		size := int64(len(cols)) * (4 + 4*D)
		if b.storedBytes+size > budget {
			break
		}
		g32 := make([][]float32, len(g))
		for n, v := range g {
			g32[n] = make([]float32, len(v))
			for d, x := range v {
				g32[n][d] = float32(x)
			}
		}
		b.storedCols, b.storedGrad = append(b.storedCols, cols), append(b.storedGrad, g32)
		b.storedBytes += size
	}
	b.timing.Stored = len(b.storedCols)
	if n := len(b.storedCols); n > 0 {
		b.timing.GradBytes = b.storedBytes / int64(n)
	}
}

// timeMatchedBankQuery measures one EK-FAC-on-P query end to end at matched memory: the query's gradient and
// preconditioning, the dot products with the stored columns, then a forward pass over the other corpus sequences
// rebuilding each training gradient's columns and its dot product. It returns the scores (divided by N_tok).
func (a *Attributor) timeMatchedBankQuery(q queryRow) ([]float64, error) {
	w := startWatch()
	pre, err := a.bankQuery(q)
	if err != nil {
		return nil, err
	}
	K := a.pc.NumPrototypes
	b := a.bank
	scores := make([]float64, len(a.Corpus))
	for s, cols := range b.storedCols {
		for n, j := range cols {
			for d, v := range b.storedGrad[s][n] {
				scores[s] += pre[d*K+int(j)] * float64(v)
			}
		}
	}
	err = a.batches(len(b.storedCols), func(first int, rows [][]int32) error {
		h, err := a.graphs.runHead(rows, a.batch(), nil, false, false, a.Settings.Seed, noNoise)
		if err != nil {
			return err
		}
		D, k, T := h.D, h.k, h.T
		for r := 0; r < h.rows; r++ {
			cols, g := influence.ColumnGradients(D, k, h.idx[r*T*k:(r+1)*T*k], f64(h.acts[r*T*k:(r+1)*T*k]), f64(h.u[r*T*D:(r+1)*T*D]))
			scores[first+r] = bankDot(pre, K, cols, g)
		}
		return nil
	})
	wall, cpu := w.stop()
	t := &b.timing
	t.MatchedSec, t.MatchedCPU = append(t.MatchedSec, wall), append(t.MatchedCPU, cpu)
	return scale(scores, 1/float64(a.NumTokens)), errors.WithMessage(err, "attribution: timing an EK-FAC query on P")
}
