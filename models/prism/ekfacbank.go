package prism

import (
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/influence"
)

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
			h, err := a.graphs.runHead(rows, a.batch(), nil, true, false, a.Config.Seed, sampledLabelTag(first))
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
		if err := f.AddCovariances(0, dense[:(hi-lo)*K], widen(a.sampled[lo*D:hi*D])); err != nil {
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
		G := influence.CodeGradient(K, D, k, c.Indices[lo*k:hi*k], widen(c.Acts[lo*k:hi*k]),
			widen(a.sampled[lo*D:hi*D]), nil)
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
func (a *Attributor) bankQuery(q Query) ([]float64, error) {
	h, err := a.graphs.runHead([][]int32{q.Tokens}, 1, nil, false, false, a.Config.Seed, noNoise)
	if err != nil {
		return nil, err
	}
	G := influence.CodeGradient(a.pc.NumPrototypes, h.D, h.k, h.idx, widen(h.acts), widen(h.u), q.Weights)
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
func (a *Attributor) bankScores(qs []Query) ([][]float64, error) {
	t := &a.bank.timing
	t.QuerySec, t.QueryCPU = nil, nil
	K := a.pc.NumPrototypes
	pre := make([][]float64, len(qs))
	for i, q := range qs {
		w := startWallCPU()
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
	pass := startWallCPU()
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
func (a *Attributor) timeMatchedBankQuery(q Query) ([]float64, error) {
	w := startWallCPU()
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
		h, err := a.graphs.runHead(rows, a.batch(), nil, false, false, a.Config.Seed, noNoise)
		if err != nil {
			return err
		}
		D, k, T := h.D, h.k, h.T
		for r := 0; r < h.rows; r++ {
			cols, g := influence.ColumnGradients(D, k, h.idx[r*T*k:(r+1)*T*k], widen(h.acts[r*T*k:(r+1)*T*k]),
				widen(h.u[r*T*D:(r+1)*T*D]))
			scores[first+r] = bankDot(pre, K, cols, g)
		}
		return nil
	})
	wall, cpu := w.stop()
	t := &b.timing
	t.MatchedSec, t.MatchedCPU = append(t.MatchedSec, wall), append(t.MatchedCPU, cpu)
	return scaleScores(scores, 1/float64(a.NumTokens)),
		errors.WithMessage(err, "attribution: timing an EK-FAC query on P")
}
