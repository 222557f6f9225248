package prism

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	prismlayer "github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/influence"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/store"
)

// AttributorConfig configures an Attributor: the corpus it ranks, its passes over it and the solvers of the
// prototype-space curvature (docs/spec/prism.md §5, §6). Start from DefaultAttributorConfig.
type AttributorConfig struct {
	// TrainSeqs is N_seq, the attribution corpus: the first TrainSeqs packed training sequences; 0 means all.
	TrainSeqs int `json:"train_seqs"`
	// Batch is the number of sequences per forward pass; 0 means data.batch_size.
	Batch int `json:"batch"`
	// DampingScale sets λ = DampingScale × the mean eigenvalue, for the PRISM blocks (spec §5) and EK-FAC (§7.1);
	// > 0. Spec: 0.1.
	DampingScale float64 `json:"damping_scale"`
	// CGTol is the relative residual of CG solves of the full curvature (spec §6.3: 1e-6); in (0, 1). CGMaxIter
	// bounds their iterations; > 0.
	CGTol     float64 `json:"cg_tol"`
	CGMaxIter int     `json:"cg_max_iter"`
	// DirectMaxK: banks of at most DirectMaxK prototypes are solved exactly instead of by CG, with one Cholesky
	// factorisation per eigenvector of S (spec §5: D independent K×K systems; D·K² floats of memory); ≥ 0.
	DirectMaxK int `json:"direct_max_k"`
	// Seed seeds the sampled labels of the Fisher and the subsets of Attributor.Retrain (a study's bootstrap may
	// share it).
	Seed uint64 `json:"seed"`
}

// DefaultAttributorConfig is the spec's attributor: the whole training set, passes of 32 sequences, damping 0.1
// (§5), CG to 1e-6 (§6.3) within 2000 iterations, exact solves for banks of up to 1024 prototypes, seed 1.
func DefaultAttributorConfig() AttributorConfig {
	return AttributorConfig{Batch: 32, DampingScale: 0.1, CGTol: 1e-6, CGMaxIter: 2000, DirectMaxK: 1024, Seed: 1}
}

// Validate reports the first problem of the configuration, naming its key.
func (c AttributorConfig) Validate() error {
	switch {
	case c.TrainSeqs < 0:
		return errors.Errorf("train_seqs=%d, want ≥ 0 (0 means all)", c.TrainSeqs)
	case c.Batch < 0:
		return errors.Errorf("batch=%d, want ≥ 0 (0 means data.batch_size)", c.Batch)
	case !(c.DampingScale > 0) || math.IsInf(c.DampingScale, 0):
		return errors.Errorf("damping_scale=%g, want a finite value > 0", c.DampingScale)
	case !(c.CGTol > 0 && c.CGTol < 1):
		return errors.Errorf("cg_tol=%g, want in (0, 1)", c.CGTol)
	case c.CGMaxIter < 1:
		return errors.Errorf("cg_max_iter=%d, want ≥ 1", c.CGMaxIter)
	case c.DirectMaxK < 0:
		return errors.Errorf("direct_max_k=%d, want ≥ 0", c.DirectMaxK)
	}
	return nil
}

// Files of the attribution cache, under <run folder>/attribution/<hash>/.
const (
	CacheDir         = "attribution"
	CodesFile        = "codes.bin"        // influence.CodeCache: codes, output gradients, postings
	ColumnsFile      = "columns.bin"      // influence.ColumnCache: per-sequence gradient columns with ∂a/∂P
	CacheStatsFile   = "prism_stats.json" // CacheStats: S, c_j, c^rec_j, n_j, C, C_rec and the build times
	attributionCache = 2                  // format version, part of the cache key
)

// CacheStats are the curvature statistics of the fitting pass (spec §6.2) and how long the cache took to build.
type CacheStats struct {
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
	Model *lm.Model
	// Config is the configuration the Attributor was built with.
	Config AttributorConfig
	// Corpus holds the N_seq training sequences ranked, [T+1] tokens each; NumTokens = N_seq·T.
	Corpus    [][]int32
	NumTokens int
	// Cache is the option-B cache (codes and u_t per token); Columns the option-A cache (g_{s,j} with ∂a/∂P).
	Cache   *influence.CodeCache
	Columns *influence.ColumnCache
	Stats   *CacheStats
	// Blocks is the diagonal-C preconditioner (H_jj + λI)⁻¹ (spec §5) with E_jj = 2λ_rec c^rec_j + 2λ_1 + 2λ_2 n_j.
	Blocks *influence.Blocks
	// Curvature is the full H = C ⊗ S + E ⊗ I + λI of spec §5 and §6.3 with E = 2λ_rec C_rec + Δ (extraTerms) and the
	// same λ as Blocks, shared by the full-C cached methods and the reference, with its solver: exact in the
	// eigenbasis of S for banks of up to direct_max_k prototypes, else CG to cg_tol preconditioned by Blocks.
	Curvature *influence.CoUsage
	// Cached reports that the cache was loaded from disk rather than built by this call.
	Cached bool
	// Timings records the seconds of each fitting stage run by this Attributor ("reference_fit", "ekfac_cov", …).
	Timings map[string]float64

	data    *lmdata.Prepared  // the model's corpus: training sequences, validation sequences, tokenizer
	mc      decoder.Config    // the backbone
	pc      prismlayer.Config // the head
	graphs  *attrGraphs
	dir     string
	sampled []float32 // ũ per corpus token, [N_tok, D]; kept from the fitting pass (nil after a load)
	ref     *reference
	ekfac   *blockEKFAC
	bank    *bankEKFAC
}

// NewAttributor builds (or loads from <run folder>/attribution/) the PRISM caches of m over the corpus of c: one
// pass (the head's forward and backward, backbone frozen) that stores every token's code and output gradient with
// the postings, every sequence's gradient columns, and the curvature statistics; then it factorises the
// preconditioners. It fails for the dense model or an invalid configuration.
func NewAttributor(m *lm.Model, c AttributorConfig) (*Attributor, error) {
	T := m.Config.Data.SeqLen
	if err := c.Validate(); err != nil {
		return nil, errors.WithMessage(err, "attribution")
	}
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	g, err := newAttrGraphs(m)
	if err != nil {
		return nil, err
	}
	a := &Attributor{Model: m, Config: c, data: d, mc: m.Config.Model, pc: m.Config.Prism.Config, graphs: g,
		Timings: map[string]float64{}}
	n := d.TrainSeqs.NumSequences()
	if c.TrainSeqs > 0 {
		n = min(n, c.TrainSeqs)
	}
	for i := 0; i < n; i++ {
		a.Corpus = append(a.Corpus, d.TrainSeqs.Sequence(i))
	}
	a.NumTokens = n * T
	if m.Dir != "" {
		key, _ := json.Marshal(struct {
			Version, Seqs, Batch int
			Seed                 uint64
		}{attributionCache, n, a.batch(), c.Seed})
		sum := sha256.Sum256(key)
		a.dir = filepath.Join(m.Dir, CacheDir, hex.EncodeToString(sum[:])[:10])
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
	return a.Model.Config.Data.BatchSize
}

// batches calls fn for consecutive groups of at most batch() corpus sequences from sequence from on, with the
// index of the first.
func (a *Attributor) batches(from int, fn func(first int, rows [][]int32) error) error {
	B := a.batch()
	for lo := from; lo < len(a.Corpus); lo += B {
		if err := fn(lo, a.Corpus[lo:min(lo+B, len(a.Corpus))]); err != nil {
			return err
		}
	}
	return nil
}

// sampledLabelTag names the sampled-label noise of the corpus batch starting at sequence first, so that every pass over
// the corpus samples the same labels.
func sampledLabelTag(first int) string { return "prism/attribution/labels/" + strconv.Itoa(first) }

func (a *Attributor) build() error {
	K, D, k := a.pc.NumPrototypes, a.mc.Width, a.pc.TopK
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
	err = a.batches(0, func(first int, rows [][]int32) error {
		// The cross-entropy gradient per slot (with ∂a/∂P); REC and R2 are left out (weight 0).
		h, err := a.graphs.runHead(rows, a.batch(), nil, false, true, a.Config.Seed, sampledLabelTag(first))
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
	a.Stats = &CacheStats{Tokens: stats.Tokens, Fisher: stats.FisherMean(), Usage: stats.Usage, UsageRec: stats.UsageW,
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
	return store.SaveJSON(filepath.Join(a.dir, CacheStatsFile), a.Stats)
}

// addHeadStats adds a head pass to the statistics: codes, weights w_t, the nearest prototype (slot 0) and ũ.
func addHeadStats(stats *influence.CodeStats, h *headOut) error {
	n := h.rows * h.T
	nearest := make([]int32, n)
	for t := range nearest {
		nearest[t] = h.idx[t*h.k]
	}
	return stats.Add(h.k, h.idx, widen(h.acts), h.w, nearest, widen(h.uSampled))
}

func (a *Attributor) load() error {
	var st CacheStats
	if err := store.LoadJSON(filepath.Join(a.dir, CacheStatsFile), &st); err != nil {
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
	K := a.pc.NumPrototypes
	if c.K != K || c.D != a.mc.Width || c.TopK != a.pc.TopK || c.NumSeqs() != len(a.Corpus) ||
		int64(c.NumTokens()) != st.Tokens || cols.K != K || cols.D != c.D || cols.NumSeqs != len(a.Corpus) ||
		st.CoUse == nil || st.CoUse.K != K || st.CoUseRec == nil || st.CoUseRec.K != K {
		return errors.Errorf("%s does not match the model and corpus", a.dir)
	}
	a.Cache, a.Columns, a.Stats = c, cols, &st
	return nil
}

// extraDiag returns E_jj = 2λ_rec c^rec_j + 2λ_1 + 2λ_2 n_j (spec §5; c^rec = c when rec_norm is false).
func (a *Attributor) extraDiag() []float64 {
	pc := a.pc
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
	b, err := influence.NewBlocks(a.Stats.Fisher, a.mc.Width, a.Stats.Usage, a.extraDiag(), -1, a.Config.DampingScale)
	if err != nil {
		return errors.WithMessage(err, "attribution: the diagonal-C blocks")
	}
	a.Blocks = b
	start := time.Now()
	h := &influence.KronSum{D: a.mc.Width, K: a.pc.NumPrototypes, S: a.Stats.Fisher, C: a.Stats.CoUse,
		E: a.extraTerms(), Damping: b.Damping}
	a.Curvature, err = influence.NewCoUsage(h, b, a.Config.DirectMaxK, a.Config.CGTol, a.Config.CGMaxIter)
	if err != nil {
		return errors.WithMessage(err, "attribution: the co-usage curvature")
	}
	a.Timings["prism_factor"] = time.Since(start).Seconds()
	return nil
}

// extraTerms returns the sparse E = 2λ_rec C_rec + Δ, Δ_jj = 2λ_1 + 2λ_2 n_j, of the full curvature (spec §5 and §6.3;
// C_rec = C when rec_norm is false); its diagonal is extraDiag.
func (a *Attributor) extraTerms() *influence.SparseSym {
	pc := a.pc
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

// Bytes returns the memory the default method (MethodPrism) scores from: the per-token cache and the diagonal-C
// blocks.
func (a *Attributor) Bytes() int64 { return a.cachedBytes(MethodPrism) }
