package attribution

import (
	"math"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the study. Start from a preset (Tiny, Small, Paper); change fields or apply run.Override.
type Config struct {
	// Config is the PRISM model whose training data is attributed (seed, data, model, head "prism", prism, train,
	// eval_batches; JSON keys at the top level).
	lm.Config
	// Attribution configures the corpus, the queries, the methods and their comparison.
	Attribution Settings `json:"attribution"`
}

// Values of Settings.EKFAC.
const (
	EKFACBlocks = "blocks" // the backbone's linear layers (MethodEKFAC, MethodGradDot)
	EKFACBank   = "bank"   // P only (MethodEKFACBank)
	EKFACBoth   = "both"
	EKFACNone   = "none" // no EK-FAC baseline (the conditioning sweep)
)

// Settings configures training-data attribution (docs/spec/prism.md §6–§8).
type Settings struct {
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

// Small is a few minutes on a 2-core CPU (lm.PrismSmall): the whole training set as corpus, passes over 32 sequences
// at a time, 100 validation queries whose last 24 of 32 tokens are attributed, Overlap@{10, 50, 100}, EK-FAC on the
// blocks and on P, three timed EK-FAC queries, no LDS (retraining the Small model M times takes too long on a CPU).
func Small() Config {
	return Config{Config: lm.PrismSmall(), Attribution: Settings{Queries: 100, PromptTokens: 8,
		TopK: []int{10, 50, 100}, Batch: 32, DampingScale: 0.1, CGTol: 1e-6, CGMaxIter: 2000, DirectMaxK: 1024, EKFAC: EKFACBoth, TimedQueries: 3,
		LDSFraction: 0.5, Bootstrap: 1000, Seed: 1}}
}

// Tiny is seconds on a CPU (lm.PrismTiny): 8 queries, Overlap@{5, 10}, two timed EK-FAC queries and an LDS over 8
// retrained Tiny models.
func Tiny() Config {
	c := Small()
	c.Config = lm.PrismTiny()
	a := &c.Attribution
	a.Queries, a.PromptTokens, a.TopK, a.TimedQueries, a.LDSSubsets, a.Bootstrap = 8, 4, []int{5, 10}, 2, 8, 200
	return c
}

// Paper is spec §8 at the Paper model (lm.PrismPaper): 100 queries, Overlap@{10, 50, 100}, a corpus of 20,000
// training sequences, no LDS. Meant for a GPU with XLA.
func Paper() Config {
	c := Small()
	c.Config = lm.PrismPaper()
	c.Attribution.TrainSeqs, c.Attribution.PromptTokens, c.Attribution.Batch = 20_000, 64, 8
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// FromEnv returns the preset named by $PROTOLAB_PRESET (default "small"), as notebooks and `make run` select it.
func FromEnv() (Config, error) { return Preset(run.PresetName()) }

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if c.Head != lm.HeadPrism {
		return errors.Errorf("head=%q, want %q (attribution runs in the PRISM head's prototype space)", c.Head,
			lm.HeadPrism)
	}
	return errors.WithMessage(c.Attribution.Validate(c.Data.SeqLen), "attribution")
}

// Validate reports the first problem of the settings for sequences of seqLen predicted tokens.
func (c Settings) Validate(seqLen int) error {
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

func (c Settings) wantBlocks() bool { return c.EKFAC == EKFACBlocks || c.EKFAC == EKFACBoth }
func (c Settings) wantBank() bool   { return c.EKFAC == EKFACBank || c.EKFAC == EKFACBoth }
