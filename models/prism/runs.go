package prism

import (
	"math"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/influence"
	"github.com/protolab/protolab/workbench/meter"
	"github.com/protolab/protolab/workbench/stats"
)

// Measured runs of the methods on one query set (spec §8): each method's scores with what they cost on this machine.
// A study chooses which methods run, in which order and at which memory budget; these functions fit, warm up, time
// and score.

// logTag prefixes the progress lines of long attribution phases (run.Options.Logf).
const logTag = "attribution"

// MethodRun is one method's scores on a query set and what producing them cost, in wall-clock and process CPU seconds
// on this machine.
type MethodRun struct {
	Name   string
	Scores [][]float64 // [query][corpus sequence]: influence / N_tok, positive = helpful
	// FitSeconds is the one-off fitting: the cache's pass over the corpus with statistics, rows and postings (and the
	// factorisation of the full curvature where a method uses it); the reference's gradient pass; EK-FAC's
	// covariance pass, eigendecompositions and Λ pass.
	FitSeconds float64
	// Wall and CPU are the seconds of each timed query, after a warm-up query: every query of the cached methods and
	// the reference; EK-FAC's queries end to end at matched memory; none for the gradient dot product, which shares
	// EK-FAC's training pass.
	Wall, CPU []float64
	// AllQueriesSeconds is the time to score every query after fitting: one by one for the prototype-space methods;
	// for EK-FAC and the gradient dot product the query gradients plus one pass over the corpus for the whole batch.
	AllQueriesSeconds float64
	// Bytes is the memory the method scores from; StoredSeqs, for EK-FAC, the training gradients stored within it.
	Bytes      int64
	StoredSeqs int
}

// queryTimes collects per-query wall-clock and CPU seconds of a method timed query by query.
type queryTimes struct{ wall, cpu []float64 }

func (q *queryTimes) add(wall, cpu float64) {
	q.wall, q.cpu = append(q.wall, wall), append(q.cpu, cpu)
}

// wallCPUWatch measures an interval in wall-clock and process CPU seconds.
type wallCPUWatch struct {
	wall time.Time
	cpu  float64
}

func startWallCPU() wallCPUWatch { return wallCPUWatch{time.Now(), meter.CPUSeconds()} }

func (w wallCPUWatch) stop() (wall, cpu float64) {
	return time.Since(w.wall).Seconds(), meter.CPUSeconds() - w.cpu
}

// totalSeconds returns Σ x.
func totalSeconds(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// RunCached scores the queries with every method of CachedMethods: a warm-up query (graph compilation), then every
// query timed.
func (a *Attributor) RunCached(qs []Query) ([]MethodRun, error) {
	prismFit := a.Stats.FitSeconds + a.Stats.IndexSeconds
	var out []MethodRun
	for _, name := range CachedMethods {
		if _, err := a.cachedQuery(qs[0], name); err != nil {
			return nil, err
		}
		scores := make([][]float64, len(qs))
		var tm queryTimes
		for i, q := range qs {
			w := startWallCPU()
			var err error
			if scores[i], err = a.cachedQuery(q, name); err != nil {
				return nil, err
			}
			tm.add(w.stop())
		}
		fit := prismFit
		if name == MethodExactCE || name == MethodPrismFullC {
			fit += a.Timings["prism_factor"]
		}
		out = append(out, MethodRun{Name: name, Scores: scores, FitSeconds: fit, Bytes: a.cachedBytes(name),
			Wall: tm.wall, CPU: tm.cpu, AllQueriesSeconds: totalSeconds(tm.wall)})
	}
	return out, nil
}

// RunReference fits the reference (spec §6.3) and scores the queries with it: a warm-up query, then every query
// timed.
func (a *Attributor) RunReference(qs []Query) (MethodRun, error) {
	if err := a.fitReference(); err != nil {
		return MethodRun{}, err
	}
	if _, err := a.referenceQuery(qs[0]); err != nil {
		return MethodRun{}, err
	}
	scores := make([][]float64, len(qs))
	var tm queryTimes
	for i, q := range qs {
		w := startWallCPU()
		var err error
		if scores[i], err = a.referenceQuery(q); err != nil {
			return MethodRun{}, err
		}
		tm.add(w.stop())
	}
	return MethodRun{Name: MethodReference, Scores: scores, FitSeconds: a.Timings["reference_fit"] +
		a.Timings["prism_factor"], Bytes: a.ref.bytes + a.Curvature.Bytes(), Wall: tm.wall, CPU: tm.cpu,
		AllQueriesSeconds: totalSeconds(tm.wall)}, nil
}

// BlockLayers returns the backbone's linear layers EK-FAC tracks (nil until RunBlockEKFAC or Scores fitted it).
func (a *Attributor) BlockLayers() []influence.Linear {
	if a.ekfac == nil {
		return nil
	}
	return a.ekfac.layers
}

// RunBlockEKFAC fits EK-FAC on the backbone's linear layers, scores the queries with it and with the gradient dot
// product in one batched pass, and times the first timed queries end to end at matched memory: the training
// gradients that fit beside the factors in budget bytes are stored, the others recomputed per query (spec §8).
func (a *Attributor) RunBlockEKFAC(qs []Query, budget int64, timed int) (ekfac, graddot MethodRun, err error) {
	if err := a.fitBlockEKFAC(); err != nil {
		return MethodRun{}, MethodRun{}, err
	}
	t := &a.ekfac.timing
	t.Stored = storedWithin(budget-a.ekfac.f.Bytes(), t.GradBytes, len(a.Corpus))
	if _, _, err := a.blockQueryGradients(qs[0]); err != nil { // warm-up: compiles the query graph
		return MethodRun{}, MethodRun{}, err
	}
	ek, gd, _, err := a.blockScores(qs)
	if err != nil {
		return MethodRun{}, MethodRun{}, err
	}
	t.MatchedSec, t.MatchedCPU = nil, nil
	for i := 0; i < min(timed, len(qs)); i++ {
		if _, err := a.timeMatchedBlockQuery(qs[i]); err != nil {
			return MethodRun{}, MethodRun{}, err
		}
	}
	fit := a.Timings["ekfac_covariance"] + a.Timings["ekfac_eigen"] + a.Timings["ekfac_lambda"]
	all := totalSeconds(t.QuerySec) + t.PassSec
	return MethodRun{Name: MethodEKFAC, Scores: ek, FitSeconds: fit, Wall: t.MatchedSec, CPU: t.MatchedCPU,
			AllQueriesSeconds: all, Bytes: a.ekfac.f.Bytes() + int64(t.Stored)*t.GradBytes, StoredSeqs: t.Stored},
		MethodRun{Name: MethodGradDot, Scores: gd, AllQueriesSeconds: all}, nil
}

// storedWithin returns how many training gradients of gradBytes each fit in free bytes, at most n.
func storedWithin(free, gradBytes int64, n int) int {
	if free <= 0 || gradBytes <= 0 {
		return 0
	}
	return int(min(free/gradBytes, int64(n)))
}

// RunBankEKFAC fits EK-FAC on the bank P alone, scores the queries with it, and times the first timed queries end
// to end at matched memory (budget bytes, as RunBlockEKFAC).
func (a *Attributor) RunBankEKFAC(qs []Query, budget int64, timed int) (MethodRun, error) {
	if err := a.fitBankEKFAC(); err != nil {
		return MethodRun{}, err
	}
	a.storeBankGradients(budget - a.bank.f.Bytes())
	if _, err := a.bankQuery(qs[0]); err != nil {
		return MethodRun{}, err
	}
	bk, err := a.bankScores(qs)
	if err != nil {
		return MethodRun{}, err
	}
	t := &a.bank.timing
	t.MatchedSec, t.MatchedCPU = nil, nil
	for i := 0; i < min(timed, len(qs)); i++ {
		if _, err := a.timeMatchedBankQuery(qs[i]); err != nil {
			return MethodRun{}, err
		}
	}
	fit := a.Stats.FitSeconds + a.Stats.IndexSeconds + a.Timings["ekfac_bank_covariance"] +
		a.Timings["ekfac_bank_eigen"] + a.Timings["ekfac_bank_lambda"]
	// The batched pass read the training gradients' columns from the PRISM cache; a forward pass over the corpus
	// (the cache's fitting pass) is added as their cost.
	return MethodRun{Name: MethodEKFACBank, Scores: bk, FitSeconds: fit, Wall: t.MatchedSec, CPU: t.MatchedCPU,
		AllQueriesSeconds: totalSeconds(t.QuerySec) + t.PassSec + a.Stats.FitSeconds,
		Bytes:             a.bank.f.Bytes() + a.bank.storedBytes, StoredSeqs: t.Stored}, nil
}

// Conditioning describes the curvature the prototype-space methods invert (spec §5, §8).
type Conditioning struct {
	Damping       float64 `json:"damping"`         // λ of the blocks and the full curvature
	BlockCondMean float64 `json:"block_cond_mean"` // κ of (H_jj + λI) over the used prototypes (the finite ones)
	BlockCondMax  float64 `json:"block_cond_max"`
	OffDiagC      float64 `json:"off_diag_c"` // Σ_{i≠j}|C_ij| / Σ|C_ij|
	// CGIterations is the mean number of CG iterations that solve the full curvature for a query's gradient to
	// cg_tol (counted on the queries Attributor.Conditioning is given, whichever solver the methods use);
	// CGUnconverged counts the solves that stopped at cg_max_iter. They are the cost model's estimate for banks
	// above direct_max_k.
	CGIterations  float64 `json:"cg_iterations"`
	CGUnconverged int     `json:"cg_unconverged,omitempty"`
	UsedFraction  float64 `json:"used_fraction"` // fraction of prototypes with c_j > 0 in the corpus
}

// Conditioning summarises the diagonal-C blocks and the co-usage matrix, and solves the full curvature by CG
// (whatever solver the methods use) for the routedMethod gradients of the first n queries to count its iterations.
func (a *Attributor) Conditioning(qs []Query, n int) (Conditioning, error) {
	c := Conditioning{Damping: a.Blocks.Damping}
	var finite []float64
	used := 0
	for j, cj := range a.Stats.Usage {
		if cj > 0 {
			used++
			kappa := a.Blocks.Condition(j)
			c.BlockCondMax = math.Max(c.BlockCondMax, kappa)
			if !math.IsNaN(kappa) && !math.IsInf(kappa, 0) {
				finite = append(finite, kappa)
			}
		}
	}
	c.BlockCondMean = stats.Mean(finite)
	c.UsedFraction = float64(used) / float64(len(a.Stats.Usage))
	c.OffDiagC = a.Curvature.OffDiagonalMass()
	cg, err := influence.NewCoUsage(a.Curvature.H, a.Blocks, 0, a.Config.CGTol, a.Config.CGMaxIter)
	if err != nil {
		return c, errors.WithMessage(err, "attribution: counting CG iterations")
	}
	for i := 0; i < min(n, len(qs)); i++ {
		cols, g, err := a.routeColumns(qs[i])
		if err != nil {
			return c, err
		}
		if _, _, err := cg.SolveColumns(cols, g); err != nil {
			c.CGUnconverged++
		}
	}
	total := 0
	for _, it := range cg.Iters {
		total += it
	}
	if len(cg.Iters) > 0 {
		c.CGIterations = float64(total) / float64(len(cg.Iters))
	}
	return c, nil
}
