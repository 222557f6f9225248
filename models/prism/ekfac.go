package prism

import (
	"time"

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
	c.DampingScale = a.Config.DampingScale
	return c
}

// rowGradients returns each row's per-layer sequence gradient G = Σ_t g_t a_tᵀ [Out, In] from a block pass.
func rowGradients(out *blockOut, layers []influence.Linear) [][][]float64 {
	T := out.T
	gs := make([][][]float64, out.rows)
	for r := range gs {
		gs[r] = make([][]float64, len(layers))
		for l, lin := range layers {
			gs[r][l] = influence.SequenceGradient(widen(out.a[l][r*T*lin.In:(r+1)*T*lin.In]),
				widen(out.g[l][r*T*lin.Out:(r+1)*T*lin.Out]), lin.In, lin.Out)
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
		out, layers, err := a.graphs.runBlocks(rows, a.batch(), nil, true, a.Config.Seed, sampledLabelTag(first))
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
			if err := b.f.AddCovariances(l, widen(out.a[l]), widen(out.g[l])); err != nil {
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
		out, _, err := a.graphs.runBlocks(rows, a.batch(), nil, true, a.Config.Seed, sampledLabelTag(first))
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
func (a *Attributor) blockQueryGradients(q Query) (g, pre [][]float64, err error) {
	out, layers, err := a.graphs.runBlocks([][]int32{q.Tokens}, 1, [][]float64{q.Weights}, false, a.Config.Seed,
		noNoise)
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
func (a *Attributor) blockScores(qs []Query) (ekfac, graddot [][]float64, t *ekfacTiming, err error) {
	t = &a.ekfac.timing
	t.QuerySec, t.QueryCPU = nil, nil
	gq, pq := make([][][]float64, len(qs)), make([][][]float64, len(qs))
	for i, q := range qs {
		w := startWallCPU()
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
	pass := startWallCPU()
	err = a.batches(0, func(first int, rows [][]int32) error {
		out, layers, err := a.graphs.runBlocks(rows, a.batch(), nil, false, a.Config.Seed, noNoise)
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
				a.ekfac.stored = append(a.ekfac.stored, gradsFloat32(g))
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	t.PassSec, t.PassCPU = pass.stop()
	for i := range qs {
		scaleScores(ekfac[i], 1/float64(a.NumTokens))
		scaleScores(graddot[i], 1/float64(a.NumTokens))
	}
	return ekfac, graddot, t, nil
}

// timeMatchedBlockQuery measures one EK-FAC query end to end at matched memory: the query gradient and its
// preconditioning, the dot products with the stored training gradients, and a pass recomputing every other training
// gradient with its dot product. It returns the scores (divided by N_tok).
func (a *Attributor) timeMatchedBlockQuery(q Query) ([]float64, error) {
	w := startWallCPU()
	_, pre, err := a.blockQueryGradients(q)
	if err != nil {
		return nil, err
	}
	x := concatGrads(pre)
	scores := make([]float64, len(a.Corpus))
	for s, g := range a.ekfac.stored {
		scores[s] = dotFloat32(x, g)
	}
	err = a.batches(len(a.ekfac.stored), func(first int, rows [][]int32) error {
		out, layers, err := a.graphs.runBlocks(rows, a.batch(), nil, false, a.Config.Seed, noNoise)
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
	return scaleScores(scores, 1/float64(a.NumTokens)), err
}

// gradsFloat32 concatenates per-layer gradients into one float32 vector.
func gradsFloat32(g [][]float64) []float32 {
	var out []float32
	for _, gl := range g {
		for _, v := range gl {
			out = append(out, float32(v))
		}
	}
	return out
}

// concatGrads concatenates per-layer gradients into one vector.
func concatGrads(g [][]float64) []float64 {
	var out []float64
	for _, gl := range g {
		out = append(out, gl...)
	}
	return out
}

// dotFloat32 returns Σ_i x_i·y_i for a float64 x and a float32 y of the same length.
func dotFloat32(x []float64, y []float32) float64 {
	s := 0.0
	for i, v := range y {
		s += x[i] * float64(v)
	}
	return s
}
