package prism

import (
	"fmt"
	"math"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/influence"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
	"github.com/protolab/protolab/workbench/store"
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

// AttributionConditioning describes the curvature the prototype-space methods invert (spec §5, §8).
type AttributionConditioning struct {
	Damping       float64 `json:"damping"`         // λ of the blocks and the reference
	BlockCondMean float64 `json:"block_cond_mean"` // κ of (H_jj + λI) over the used prototypes
	BlockCondMax  float64 `json:"block_cond_max"`
	OffDiagC      float64 `json:"off_diag_c"`    // Σ_{i≠j}|C_ij| / Σ|C_ij|
	CGIterations  float64 `json:"cg_iterations"` // mean CG iterations of a reference query
	UsedFraction  float64 `json:"used_fraction"` // fraction of prototypes with c_j > 0 in the corpus
}

// AttributionResult is the attribution study of one PRISM model (spec §6–§8).
type AttributionResult struct {
	Config     AttributionConfig       `json:"config"`
	Run        string                  `json:"run"`
	NumSeqs    int                     `json:"num_seqs"`
	NumTokens  int                     `json:"num_tokens"`
	NumQueries int                     `json:"num_queries"`
	K          int                     `json:"k"`
	D          int                     `json:"d"`
	TopK       int                     `json:"top_k"`
	Layers     []influence.Linear      `json:"layers"` // EK-FAC's backbone layers
	Conditions AttributionConditioning `json:"conditioning"`
	Methods    []MethodResult          `json:"methods"`
	Timings    map[string]float64      `json:"timings"`
	Provenance *run.Provenance         `json:"provenance"`
	// Cached is true when the result was loaded from the run folder.
	Cached bool                   `json:"-"`
	scores map[string][][]float64 // [method][query][sequence], only in the process that computed them
}

// Method returns the named method's result, or nil.
func (r *AttributionResult) Method(name string) *MethodResult {
	for i := range r.Methods {
		if r.Methods[i].Name == name {
			return &r.Methods[i]
		}
	}
	return nil
}

// Scores returns [query][sequence] scores of a method when this process computed them (nil after a cache load).
func (r *AttributionResult) Scores(method string) [][]float64 { return r.scores[method] }

// RunAttribution loads or trains the PRISM model of cfg and runs the attribution study cfg.Attribution on it
// (RunAttributionWith).
func RunAttribution(cfg Config, opts ...Option) (*AttributionResult, error) {
	return RunAttributionWith(cfg, cfg.Attribution, opts...)
}

// RunAttributionWith loads or trains the PRISM model of cfg and runs the attribution study ac on it; with cfg.Out set
// the result is cached in the run folder (scores themselves are not).
func RunAttributionWith(cfg Config, ac AttributionConfig, opts ...Option) (*AttributionResult, error) {
	if err := ac.Validate(cfg.Data.SeqLen); err != nil {
		return nil, errors.WithMessage(err, "attribution")
	}
	m, err := LoadOrTrain(cfg, false, opts...)
	if err != nil {
		return nil, err
	}
	key := struct {
		Run         string            `json:"run"`
		Version     int               `json:"version"` // the cache format and method set
		Attribution AttributionConfig `json:"attribution"`
	}{m.Run.Config.Name() + "-" + m.Run.Config.Hash(), attributionCache, ac}
	res, hit, err := store.LoadOrCompute(m.Dir, "attribution", key, func() (*AttributionResult, error) {
		return AttributeModel(m, ac, opts...)
	})
	if err != nil {
		return nil, err
	}
	res.Cached = hit
	return res, nil
}

// AttributeModel runs the attribution study on a trained PRISM model: every method on the validation queries, their
// timings and memory, Overlap@k and Spearman against the reference, conditioning, and (LDSSubsets > 0) the LDS.
func AttributeModel(m *Model, ac AttributionConfig, opts ...Option) (*AttributionResult, error) {
	o := newOptions(opts)
	var rc any = ac
	if m.Run != nil {
		rc = m.Run.Config
	}
	prov := run.NewProvenance(rc, o.overrides, ac.Seed)
	at, err := NewAttributor(m, ac)
	if err != nil {
		return nil, err
	}
	qs := at.validationQueries()
	res := &AttributionResult{Config: ac, NumSeqs: len(at.Corpus), NumTokens: at.NumTokens, NumQueries: len(qs),
		K: m.Prism.NumPrototypes, D: m.Cfg.Width, TopK: m.Prism.TopK, Timings: at.Timings, Provenance: prov,
		scores: map[string][][]float64{}}
	if m.Run != nil {
		res.Run = m.Run.Config.Name()
	}
	o.logf("prism attribution: %d corpus sequences (%d tokens), %d queries, cache %s", res.NumSeqs, res.NumTokens,
		len(qs), map[bool]string{true: "loaded", false: "built"}[at.Cached])

	add := func(mr MethodResult, scores [][]float64) {
		res.Methods = append(res.Methods, mr)
		res.scores[mr.Name] = scores
	}
	// Prototype-space methods: warm up (graph compilation), then time every query.
	prismFit := at.Stats.FitSeconds + at.Stats.IndexSeconds
	for _, name := range cachedMethods {
		if _, err := at.cachedQuery(qs[0], name); err != nil {
			return nil, err
		}
		scores := make([][]float64, len(qs))
		var tm queryTimes
		for i, q := range qs {
			w := startWatch()
			if scores[i], err = at.cachedQuery(q, name); err != nil {
				return nil, err
			}
			tm.add(w.stop())
		}
		fit := prismFit
		if name == MethodPrism || name == MethodPrismFullC {
			fit += at.Timings["prism_factor"]
		}
		add(tm.result(MethodResult{Name: name, FitSeconds: fit, Bytes: at.cachedBytes(name)}), scores)
	}
	o.logf("prism attribution: cached method %.3g ms per query, cache %.3g MB", res.Method(MethodPrism).QueryMs,
		float64(res.Method(MethodPrism).Bytes)/1e6)

	if err := at.fitReference(); err != nil {
		return nil, err
	}
	if _, _, err := at.referenceQuery(qs[0]); err != nil {
		return nil, err
	}
	at.Curvature.Iters = nil
	refScores, refCE := make([][]float64, len(qs)), make([][]float64, len(qs))
	var tm queryTimes
	for i, q := range qs {
		w := startWatch()
		if refScores[i], refCE[i], err = at.referenceQuery(q); err != nil {
			return nil, err
		}
		tm.add(w.stop())
	}
	refIters := meanInts(at.Curvature.Iters)
	refFit := at.Timings["reference_fit"] + at.Timings["prism_factor"]
	refBytes := at.ref.bytes + at.Curvature.Bytes()
	add(tm.result(MethodResult{Name: MethodReference, FitSeconds: refFit, Bytes: refBytes}), refScores)
	// The ablation shares the reference's solve; its time and memory are the reference's.
	add(tm.result(MethodResult{Name: MethodReferenceCE, FitSeconds: refFit, Bytes: refBytes}), refCE)
	o.logf("prism attribution: reference %.3g ms per query (%s)", res.Method(MethodReference).QueryMs,
		map[bool]string{true: "direct solve", false: fmt.Sprintf("%.1f CG iterations", refIters)}[at.Curvature.Direct != nil])

	budget := res.Method(MethodPrism).Bytes
	if ac.wantBlocks() {
		if err := at.fitBlockEKFAC(); err != nil {
			return nil, err
		}
		res.Layers = at.ekfac.layers
		if _, _, err := at.blockQueryGradients(qs[0]); err != nil {
			return nil, err
		}
		ek, gd, t, err := at.blockScores(qs)
		if err != nil {
			return nil, err
		}
		for i := 0; i < min(ac.TimedQueries, len(qs)); i++ {
			if _, err := at.timeBlockQuery(qs[i]); err != nil {
				return nil, err
			}
		}
		fit := at.Timings["ekfac_covariance"] + at.Timings["ekfac_eigen"] + at.Timings["ekfac_lambda"]
		add(ekfacResult(MethodEKFAC, fit, at.ekfac.f.Bytes(), t, len(at.Corpus), budget, 0), ek)
		add(ekfacResult(MethodGradDot, 0, 0, t, len(at.Corpus), budget, 0), gd)
		o.logf("prism attribution: EK-FAC (backbone, %d layers, %d parameters) %.3g ms per query recomputing, %.3g ms at "+
			"matched memory", len(res.Layers), at.ekfac.f.NumParams(), res.Method(MethodEKFAC).QueryMs,
			res.Method(MethodEKFAC).MatchedQueryMs)
	}
	if ac.wantBank() {
		if err := at.fitBankEKFAC(); err != nil {
			return nil, err
		}
		if _, err := at.bankQuery(qs[0]); err != nil {
			return nil, err
		}
		bk, err := at.bankScores(qs)
		if err != nil {
			return nil, err
		}
		for i := 0; i < min(ac.TimedQueries, len(qs)); i++ {
			if _, err := at.timeBankQuery(qs[i]); err != nil {
				return nil, err
			}
		}
		fit := prismFit + at.Timings["ekfac_bank_covariance"] + at.Timings["ekfac_bank_eigen"] + at.Timings["ekfac_bank_lambda"]
		add(ekfacResult(MethodEKFACBank, fit, at.bank.f.Bytes(), &at.bank.timing, len(at.Corpus), budget,
			at.Stats.FitSeconds), bk)
	}

	compare(res, qs)
	res.Conditions = conditioning(at)
	res.Conditions.CGIterations = refIters
	if ac.LDSSubsets > 0 {
		if err := at.lds(res, qs, o); err != nil {
			return nil, err
		}
	}
	prov.Finish()
	return res, nil
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

func startWatch() watch { return watch{time.Now(), cpuSeconds()} }

func (w watch) stop() (wall, cpu float64) {
	return time.Since(w.wall).Seconds(), cpuSeconds() - w.cpu
}

// compare fills speed-ups, Overlap@k, Spearman and the top lists.
func compare(res *AttributionResult, qs []queryRow) {
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
func overlaps(a, b [][]float64, ac AttributionConfig) []OverlapStat {
	var out []OverlapStat
	for _, k := range ac.TopK {
		k = min(k, len(a[0]))
		per := make([]float64, len(a))
		for q := range a {
			per[q] = stats.Overlap(stats.TopK(a[q], k), stats.TopK(b[q], k))
		}
		m, lo, hi := stats.MeanCI(per, 0.95, ac.Bootstrap, ac.Seed)
		out = append(out, OverlapStat{K: k, Mean: m, Lo: lo, Hi: hi})
	}
	return out
}

// conditioning summarises the blocks and the co-usage matrix the reference solved with.
func conditioning(at *Attributor) AttributionConditioning {
	c := AttributionConditioning{Damping: at.Blocks.Damping}
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
