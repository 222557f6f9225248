package prism

import (
	"math"

	"github.com/pkg/errors"
)

// The attribution study (spec §6–§8; the generic methods and their equations are in workbench/influence):
//
//   - NewAttributor runs one pass over the corpus (the first train_seqs packed training sequences): the head's
//     forward pass and its backward pass alone (backbone frozen, no backward through the blocks). It caches each
//     token's code (K_t, a_t) and prototype-pathway output gradient u_t = Wᵀ(softmax(l_t) − e_{y_t}) with postings
//     per prototype (influence.CodeCache, option B), each sequence's gradient columns g_{s,j} including the routing
//     term ∂a/∂P (influence.ColumnCache, option A), and the statistics S, c_j, c^rec_j, n_j and the sparse co-usage
//     C, C_rec of the curvature model; the cache is written once under the run folder and loaded afterwards.
//   - A query (a validation sequence, or "prompt|completion" text) attributes its completion's cross-entropy.
//   - The reference solves the same full H = C ⊗ S + E ⊗ I + λI (exactly in the eigenbasis of S for banks of up to
//     direct_max_k prototypes, else by CG) with per-sequence gradients that also include REC and R2 (§6.3), in
//     float64; EK-FAC runs over the backbone's linear layers (hooked through layers/hook) and over P.
//   - AttributeModel times every method per query (wall-clock and CPU), accounts memory, and compares rankings
//     (Overlap@k, Spearman, LDS). RunAttribution adds caching of the result; RunAttributionSweep the
//     conditioning sweep over λ_1 = λ_2.
//
// The cached methods differ in two choices, each measured by an ablation (spec §6.2 leaves both open: option A or B,
// diagonal-C blocks or a solve "per connected component of the co-usage graph"):
//
//	method         gradient columns                         curvature
//	prism          g_{s,j} with ∂a/∂P (option A)             full co-usage H (direct or CG)
//	prism_diag_c   g_{s,j} with ∂a/∂P (option A)             diagonal-C blocks (H_jj + λI)⁻¹
//	prism_full_c   Σ_t a_{t,j} u_t, codes fixed (option B)   full co-usage H
//	prism_codes    Σ_t a_{t,j} u_t, codes fixed (option B)   diagonal-C blocks (spec §6.2 as written)
//	prism_dot      Σ_t a_{t,j} u_t, codes fixed (option B)   none (§7.2)
//
// At the Small preset (k = 8 of K = 256 prototypes per token, off-diagonal co-usage mass 0.87) dropping the
// off-diagonal co-usage and the routing term each cost a quarter of the top-10 overlap with the reference, so the
// default keeps both; its exact solve costs D·K² floats, and banks above direct_max_k use CG instead.

// Attribution methods (spec §6–§7). Scores follow kronfluence's sign (positive = helpful: up-weighting the training
// sequence lowers the query loss) and are divided by the number of corpus tokens N_tok (spec §6.1).
const (
	// MethodPrism is the cached method (spec §6.2): per-sequence gradient columns with the routing term ∂a/∂P (the
	// query's too), preconditioned by the full co-usage curvature H.
	MethodPrism = "prism"
	// MethodPrismDiagC is MethodPrism with the diagonal-C blocks (H_jj + λI)⁻¹ instead of the full H.
	MethodPrismDiagC = "prism_diag_c"
	// MethodPrismFullC is MethodPrism with the option-B gradients (codes held fixed: g_{s,j} = Σ_t a_{t,j} u_t, no
	// ∂a/∂P) on both sides.
	MethodPrismFullC = "prism_full_c"
	// MethodPrismCodes is spec §6.2 as written: option-B gradients (codes fixed) and the diagonal-C blocks.
	MethodPrismCodes = "prism_codes"
	// MethodPrismDot is the prototype-space gradient dot product Σ_j ⟨g_{q,j}, g_{s,j}⟩ of the option-B gradients
	// (§7.2).
	MethodPrismDot = "prism_dot"
	// MethodReference is the full prototype-space reference of §6.3: gradients with ∂a/∂P, REC and R2, and the
	// full sparse co-usage C, in float64.
	MethodReference = "reference"
	// MethodReferenceCE is an ablation: the reference with the training sequences' REC and R2 gradients left out
	// (cross-entropy with ∂a/∂P only).
	MethodReferenceCE = "reference_ce"
	// MethodEKFAC is EK-FAC (§7.1, kronfluence) over the backbone's linear layers: FFN gate, up, down and the
	// attention output projection of every block.
	MethodEKFAC = "ekfac"
	// MethodEKFACBank is EK-FAC with P as the only module (the linear map a → ẑ with output gradient u).
	MethodEKFACBank = "ekfac_bank"
	// MethodGradDot is the gradient dot product over the same linear layers as MethodEKFAC (§7.2).
	MethodGradDot = "graddot"
)

// Values of AttributionConfig.EKFAC.
const (
	EKFACBlocks = "blocks" // the backbone's linear layers (MethodEKFAC, MethodGradDot)
	EKFACBank   = "bank"   // P only (MethodEKFACBank)
	EKFACBoth   = "both"
	EKFACNone   = "none" // no EK-FAC baseline (the conditioning sweep)
)

// AttributionConfig configures training-data attribution (spec §6–§8; attribution*.go). Start from
// AttributionTiny, AttributionSmall or AttributionPaper.
type AttributionConfig struct {
	// TrainSeqs is N_seq, the attribution corpus: the first TrainSeqs packed training sequences; 0 means all.
	TrainSeqs int `json:"train_seqs"`
	// Queries is the number of validation sequences used as queries (spec §8: 100); clipped to what exists.
	Queries int `json:"queries"`
	// PromptTokens: a query's first PromptTokens predicted positions are its prompt, the rest its completion, whose
	// cross-entropy is attributed; in [0, data.seq_len).
	PromptTokens int `json:"prompt_tokens"`
	// TopK lists the k of Overlap@k (spec §8: 10, 50, 100); each > 0, clipped to N_seq.
	TopK []int `json:"top_k"`
	// Batch is the number of sequences per forward pass; 0 means data.batch_size.
	Batch int `json:"batch"`
	// DampingScale sets λ = DampingScale × the mean eigenvalue, for the PRISM blocks (spec §5) and EK-FAC (§7.1);
	// > 0. Default 0.1.
	DampingScale float64 `json:"damping_scale"`
	// CGTol is the reference solve's relative residual (spec §6.3: 1e-6); in (0, 1). CGMaxIter bounds its
	// iterations; > 0.
	CGTol     float64 `json:"cg_tol"`
	CGMaxIter int     `json:"cg_max_iter"`
	// DirectMaxK: banks of at most DirectMaxK prototypes are solved exactly instead of by CG, with one Cholesky
	// factorisation per eigenvector of S (spec §5: D independent K×K systems; D·K² floats of memory); ≥ 0.
	DirectMaxK int `json:"direct_max_k"`
	// EKFAC selects the EK-FAC baselines: "blocks", "bank", "both" (spec §7.1 (i), (ii)) or "none".
	EKFAC string `json:"ekfac"`
	// TimedQueries is the number of queries whose EK-FAC latency is measured by a full recomputation of the
	// training gradients; ≥ 1.
	TimedQueries int `json:"timed_queries"`
	// LDSSubsets is M, the retrained models of the linear datamodeling score (spec §8); 0 skips it, else ≥ 3.
	LDSSubsets int `json:"lds_subsets"`
	// LDSFraction is the fraction of the corpus each LDS subset keeps; in (0, 1). Spec: 0.5.
	LDSFraction float64 `json:"lds_fraction"`
	// Bootstrap is the number of resamples of the 95% confidence intervals over queries; ≥ 0.
	Bootstrap int `json:"bootstrap"`
	// Seed seeds the sampled labels of the Fisher, the LDS subsets and the bootstrap.
	Seed uint64 `json:"seed"`
}

// AttributionSmall is the attribution study of the Small model: the whole training set as corpus, passes over 32
// sequences at a time, 100 validation queries whose last 24 of 32 tokens are attributed, Overlap@{10, 50, 100},
// EK-FAC on the blocks and on P, three timed EK-FAC queries, no LDS (retraining the Small model M times takes too
// long on a CPU).
func AttributionSmall() AttributionConfig {
	return AttributionConfig{Queries: 100, PromptTokens: 8, TopK: []int{10, 50, 100}, Batch: 32, DampingScale: 0.1,
		CGTol: 1e-6, CGMaxIter: 2000, DirectMaxK: 1024, EKFAC: EKFACBoth, TimedQueries: 3, LDSFraction: 0.5,
		Bootstrap: 1000, Seed: 1}
}

// AttributionTiny is seconds on a CPU: 8 queries, Overlap@{5, 10}, two timed EK-FAC queries and an LDS over 8
// retrained Tiny models.
func AttributionTiny() AttributionConfig {
	c := AttributionSmall()
	c.Queries = 8
	c.PromptTokens = 4
	c.TopK = []int{5, 10}
	c.TimedQueries = 2
	c.LDSSubsets = 8
	c.Bootstrap = 200
	return c
}

// AttributionPaper is spec §8 at the Paper preset: 100 queries, Overlap@{10, 50, 100}, a corpus of 20,000
// training sequences, no LDS.
func AttributionPaper() AttributionConfig {
	c := AttributionSmall()
	c.TrainSeqs = 20_000
	c.PromptTokens = 64
	c.Batch = 8
	return c
}

// Validate reports the first problem of the configuration for sequences of seqLen predicted tokens.
func (c AttributionConfig) Validate(seqLen int) error {
	switch {
	case c.TrainSeqs < 0:
		return errors.Errorf("train_seqs=%d, want ≥ 0 (0 means all)", c.TrainSeqs)
	case c.Queries < 1:
		return errors.Errorf("queries=%d, want ≥ 1", c.Queries)
	case c.PromptTokens < 0 || c.PromptTokens >= seqLen:
		return errors.Errorf("prompt_tokens=%d, want in [0, data.seq_len=%d)", c.PromptTokens, seqLen)
	case len(c.TopK) == 0:
		return errors.New("top_k is empty")
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
	case c.EKFAC != EKFACBlocks && c.EKFAC != EKFACBank && c.EKFAC != EKFACBoth && c.EKFAC != EKFACNone:
		return errors.Errorf("ekfac=%q, want %q, %q, %q or %q", c.EKFAC, EKFACBlocks, EKFACBank, EKFACBoth, EKFACNone)
	case c.TimedQueries < 1:
		return errors.Errorf("timed_queries=%d, want ≥ 1", c.TimedQueries)
	case c.LDSSubsets != 0 && c.LDSSubsets < 3:
		return errors.Errorf("lds_subsets=%d, want 0 (skip) or ≥ 3", c.LDSSubsets)
	case !(c.LDSFraction > 0 && c.LDSFraction < 1):
		return errors.Errorf("lds_fraction=%g, want in (0, 1)", c.LDSFraction)
	case c.Bootstrap < 0:
		return errors.Errorf("bootstrap=%d, want ≥ 0", c.Bootstrap)
	}
	for i, k := range c.TopK {
		if k < 1 {
			return errors.Errorf("top_k[%d]=%d, want ≥ 1", i, k)
		}
	}
	return nil
}

func (c AttributionConfig) wantBlocks() bool { return c.EKFAC == EKFACBlocks || c.EKFAC == EKFACBoth }
func (c AttributionConfig) wantBank() bool   { return c.EKFAC == EKFACBank || c.EKFAC == EKFACBoth }
