package attribution

import (
	"math"
	"slices"
	"strings"

	"github.com/protolab/protolab/models/influence"
	"github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// OverlapStat is Overlap@k averaged over queries with a 95% bootstrap interval (spec §8); in a Summary, the mean over
// models with the interval of the two-stage bootstrap and SE, the standard error over models.
type OverlapStat struct {
	K    int     `json:"k"` // the k of Overlap@k: an entry of overlap_k, clipped to N_seq
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	SE   float64 `json:"se,omitempty"`
}

// Latency summarises repeated timings of single queries: the median and quartiles of the wall-clock time and the
// median process CPU time, in milliseconds, over Repeats queries (spec §8: the median per-query latency after a
// warm-up query).
type Latency struct {
	Median  float64 `json:"median_ms"`
	Q1      float64 `json:"q1_ms"`
	Q3      float64 `json:"q3_ms"`
	CPU     float64 `json:"cpu_median_ms"`
	Repeats int     `json:"repeats"`
}

// latencyOf returns the Latency of wall and cpu times in seconds (no repeats: the zero Latency).
func latencyOf(wall, cpu []float64) Latency {
	if len(wall) == 0 {
		return Latency{}
	}
	return Latency{Median: 1e3 * stats.Median(wall), Q1: 1e3 * stats.Quantile(wall, 0.25),
		Q3: 1e3 * stats.Quantile(wall, 0.75), CPU: 1e3 * stats.Median(cpu), Repeats: len(wall)}
}

// MethodResult is one attribution method's cost and quality on one model (spec §8). Times are wall-clock on this
// machine unless named CPU.
type MethodResult struct {
	Name string `json:"name"`
	// FitSeconds is the one-off fitting: PRISM's forward pass with statistics, cache rows and postings; the
	// reference's gradient pass and sparse C; EK-FAC's covariance pass, eigendecompositions and Λ pass.
	FitSeconds float64 `json:"fit_seconds"`
	// Latency is the per-query latency at Bytes of memory: every query of the prototype-space methods and the
	// reference, one by one after a warm-up query (one forward pass, the preconditioning and the postings; the
	// reference a forward and backward pass of the head, the solve and the dot products); for EK-FAC on the blocks
	// and on P, Settings.TimedQueries queries end to end at the memory of the default method (the query's gradient
	// and preconditioning, dot products with the StoredSeqs training gradients that fit, and the recomputation of
	// every other training gradient). The gradient dot product shares EK-FAC's training pass and is not timed apart
	// (Repeats 0).
	Latency Latency `json:"latency"`
	// AllQueriesSeconds is the time to score all NumQueries queries after fitting: one by one for the
	// prototype-space methods; for EK-FAC and the gradient dot product the query gradients plus one pass over the
	// corpus recomputing the training gradients for the whole query batch (kronfluence's query batching).
	AllQueriesSeconds float64 `json:"all_queries_seconds"`
	// Bytes is the memory the method scores from: cache and preconditioner, reference gradients and curvature, or
	// EK-FAC's factors and stored training gradients.
	Bytes int64 `json:"bytes"`
	// StoredSeqs is, for EK-FAC, the number of training sequences whose gradient fits beside the factors in the
	// memory of the default method (spec §8, "matched memory").
	StoredSeqs int `json:"stored_seqs,omitempty"`
	// SpeedUp is EK-FAC's (backbone) median latency at matched memory divided by this method's; SpeedUpCPU the same
	// in process CPU time.
	SpeedUp    float64 `json:"speed_up,omitempty"`
	SpeedUpCPU float64 `json:"speed_up_cpu,omitempty"`
	// Overlap is Overlap@k with the reference's ranking, OverlapEKFAC with EK-FAC's (backbone) ranking.
	Overlap      []OverlapStat `json:"overlap,omitempty"`
	OverlapEKFAC []OverlapStat `json:"overlap_ekfac,omitempty"`
	// Spearman is the mean over queries of the Spearman correlation with the reference's scores over the union of
	// both top-100 sets (nil when undefined).
	Spearman *float64 `json:"spearman,omitempty"`
	// LDS is the linear datamodeling score (doc.go, equation 9): the mean over queries, with the 95% bootstrap
	// interval that resamples queries and retrained subsets (nil when not computed).
	LDS *Interval `json:"lds,omitempty"`
	// Top lists, per query, the corpus indices of the max(OverlapK) highest scores.
	Top [][]int `json:"top"`
}

// ModelResult is the attribution study of one PRISM model (spec §6–§8).
type ModelResult struct {
	Seed          uint64             `json:"seed"`   // the model's seed
	Source        string             `json:"source"` // the corpus it was trained on and attributed over (data.source)
	Run           string             `json:"run"`    // the model's name (lm.Config.Name)
	ValPerplexity float64            `json:"val_perplexity,omitempty"`
	NumSeqs       int                `json:"num_seqs"`
	NumTokens     int                `json:"num_tokens"`
	NumQueries    int                `json:"num_queries"`
	K             int                `json:"k"`      // the bank's prototypes
	D             int                `json:"d"`      // the width
	TopK          int                `json:"top_k"`  // the head's k, prototypes per token (prism.top_k)
	Layers        []influence.Linear `json:"layers"` // EK-FAC's backbone layers
	Conditions    prism.Conditioning `json:"conditioning"`
	Methods       []MethodResult     `json:"methods"`
	// LDSModels is the number of models retrained for the LDS (0: none).
	LDSModels int                `json:"lds_models"`
	Timings   map[string]float64 `json:"timings"`

	scores    map[string][][]float64 // [method][query][sequence], only in the process that computed them
	overlapPQ map[string][][]float64 // [method][k][query]: Overlap@k with the reference per query
	ekfacPQ   map[string][][]float64 // [method][k][query]: Overlap@k with EK-FAC per query
	lds       *ldsData               // retrained losses and predictions, only in the process that computed them
}

// Method returns the named method's result, or nil.
func (r *ModelResult) Method(name string) *MethodResult {
	for i := range r.Methods {
		if r.Methods[i].Name == name {
			return &r.Methods[i]
		}
	}
	return nil
}

// Scores returns [query][sequence] scores of a method when this process computed them (nil for a stored result).
func (r *ModelResult) Scores(method string) [][]float64 { return r.scores[method] }

// Result is the attribution study: every method on Settings.ModelSeeds PRISM models of each corpus, their summary
// over the models of each corpus, and the cost model of every method at this run's scale and at the Paper preset's.
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	Config     Settings        `json:"config"`
	// Models are the attributed models, corpus by corpus in the order of the study's corpora (ModelResult.Source).
	Models []ModelResult `json:"models"`
	// Summary is every method over the models of one corpus, corpus by corpus (Summary.Source).
	Summary []Summary `json:"summary"`
	// Cost is the cost model (FLOPs and memory per query; a model, not a measurement) at the scale of this run's
	// first model and at the Paper preset's.
	Cost []prism.CostModel `json:"cost"`
}

// Sources returns the corpora of r's models, in the order the study ran them.
func (r *Result) Sources() []string {
	var out []string
	for _, m := range r.Models {
		if !slices.Contains(out, m.Source) {
			out = append(out, m.Source)
		}
	}
	return out
}

// Corpus returns the part of r on the corpus source, as a result of its own (the models and summary of that corpus;
// the provenance, settings and cost model shared), or nil when r has no model on it.
func (r *Result) Corpus(source string) *Result {
	c := &Result{Provenance: r.Provenance, Config: r.Config, Cost: r.Cost}
	for _, m := range r.Models {
		if m.Source == source {
			c.Models = append(c.Models, m)
		}
	}
	for _, s := range r.Summary {
		if s.Source == source {
			c.Summary = append(c.Summary, s)
		}
	}
	if len(c.Models) == 0 {
		return nil
	}
	return c
}

// first returns the part of r on its first corpus: r itself when it has one corpus (or none).
func (r *Result) first() *Result {
	if s := r.Sources(); len(s) > 1 {
		return r.Corpus(s[0])
	}
	return r
}

// Method returns the named method's summary over the models of the first corpus (Corpus selects another), or nil.
func (r *Result) Method(name string) *Summary {
	for i := range r.Summary {
		if r.Summary[i].Name == name {
			return &r.Summary[i]
		}
	}
	return nil
}

// String is the study's report: the table of WriteTable.
func (r *Result) String() string {
	var b strings.Builder
	_ = WriteTable(&b, r)
	return b.String()
}

// compare fills speed-ups, Overlap@k, Spearman and the top lists of one model's result.
func compare(res *ModelResult, s Settings) {
	ref := res.scores[prism.MethodReference]
	ek := res.scores[prism.MethodEKFAC]
	base := res.Method(prism.MethodEKFAC)
	maxK := 0
	for _, k := range s.OverlapK {
		maxK = max(maxK, min(k, res.NumSeqs))
	}
	res.overlapPQ, res.ekfacPQ = map[string][][]float64{}, map[string][][]float64{}
	for i := range res.Methods {
		mr := &res.Methods[i]
		sc := res.scores[mr.Name]
		if base != nil && mr.Latency.Median > 0 {
			mr.SpeedUp = base.Latency.Median / mr.Latency.Median
		}
		if base != nil && mr.Latency.CPU > 0 {
			mr.SpeedUpCPU = base.Latency.CPU / mr.Latency.CPU
		}
		for _, q := range sc {
			mr.Top = append(mr.Top, stats.TopK(q, maxK))
		}
		if mr.Name != prism.MethodReference && ref != nil {
			mr.Overlap, res.overlapPQ[mr.Name] = overlaps(sc, ref, s)
			var rho []float64
			for q := range sc {
				rho = append(rho, stats.SpearmanTopK(sc[q], ref[q], min(100, res.NumSeqs)))
			}
			mr.Spearman = finitePtr(meanFinite(rho))
		}
		if ek != nil && mr.Name != prism.MethodEKFAC {
			mr.OverlapEKFAC, res.ekfacPQ[mr.Name] = overlaps(sc, ek, s)
		}
	}
}

// overlaps returns Overlap@k of a against b for every k of the settings, averaged over queries with a bootstrap CI,
// and the per-query values [k][query].
func overlaps(a, b [][]float64, s Settings) ([]OverlapStat, [][]float64) {
	var out []OverlapStat
	var perQuery [][]float64
	for i, k := range s.OverlapK {
		k = min(k, len(a[0]))
		per := make([]float64, len(a))
		for q := range a {
			per[q] = stats.Overlap(stats.TopK(a[q], k), stats.TopK(b[q], k))
		}
		m, lo, hi := stats.MeanCI(per, 0.95, s.Bootstrap, s.Seed+uint64(i))
		out = append(out, OverlapStat{K: k, Mean: m, Lo: lo, Hi: hi})
		perQuery = append(perQuery, per)
	}
	return out, perQuery
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
