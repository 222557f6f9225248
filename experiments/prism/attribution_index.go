package prism

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/influence"
	"github.com/protolab/protolab/workbench/stats"
	"github.com/protolab/protolab/workbench/store"
)

// Files of the attribution cache, under <run folder>/attribution/<hash>/.
const (
	AttributionDir   = "attribution"
	CodesFile        = "codes.bin"        // influence.CodeCache: codes, output gradients, postings
	ColumnsFile      = "columns.bin"      // influence.ColumnCache: per-sequence gradient columns with ∂a/∂P
	PrismStatsFile   = "prism_stats.json" // PrismStats: S, c_j, c^rec_j, n_j, C, C_rec and the build times
	attributionCache = 2                  // format version, part of the cache key
)

// PrismStats are the curvature statistics of the fitting pass (spec §6.2) and how long the cache took to build.
type PrismStats struct {
	Tokens   int64     `json:"tokens"`
	Fisher   []float64 `json:"fisher"`    // S = (1/N_tok) Σ ũ ũᵀ [D, D]
	Usage    []float64 `json:"usage"`     // c_j = Σ_t a_{t,j}² [K]
	UsageRec []float64 `json:"usage_rec"` // c^rec_j = Σ_t a_{t,j}²/(‖z_t‖² + ε) [K]
	Nearest  []int64   `json:"nearest"`   // n_j = #{t : argmax_i cos(z_t, p_i) = j} [K]
	// CoUse is the sparse co-usage C = Σ_t a_t a_tᵀ [K, K]; CoUseRec is C_rec = Σ_t a_t a_tᵀ/(‖z_t‖² + ε).
	CoUse    *influence.SparseSym `json:"co_use"`
	CoUseRec *influence.SparseSym `json:"co_use_rec"`
	// FitSeconds is the pass over the corpus (the head's forward and backward) with the statistics and the cache
	// rows; IndexSeconds the postings of both caches.
	FitSeconds   float64 `json:"fit_seconds"`
	IndexSeconds float64 `json:"index_seconds"`
}

// Attributor ranks the training sequences of a PRISM model for queries with the methods of spec §6–§7. The cached
// PRISM statistics are built by NewAttributor (or loaded from the run folder); the reference and the EK-FAC factors
// are fitted on first use.
type Attributor struct {
	Model  *Model
	Config AttributionConfig
	// Corpus holds the N_seq training sequences ranked, [T+1] tokens each; NumTokens = N_seq·T.
	Corpus    [][]int32
	NumTokens int
	// Cache is the option-B cache (codes and u_t per token); Columns the option-A cache (g_{s,j} with ∂a/∂P).
	Cache   *influence.CodeCache
	Columns *influence.ColumnCache
	Stats   *PrismStats
	// Blocks is the diagonal-C preconditioner (H_jj + λI)⁻¹ (spec §5) with E_jj = 2λ_rec c^rec_j + 2λ_1 + 2λ_2 n_j.
	Blocks *influence.Blocks
	// Curvature is the full H = C ⊗ S + E ⊗ I + λI of spec §5 and §6.3 with E = 2λ_rec C_rec + Δ (extraTerms) and the
	// same λ as Blocks, shared by MethodPrism and the reference, with its solver: exact in the eigenbasis of S for
	// banks of up to direct_max_k prototypes, else CG to cg_tol preconditioned by Blocks.
	Curvature *influence.CoUsage
	// Cached reports that the cache was loaded from disk rather than built by this call.
	Cached bool
	// Timings records the seconds of each fitting stage run by this Attributor ("reference_fit", "ekfac_cov", …).
	Timings map[string]float64

	graphs  *attrGraphs
	dir     string
	sampled []float32 // ũ per corpus token, [N_tok, D]; kept from the fitting pass (nil after a load)
	ref     *reference
	ekfac   *blockEKFAC
	bank    *bankEKFAC
}

// NewAttributor builds (or loads from <run folder>/attribution/) the PRISM caches of m over the corpus of ac: one
// pass (the head's forward and backward, backbone frozen) that stores every token's code and output gradient with
// the postings, every sequence's gradient columns, and the curvature statistics; then it factorises the
// preconditioners. It fails for the dense model or an invalid config.
func NewAttributor(m *Model, ac AttributionConfig) (*Attributor, error) {
	T := m.Data.Config.SeqLen
	if err := ac.Validate(T); err != nil {
		return nil, errors.WithMessage(err, "attribution")
	}
	g, err := newAttrGraphs(m)
	if err != nil {
		return nil, err
	}
	a := &Attributor{Model: m, Config: ac, graphs: g, Timings: map[string]float64{}}
	n := m.Data.TrainSeqs.NumSequences()
	if ac.TrainSeqs > 0 {
		n = min(n, ac.TrainSeqs)
	}
	for i := 0; i < n; i++ {
		a.Corpus = append(a.Corpus, m.Data.TrainSeqs.Sequence(i))
	}
	a.NumTokens = n * T
	if m.Dir != "" {
		key := mustJSON(struct {
			Version, Seqs, Batch int
			Seed                 uint64
		}{attributionCache, n, a.batch(), ac.Seed})
		sum := sha256.Sum256(key)
		a.dir = filepath.Join(m.Dir, AttributionDir, hex.EncodeToString(sum[:])[:10])
		if a.load() == nil {
			a.Cached = true
			return a, a.makePreconditioners()
		}
	}
	if err := a.build(); err != nil {
		return nil, err
	}
	return a, a.makePreconditioners()
}

func (a *Attributor) batch() int {
	if a.Config.Batch > 0 {
		return a.Config.Batch
	}
	return a.Model.Data.Config.BatchSize
}

// batches calls fn for consecutive groups of at most batch() corpus sequences, with the index of the first.
func (a *Attributor) batches(fn func(first int, rows [][]int32) error) error {
	B := a.batch()
	for lo := 0; lo < len(a.Corpus); lo += B {
		if err := fn(lo, a.Corpus[lo:min(lo+B, len(a.Corpus))]); err != nil {
			return err
		}
	}
	return nil
}

// labelTag names the sampled-label noise of the corpus batch starting at sequence first, so that every pass over
// the corpus samples the same labels.
func labelTag(first int) string { return "prism/attribution/labels/" + strconv.Itoa(first) }

func (a *Attributor) build() error {
	m := a.Model
	K, D, k := m.Prism.NumPrototypes, m.Cfg.Width, m.Prism.TopK
	cache, err := influence.NewCodeCache(K, D, k)
	if err != nil {
		return err
	}
	columns, err := influence.NewColumnCache(K, D)
	if err != nil {
		return err
	}
	stats := influence.NewCodeStats(K, D, true)
	start := time.Now()
	err = a.batches(func(first int, rows [][]int32) error {
		// The cross-entropy gradient per slot (with ∂a/∂P); REC and R2 are left out (weight 0).
		h, err := a.graphs.runHead(rows, a.batch(), nil, false, true, a.Config.Seed, labelTag(first))
		if err != nil {
			return err
		}
		if err := addHeadStats(stats, h); err != nil {
			return err
		}
		a.sampled = append(a.sampled, h.uSampled...)
		T := h.T
		for r := 0; r < h.rows; r++ {
			lo, hi := r*T, (r+1)*T
			if err := cache.AddSequence(h.idx[lo*k:hi*k], h.acts[lo*k:hi*k], h.u[lo*D:hi*D]); err != nil {
				return err
			}
			cols, _, ce := slotColumns(h, r)
			if err := columns.AddSequence(cols, ce); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fit := time.Since(start).Seconds()
	start = time.Now()
	cache.Index()
	columns.Index()
	a.Cache, a.Columns = cache, columns
	a.Stats = &PrismStats{Tokens: stats.Tokens, Fisher: stats.FisherMean(), Usage: stats.Usage, UsageRec: stats.UsageW,
		Nearest: stats.Counts, CoUse: stats.CoUse.Sparse(), CoUseRec: stats.CoUseW.Sparse(), FitSeconds: fit,
		IndexSeconds: time.Since(start).Seconds()}
	if a.dir == "" {
		return nil
	}
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return errors.Wrapf(err, "creating %s", a.dir)
	}
	if err := cache.Save(filepath.Join(a.dir, CodesFile)); err != nil {
		return err
	}
	if err := columns.Save(filepath.Join(a.dir, ColumnsFile)); err != nil {
		return err
	}
	// The statistics are written last: their presence marks a complete cache.
	return store.SaveJSON(filepath.Join(a.dir, PrismStatsFile), a.Stats)
}

// addHeadStats adds a head pass to the statistics: codes, weights w_t, the nearest prototype (slot 0) and ũ.
func addHeadStats(stats *influence.CodeStats, h *headOut) error {
	n := h.rows * h.T
	nearest := make([]int32, n)
	for t := range nearest {
		nearest[t] = h.idx[t*h.k]
	}
	return stats.Add(h.k, h.idx, f64(h.acts), h.w, nearest, f64(h.uSampled))
}

func (a *Attributor) load() error {
	var st PrismStats
	if err := store.LoadJSON(filepath.Join(a.dir, PrismStatsFile), &st); err != nil {
		return err
	}
	c, err := influence.LoadCodeCache(filepath.Join(a.dir, CodesFile))
	if err != nil {
		return err
	}
	cols, err := influence.LoadColumnCache(filepath.Join(a.dir, ColumnsFile))
	if err != nil {
		return err
	}
	m := a.Model
	K := m.Prism.NumPrototypes
	if c.K != K || c.D != m.Cfg.Width || c.TopK != m.Prism.TopK || c.NumSeqs() != len(a.Corpus) ||
		int64(c.NumTokens()) != st.Tokens || cols.K != K || cols.D != c.D || cols.NumSeqs != len(a.Corpus) ||
		st.CoUse == nil || st.CoUse.K != K || st.CoUseRec == nil || st.CoUseRec.K != K {
		return errors.Errorf("%s does not match the model and corpus", a.dir)
	}
	a.Cache, a.Columns, a.Stats = c, cols, &st
	return nil
}

// extraDiag returns E_jj = 2λ_rec c^rec_j + 2λ_1 + 2λ_2 n_j (spec §5; c^rec = c when rec_norm is false).
func (a *Attributor) extraDiag() []float64 {
	pc := a.Model.Prism
	e := make([]float64, pc.NumPrototypes)
	for j := range e {
		rec := a.Stats.UsageRec[j]
		if !pc.RecNorm {
			rec = a.Stats.Usage[j]
		}
		e[j] = 2*pc.RecWeight*rec + 2*pc.R1Weight + 2*pc.R2Weight*float64(a.Stats.Nearest[j])
	}
	return e
}

// makePreconditioners builds the diagonal-C blocks and the full curvature with its solver (timed as
// "prism_factor").
func (a *Attributor) makePreconditioners() error {
	b, err := influence.NewBlocks(a.Stats.Fisher, a.Model.Cfg.Width, a.Stats.Usage, a.extraDiag(), -1, a.Config.DampingScale)
	if err != nil {
		return errors.WithMessage(err, "prism attribution: the diagonal-C blocks")
	}
	a.Blocks = b
	start := time.Now()
	h := &influence.KronSum{D: a.Model.Cfg.Width, K: a.Model.Prism.NumPrototypes, S: a.Stats.Fisher, C: a.Stats.CoUse,
		E: a.extraTerms(), Damping: b.Damping}
	if a.Curvature, err = influence.NewCoUsage(h, b, a.Config.DirectMaxK, a.Config.CGTol, a.Config.CGMaxIter); err != nil {
		return errors.WithMessage(err, "prism attribution: the co-usage curvature")
	}
	a.Timings["prism_factor"] = time.Since(start).Seconds()
	return nil
}

// extraTerms returns the sparse E = 2λ_rec C_rec + Δ, Δ_jj = 2λ_1 + 2λ_2 n_j, of the full curvature (spec §5 and §6.3;
// C_rec = C when rec_norm is false); its diagonal is extraDiag.
func (a *Attributor) extraTerms() *influence.SparseSym {
	pc := a.Model.Prism
	rec := a.Stats.CoUseRec
	if !pc.RecNorm {
		rec = a.Stats.CoUse
	}
	acc := rec.Accumulator().Scaled(2 * pc.RecWeight)
	delta := make([]float64, pc.NumPrototypes)
	for j := range delta {
		delta[j] = 2*pc.R1Weight + 2*pc.R2Weight*float64(a.Stats.Nearest[j])
	}
	acc.AddDiag(delta)
	return acc.Sparse()
}

// Bytes returns the memory MethodPrism scores from: the column cache and the full curvature's solver.
func (a *Attributor) Bytes() int64 { return a.Columns.Bytes() + a.Curvature.Bytes() }

// queryRow is a query: [T+1] tokens and the weight of each predicted position's cross-entropy (1 on the
// completion, 0 on the prompt and padding).
type queryRow struct {
	tokens  []int32
	weights []float64
}

// validationQueries returns the first Config.Queries validation sequences as queries, their first PromptTokens
// predicted positions excluded.
func (a *Attributor) validationQueries() []queryRow {
	vs := a.Model.Data.ValSeqs
	n := min(a.Config.Queries, vs.NumSequences())
	qs := make([]queryRow, n)
	for i := range qs {
		row := vs.Sequence(i)
		w := make([]float64, len(row)-1)
		for t := a.Config.PromptTokens; t < len(w); t++ {
			w[t] = 1
		}
		qs[i] = queryRow{row, w}
	}
	return qs
}

// textQuery tokenizes "prompt|completion" (or a text without "|", all of whose predictable tokens are attributed)
// into a query row of T+1 tokens: longer texts keep their last T+1 tokens, shorter ones are padded with EOS at
// weight 0. It fails when no token is left to attribute.
func (a *Attributor) textQuery(text string) (queryRow, error) {
	prompt, completion, split := strings.Cut(text, "|")
	if !split {
		prompt, completion = "", text
	}
	tok := a.Model.Data.Tokenizer
	p, c := tok.Encode(prompt), tok.Encode(completion)
	toks := append(append([]int32(nil), p...), c...)
	first := len(p) // index of the first attributed token
	if first == 0 {
		first = 1
	}
	T1 := a.Model.Data.Config.SeqLen + 1
	if len(toks) > T1 {
		drop := len(toks) - T1
		toks, first = toks[drop:], max(1, first-drop)
	}
	row := make([]int32, T1)
	w := make([]float64, T1-1)
	copy(row, toks)
	for i := len(toks); i < T1; i++ {
		row[i] = a.Model.Data.EOS
	}
	n := 0
	for i := first; i < len(toks); i++ {
		w[i-1] = 1
		n++
	}
	if n == 0 {
		return queryRow{}, errors.Errorf("prism attribution: query %q leaves no token to attribute (give at least two "+
			"tokens, or a non-empty completion after \"|\")", text)
	}
	return queryRow{row, w}, nil
}

// codeColumns runs one forward pass on the query and returns the columns g_{q,j} = Σ_t c_t a_{t,j} u_t of its
// attributed tokens (codes held fixed, cross-entropy only: option B).
func (a *Attributor) codeColumns(q queryRow) ([]int32, [][]float64, error) {
	h, err := a.graphs.runHead([][]int32{q.tokens}, 1, nil, false, false, a.Config.Seed, noNoise)
	if err != nil {
		return nil, nil, err
	}
	D, k := h.D, h.k
	var idx []int32
	var acts, u []float64
	for t, w := range q.weights {
		if w == 0 {
			continue
		}
		idx = append(idx, h.idx[t*k:(t+1)*k]...)
		acts = append(acts, f64(h.acts[t*k:(t+1)*k])...)
		for _, v := range h.u[t*D : (t+1)*D] {
			u = append(u, w*float64(v))
		}
	}
	cols, g := influence.ColumnGradients(D, k, idx, acts, u)
	return cols, g, nil
}

// routeColumns runs the head's forward and backward pass on the query and returns the columns of the gradient of
// its attributed cross-entropy with respect to the bank, routing term ∂a/∂P included (option A).
func (a *Attributor) routeColumns(q queryRow) ([]int32, [][]float64, error) {
	h, err := a.graphs.runHead([][]int32{q.tokens}, 1, [][]float64{q.weights}, false, true, a.Config.Seed, noNoise)
	if err != nil {
		return nil, nil, err
	}
	cols, _, ce := slotColumns(h, 0)
	return cols, ce, nil
}

// cachedQuery scores one query with a cached method (MethodPrism, MethodPrismDiagC, MethodPrismFullC,
// MethodPrismCodes or MethodPrismDot; the table in attribution.go): the query's gradient columns, their
// preconditioning, and the postings of the matching cache. Scores are divided by N_tok.
func (a *Attributor) cachedQuery(q queryRow, method string) ([]float64, error) {
	route := method == MethodPrism || method == MethodPrismDiagC
	var cols []int32
	var g [][]float64
	var err error
	if route {
		cols, g, err = a.routeColumns(q)
	} else {
		cols, g, err = a.codeColumns(q)
	}
	if err != nil {
		return nil, err
	}
	switch method {
	case MethodPrism, MethodPrismFullC:
		if cols, g, err = a.Curvature.SolveColumns(cols, g); err != nil {
			return nil, errors.WithMessage(err, "prism attribution: full co-usage solve")
		}
	case MethodPrismDiagC, MethodPrismCodes:
		for n, j := range cols {
			g[n] = a.Blocks.Apply(int(j), g[n])
		}
	case MethodPrismDot:
	default:
		return nil, errors.Errorf("prism attribution: %q is not a cached method", method)
	}
	var scores []float64
	if route {
		scores = a.Columns.Scores(cols, g)
	} else {
		scores = a.Cache.Scores(cols, g)
	}
	return scale(scores, 1/float64(a.NumTokens)), nil
}

// cachedBytes returns the memory a cached method scores from: its cache and its preconditioner.
func (a *Attributor) cachedBytes(method string) int64 {
	switch method {
	case MethodPrism:
		return a.Columns.Bytes() + a.Curvature.Bytes()
	case MethodPrismDiagC:
		return a.Columns.Bytes() + a.Blocks.Bytes()
	case MethodPrismFullC:
		return a.Cache.Bytes() + a.Curvature.Bytes()
	case MethodPrismCodes:
		return a.Cache.Bytes() + a.Blocks.Bytes()
	}
	return a.Cache.Bytes()
}

// cachedMethods lists the methods cachedQuery serves, default first.
var cachedMethods = []string{MethodPrism, MethodPrismDiagC, MethodPrismFullC, MethodPrismCodes, MethodPrismDot}

func scale(x []float64, c float64) []float64 {
	for i := range x {
		x[i] *= c
	}
	return x
}

// Hit is one ranked training sequence.
type Hit struct {
	Seq   int     `json:"seq"`   // index in the corpus (the packed training sequence number)
	Score float64 `json:"score"` // influence / N_tok; positive = helpful
	Text  string  `json:"text"`  // the decoded sequence
}

// Methods lists the methods Query accepts.
var Methods = []string{MethodPrism, MethodPrismDiagC, MethodPrismFullC, MethodPrismCodes, MethodPrismDot, MethodReference,
	MethodReferenceCE, MethodEKFAC, MethodEKFACBank, MethodGradDot}

// Query ranks the corpus for a text query ("prompt|completion": the completion's cross-entropy is attributed; a
// text without "|" attributes every token after the first) with one of Methods and returns the top sequences,
// highest score first. EK-FAC factors and the reference are fitted on first use.
func (a *Attributor) Query(text, method string, top int) ([]Hit, error) {
	q, err := a.textQuery(text)
	if err != nil {
		return nil, err
	}
	scores, err := a.Scores([]queryRow{q}, method)
	if err != nil {
		return nil, err
	}
	var hits []Hit
	for _, s := range stats.TopK(scores[0], top) {
		hits = append(hits, Hit{Seq: s, Score: scores[0][s], Text: string(a.Model.Data.Tokenizer.Decode(a.Corpus[s]))})
	}
	return hits, nil
}

// Scores returns [query][corpus sequence] scores of a method (one of Methods).
func (a *Attributor) Scores(qs []queryRow, method string) ([][]float64, error) {
	out := make([][]float64, len(qs))
	var err error
	switch method {
	case MethodPrism, MethodPrismDiagC, MethodPrismFullC, MethodPrismCodes, MethodPrismDot:
		for i, q := range qs {
			if out[i], err = a.cachedQuery(q, method); err != nil {
				return nil, err
			}
		}
	case MethodReference, MethodReferenceCE:
		if err := a.fitReference(); err != nil {
			return nil, err
		}
		for i, q := range qs {
			full, ce, err := a.referenceQuery(q)
			if err != nil {
				return nil, err
			}
			out[i] = full
			if method == MethodReferenceCE {
				out[i] = ce
			}
		}
	case MethodEKFAC, MethodGradDot:
		if err := a.fitBlockEKFAC(); err != nil {
			return nil, err
		}
		ek, gd, _, err := a.blockScores(qs)
		if err != nil {
			return nil, err
		}
		if method == MethodEKFAC {
			return ek, nil
		}
		return gd, nil
	case MethodEKFACBank:
		if err := a.fitBankEKFAC(); err != nil {
			return nil, err
		}
		return a.bankScores(qs)
	default:
		return nil, errors.Errorf("prism attribution: unknown method %q; want one of %s", method, strings.Join(Methods, ", "))
	}
	return out, nil
}

// reference is the full prototype-space reference of spec §6.3: per-sequence gradients in float64, solved with
// the Attributor's co-usage curvature (the same sparse C, C_rec, S, n_j and λ).
type reference struct {
	cols  [][]int32     // per corpus sequence: the prototypes with a non-zero gradient column
	grads [][][]float64 // per corpus sequence and column: G^ref_{s,j} [D]
	ce    [][][]float64 // the same with the cross-entropy part only
	bytes int64         // memory of the gradients
}

// fitReference runs the reference pass over the corpus: per-sequence gradients with ∂a/∂P, REC and R2.
func (a *Attributor) fitReference() error {
	if a.ref != nil {
		return nil
	}
	D := a.Model.Cfg.Width
	r := &reference{}
	start := time.Now()
	err := a.batches(func(first int, rows [][]int32) error {
		h, err := a.graphs.runHead(rows, a.batch(), nil, true, true, a.Config.Seed, labelTag(first))
		if err != nil {
			return err
		}
		for row := 0; row < h.rows; row++ {
			cols, g, ce := slotColumns(h, row)
			r.cols, r.grads, r.ce = append(r.cols, cols), append(r.grads, g), append(r.ce, ce)
			r.bytes += int64(len(cols)) * int64(4+8*D)
		}
		return nil
	})
	if err != nil {
		return err
	}
	a.Timings["reference_fit"] = time.Since(start).Seconds()
	a.ref = r
	return nil
}

// slotColumns sums the per-slot reference gradients of one row of a head pass into prototype columns: the full
// gradient and its cross-entropy part.
func slotColumns(h *headOut, row int) (cols []int32, full, ce [][]float64) {
	D, k, T := h.D, h.k, h.T
	type pair struct{ full, ce []float64 }
	byCol := map[int32]pair{}
	for t := row * T; t < (row+1)*T; t++ {
		for i := 0; i < k; i++ {
			j := h.idx[t*k+i]
			c, x := h.refGradCE[(t*k+i)*D:(t*k+i+1)*D], h.refGradAux[(t*k+i)*D:(t*k+i+1)*D]
			if allZero(c) && allZero(x) {
				continue
			}
			p, ok := byCol[j]
			if !ok {
				p = pair{make([]float64, D), make([]float64, D)}
				byCol[j] = p
			}
			for d := range c {
				p.full[d] += c[d] + x[d]
				p.ce[d] += c[d]
			}
		}
	}
	for j := range byCol {
		cols = append(cols, j)
	}
	sort.Slice(cols, func(x, y int) bool { return cols[x] < cols[y] })
	for _, j := range cols {
		full, ce = append(full, byCol[j].full), append(ce, byCol[j].ce)
	}
	return cols, full, ce
}

func allZero(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

// referenceQuery solves x_q = H_ref⁻¹ vec(G^ref_q) (Attributor.Curvature) and returns ⟨x_q, G^ref_s⟩/N_tok for every
// corpus sequence and the same with the cross-entropy part of G^ref_s only (the MethodReferenceCE ablation). The
// query gradient is its completion's cross-entropy with ∂a/∂P.
func (a *Attributor) referenceQuery(q queryRow) (full, ce []float64, err error) {
	h, err := a.graphs.runHead([][]int32{q.tokens}, 1, [][]float64{q.weights}, false, true, a.Config.Seed, noNoise)
	if err != nil {
		return nil, nil, err
	}
	r := a.ref
	D := a.Model.Cfg.Width
	cols, g, _ := slotColumns(h, 0)
	b := make([]float64, a.Curvature.H.K*D)
	for n, j := range cols {
		copy(b[int(j)*D:(int(j)+1)*D], g[n])
	}
	x, err := a.Curvature.Solve(b)
	if err != nil {
		return nil, nil, errors.WithMessage(err, "prism attribution: reference solve")
	}
	full, ce = make([]float64, len(a.Corpus)), make([]float64, len(a.Corpus))
	for s := range full {
		for n, j := range r.cols[s] {
			xj := x[int(j)*D : (int(j)+1)*D]
			full[s] += influence.Dot(xj, r.grads[s][n])
			ce[s] += influence.Dot(xj, r.ce[s][n])
		}
	}
	return scale(full, 1/float64(a.NumTokens)), scale(ce, 1/float64(a.NumTokens)), nil
}
