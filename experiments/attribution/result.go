package attribution

import (
	"math"
	"strings"
	"time"

	"github.com/protolab/protolab/workbench/influence"
	"github.com/protolab/protolab/workbench/meter"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// OverlapStat is Overlap@k averaged over queries with a 95% bootstrap interval (spec §8).
type OverlapStat struct {
	K    int     `json:"k"`
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// MethodResult is one attribution method's cost and agreement (spec §8). Times are wall-clock on this machine.
type MethodResult struct {
	Name string `json:"name"`
	// FitSeconds is the one-off fitting: PRISM's forward pass with statistics, cache rows and postings; the
	// reference's gradient pass and sparse C; EK-FAC's covariance pass, eigendecompositions and Λ pass.
	FitSeconds float64 `json:"fit_seconds"`
	// QueryMs is the median per-query latency as run (after a warm-up query): PRISM one forward pass, the
	// preconditioning and the postings; the reference a forward and backward pass of the head, the CG solve and the
	// dot products; EK-FAC and the gradient dot product with no stored training gradients, i.e. the query's gradient
	// plus a recomputation of every training gradient (measured on TimedQueries queries).
	QueryMs float64 `json:"query_ms"`
	// StoredQueryMs is EK-FAC's latency with every training gradient stored (StoredBytes of memory): the query's
	// gradient, its preconditioning and N_seq dot products.
	StoredQueryMs float64 `json:"stored_query_ms,omitempty"`
	StoredBytes   int64   `json:"stored_bytes,omitempty"`
	// MatchedQueryMs is the latency at the memory of the PRISM cache (spec §8, "matched memory"): EK-FAC stores
	// the fraction of training gradients that fits beside its factors and recomputes the rest per query. It equals
	// QueryMs for the prototype-space methods.
	MatchedQueryMs float64 `json:"matched_query_ms"`
	// QueryCPUMs and MatchedQueryCPUMs are the same latencies in process CPU time, and SpeedUpCPU the speed-up
	// from them: on a shared machine they are the better estimate of the cost (the pure-Go backend may use more
	// than one core, so on an idle multi-core machine EK-FAC's wall-clock time can be lower).
	QueryCPUMs        float64 `json:"query_cpu_ms"`
	MatchedQueryCPUMs float64 `json:"matched_query_cpu_ms"`
	SpeedUpCPU        float64 `json:"speed_up_cpu,omitempty"`
	// AllQueriesSeconds is the time to score all NumQueries queries after fitting: one by one for the
	// prototype-space methods; for EK-FAC and the gradient dot product the query gradients plus one pass over the
	// corpus recomputing the training gradients for the whole query batch (kronfluence's query batching; for
	// EK-FAC on P the pass reads the cache's columns and adds the cost of a forward pass over the corpus).
	AllQueriesSeconds float64 `json:"all_queries_seconds"`
	// Bytes is the memory the method scores from as run: cache and preconditioner, reference gradients and
	// sparse matrices, or EK-FAC factors.
	Bytes int64 `json:"bytes"`
	// SpeedUp is MatchedQueryMs of EK-FAC on the backbone divided by this method's MatchedQueryMs.
	SpeedUp float64 `json:"speed_up,omitempty"`
	// Overlap is Overlap@k with the reference's ranking, OverlapEKFAC with EK-FAC's (backbone) ranking.
	Overlap      []OverlapStat `json:"overlap,omitempty"`
	OverlapEKFAC []OverlapStat `json:"overlap_ekfac,omitempty"`
	// Spearman is the mean over queries of the Spearman correlation with the reference's scores over the union of
	// both top-100 sets (nil when undefined).
	Spearman *float64 `json:"spearman,omitempty"`
	// LDS is the linear datamodeling score (nil when not computed or undefined).
	LDS *float64 `json:"lds,omitempty"`
	// Top lists, per query, the corpus indices of the max(TopK) highest scores.
	Top [][]int `json:"top"`
}

// Conditioning describes the curvature the prototype-space methods invert (spec §5, §8).
type Conditioning struct {
	Damping       float64 `json:"damping"`         // λ of the blocks and the reference
	BlockCondMean float64 `json:"block_cond_mean"` // κ of (H_jj + λI) over the used prototypes
	BlockCondMax  float64 `json:"block_cond_max"`
	OffDiagC      float64 `json:"off_diag_c"`    // Σ_{i≠j}|C_ij| / Σ|C_ij|
	CGIterations  float64 `json:"cg_iterations"` // mean CG iterations of a reference query
	UsedFraction  float64 `json:"used_fraction"` // fraction of prototypes with c_j > 0 in the corpus
}

// Result is the attribution study of one PRISM model (spec §6–§8).
type Result struct {
	Provenance *run.Provenance    `json:"provenance"`
	Config     Settings           `json:"config"`
	Run        string             `json:"run"` // the model's name (lm.Config.Name)
	NumSeqs    int                `json:"num_seqs"`
	NumTokens  int                `json:"num_tokens"`
	NumQueries int                `json:"num_queries"`
	K          int                `json:"k"`
	D          int                `json:"d"`
	TopK       int                `json:"top_k"`
	Layers     []influence.Linear `json:"layers"` // EK-FAC's backbone layers
	Conditions Conditioning       `json:"conditioning"`
	Methods    []MethodResult     `json:"methods"`
	Timings    map[string]float64 `json:"timings"`

	scores map[string][][]float64 // [method][query][sequence], only in the process that computed them
}

// Method returns the named method's result, or nil.
func (r *Result) Method(name string) *MethodResult {
	for i := range r.Methods {
		if r.Methods[i].Name == name {
			return &r.Methods[i]
		}
	}
	return nil
}

// Scores returns [query][sequence] scores of a method when this process computed them (nil for a stored result).
func (r *Result) Scores(method string) [][]float64 { return r.scores[method] }

// String is the study's report: the table of WriteTable.
func (r *Result) String() string {
	var b strings.Builder
	_ = WriteTable(&b, r)
	return b.String()
}

// ekfacResult summarises an EK-FAC-style method. The latency without stored gradients is the median measured end
// to end; with storage it is the query's own time plus N_seq dot products; at matched memory the fraction f of
// training gradients that fits in budget − factors is stored and the rest recomputed:
// t = t_query + f·N_seq·t_dot + (1 − f)·(t_recompute − t_query). forward is added to the batched pass when that pass
// read cached inputs instead of running the model over the corpus.
func ekfacResult(name string, fit float64, factors int64, t *ekfacTiming, nSeq int, budget int64, forward float64) MethodResult {
	f := 0.0
	if t.GradBytes > 0 {
		f = math.Max(0, math.Min(1, float64(budget-factors)/float64(int64(nSeq)*t.GradBytes)))
	}
	latency := func(query, recompute []float64, dot float64) (asRun, stored, matched float64) {
		tq, tr := median(query), median(recompute)
		return tr, tq + float64(nSeq)*dot, tq + f*float64(nSeq)*dot + (1-f)*math.Max(0, tr-tq)
	}
	asRun, stored, matched := latency(t.QuerySec, t.RecomputeSec, t.DotSec)
	_, _, matchedCPU := latency(t.QueryCPU, t.RecomputeCPU, t.DotCPU)
	return MethodResult{Name: name, FitSeconds: fit, QueryMs: 1e3 * asRun, StoredQueryMs: 1e3 * stored,
		StoredBytes: factors + int64(nSeq)*t.GradBytes, MatchedQueryMs: 1e3 * matched, Bytes: factors,
		QueryCPUMs: 1e3 * median(t.RecomputeCPU), MatchedQueryCPUMs: 1e3 * matchedCPU,
		AllQueriesSeconds: sum(t.QuerySec) + t.PassSec + forward}
}

// queryTimes collects per-query wall-clock and CPU seconds of a method timed query by query.
type queryTimes struct{ wall, cpu []float64 }

func (q *queryTimes) add(wall, cpu float64) {
	q.wall, q.cpu = append(q.wall, wall), append(q.cpu, cpu)
}

// result fills the latency fields of r: the medians as run and at matched memory (the same for these methods) and
// the total over all queries.
func (q *queryTimes) result(r MethodResult) MethodResult {
	r.QueryMs, r.QueryCPUMs = 1e3*median(q.wall), 1e3*median(q.cpu)
	r.MatchedQueryMs, r.MatchedQueryCPUMs = r.QueryMs, r.QueryCPUMs
	r.AllQueriesSeconds = sum(q.wall)
	return r
}

// watch measures an interval in wall-clock and process CPU seconds.
type watch struct {
	wall time.Time
	cpu  float64
}

func startWatch() watch { return watch{time.Now(), meter.CPUSeconds()} }

func (w watch) stop() (wall, cpu float64) {
	return time.Since(w.wall).Seconds(), meter.CPUSeconds() - w.cpu
}

// compare fills speed-ups, Overlap@k, Spearman and the top lists.
func compare(res *Result) {
	ref := res.scores[MethodReference]
	ek := res.scores[MethodEKFAC]
	base := res.Method(MethodEKFAC)
	maxK := 0
	for _, k := range res.Config.TopK {
		maxK = max(maxK, min(k, res.NumSeqs))
	}
	for i := range res.Methods {
		mr := &res.Methods[i]
		sc := res.scores[mr.Name]
		if base != nil && mr.MatchedQueryMs > 0 {
			mr.SpeedUp = base.MatchedQueryMs / mr.MatchedQueryMs
		}
		if base != nil && mr.MatchedQueryCPUMs > 0 {
			mr.SpeedUpCPU = base.MatchedQueryCPUMs / mr.MatchedQueryCPUMs
		}
		for _, q := range sc {
			mr.Top = append(mr.Top, stats.TopK(q, maxK))
		}
		if mr.Name != MethodReference {
			mr.Overlap = overlaps(sc, ref, res.Config)
			var rho []float64
			for q := range sc {
				rho = append(rho, stats.SpearmanTopK(sc[q], ref[q], min(100, res.NumSeqs)))
			}
			mr.Spearman = finitePtr(meanFinite(rho))
		}
		if ek != nil && mr.Name != MethodEKFAC {
			mr.OverlapEKFAC = overlaps(sc, ek, res.Config)
		}
	}
}

// overlaps returns Overlap@k of a against b for every k of the config, averaged over queries with a bootstrap CI.
func overlaps(a, b [][]float64, s Settings) []OverlapStat {
	var out []OverlapStat
	for _, k := range s.TopK {
		k = min(k, len(a[0]))
		per := make([]float64, len(a))
		for q := range a {
			per[q] = stats.Overlap(stats.TopK(a[q], k), stats.TopK(b[q], k))
		}
		m, lo, hi := stats.MeanCI(per, 0.95, s.Bootstrap, s.Seed)
		out = append(out, OverlapStat{K: k, Mean: m, Lo: lo, Hi: hi})
	}
	return out
}

// conditioning summarises the blocks and the co-usage matrix the reference solved with.
func conditioning(at *Attributor) Conditioning {
	c := Conditioning{Damping: at.Blocks.Damping}
	var conds []float64
	for j, cj := range at.Stats.Usage {
		if cj > 0 {
			conds = append(conds, at.Blocks.Condition(j))
			c.BlockCondMax = math.Max(c.BlockCondMax, at.Blocks.Condition(j))
		}
	}
	c.BlockCondMean = meanFinite(conds)
	c.UsedFraction = float64(len(conds)) / float64(len(at.Stats.Usage))
	c.OffDiagC = at.Curvature.OffDiagonalMass()
	return c
}

// median is stats.Median with 0 for no values (a stage timed on no query), which JSON can hold.
func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	return stats.Median(x)
}

func sum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

func meanInts(x []int) float64 {
	if len(x) == 0 {
		return 0
	}
	s := 0
	for _, v := range x {
		s += v
	}
	return float64(s) / float64(len(x))
}

// meanFinite is the mean of the finite values (NaN when there are none).
func meanFinite(x []float64) float64 {
	var finite []float64
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			finite = append(finite, v)
		}
	}
	return stats.Mean(finite)
}

// finitePtr returns &x, or nil for NaN and ±Inf (which JSON cannot hold).
func finitePtr(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
