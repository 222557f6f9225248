package attribution

import (
	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/prism"
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
	// ModelSeeds is the number of PRISM models attributed: the model of the config and its copies trained with the
	// seeds seed+1, …, seed+model_seeds−1 (same data, same recipe); each is attributed and scored on its own and the
	// summary is over models. ≥ 1.
	ModelSeeds int `json:"model_seeds"`
	// AttributorConfig is the attributor's corpus, batch, damping, solvers and seed (models/prism; its keys sit at
	// this level: train_seqs, batch, damping_scale, cg_tol, cg_max_iter, direct_max_k, seed). The seed also seeds the
	// bootstrap.
	prism.AttributorConfig
	// Queries is the number of validation sequences used as queries (spec §8: 100), starting at QueryOffset;
	// clipped to what exists.
	Queries int `json:"queries"`
	// QueryOffset is the index of the first validation sequence used as a query; ≥ 0. The validation sequences
	// after the queries are left for a held-back evaluation (query_offset = query_offset + queries).
	QueryOffset int `json:"query_offset"`
	// PromptTokens: a query's first PromptTokens predicted positions are its prompt, the rest its completion, whose
	// cross-entropy is attributed; in [0, data.seq_len).
	PromptTokens int `json:"prompt_tokens"`
	// OverlapK lists the k of Overlap@k, the training sequences compared at the top of two rankings (spec §8: 10,
	// 50, 100); each > 0, clipped to N_seq. (The head's prototypes per token are prism.top_k.)
	OverlapK []int `json:"overlap_k"`
	// EKFAC selects the EK-FAC baselines: "blocks", "bank", "both" (spec §7.1 (i), (ii)) or "none".
	EKFAC string `json:"ekfac"`
	// TimedQueries is the number of queries on which the EK-FAC baselines are timed end to end at the memory of the
	// default cached method (their latency is the median over these), and on which the CG iterations of the full
	// curvature are counted; ≥ 1.
	TimedQueries int `json:"timed_queries"`
	// LDSSubsets is M, the models retrained per attributed model for the linear datamodeling score (spec §8); 0
	// skips it, else ≥ 3.
	LDSSubsets int `json:"lds_subsets"`
	// LDSFraction is the fraction of the corpus each LDS subset keeps; in (0, 1). Spec: 0.5.
	LDSFraction float64 `json:"lds_fraction"`
	// Bootstrap is the number of resamples of the 95% confidence intervals (over queries, and for the LDS also over
	// retrained subsets); ≥ 0.
	Bootstrap int `json:"bootstrap"`
}

// Small is the study's protocol (`protolab run attribution --preset small`): three PRISM models of lm.PrismSmall (seeds
// 1, 2, 3; same data and recipe), each attributed over its whole training set with every method of prism.Methods, on
// 100 validation queries (sequences 100–199; the last 24 of 32 tokens attributed) that no setting was ever chosen on;
// sequences 200–299 are held back (query_offset=200) until the settings are frozen. Every setting is the spec's (§5
// damping 0.1, §8 100 queries, Overlap@{10, 50, 100} and 50% LDS subsets) or changes no score (batch, direct_max_k,
// timed_queries). Ground truth: the LDS over 16 models per seed retrained from scratch on random halves of the training
// set with the model's own recipe (lm.TrainOn: 400 updates of 8 sequences), 48 in all; its 95% intervals resample
// models, queries and subsets (1000 resamples). Speed: every query of the cached methods and of the reference is timed;
// EK-FAC on the blocks and on P is timed end to end on 3 queries per model at the memory of the default cached method.
//
// Budget: per model, the caches, the 500 timed queries of the cached methods, the reference, EK-FAC on the blocks and
// on P, then the LDS retrainings. It was sized to the Small preset's budget for three models (docs/DESIGN.md,
// "Presets"); M = 16 subsets is what that budget left (the spec's M = 50 retrains about three times as often). The
// bootstrap resamples the subsets as well as the queries, so the interval states what 16 subsets can resolve. `protolab
// cost` estimates its compute from the configuration; a stored run's provenance records the seconds each phase took.
func Small() Config {
	c := Quick()
	a := &c.Attribution
	a.ModelSeeds, a.QueryOffset, a.LDSSubsets = 3, 100, 16
	return c
}

// Quick is what `make run` and the notebooks compute when no protocol run is stored (a few minutes on a 2-core
// CPU): one lm.PrismSmall model, its whole training set as corpus, passes over 32 sequences at a time, 100
// validation queries (sequences 0–99) whose last 24 of 32 tokens are attributed, Overlap@{10, 50, 100}, EK-FAC on
// the blocks and on P timed on three queries, no LDS.
func Quick() Config {
	return Config{Config: lm.PrismSmall(), Attribution: Settings{ModelSeeds: 1,
		AttributorConfig: prism.DefaultAttributorConfig(), Queries: 100, PromptTokens: 8, OverlapK: []int{10, 50, 100},
		EKFAC: EKFACBoth, TimedQueries: 3, LDSFraction: 0.5, Bootstrap: 1000}}
}

// Tiny is seconds on a CPU (lm.PrismTiny): two models, 8 queries, Overlap@{5, 10}, two timed EK-FAC queries and an
// LDS over 4 retrained Tiny models per model.
func Tiny() Config {
	c := Quick()
	c.Config = lm.PrismTiny()
	a := &c.Attribution
	a.ModelSeeds, a.Queries, a.PromptTokens, a.OverlapK, a.TimedQueries, a.LDSSubsets, a.Bootstrap = 2, 8, 4,
		[]int{5, 10}, 2, 4, 200
	return c
}

// Paper is spec §8 at the Paper model (lm.PrismPaper): 100 queries, Overlap@{10, 50, 100}, a corpus of 20,000
// training sequences, three models, no LDS (retraining the Paper model is out of reach). Meant for a GPU with XLA.
func Paper() Config {
	c := Quick()
	c.Config = lm.PrismPaper()
	c.Attribution.ModelSeeds = 3
	c.Attribution.TrainSeqs, c.Attribution.PromptTokens, c.Attribution.Batch = 20_000, 64, 8
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

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
	if c.ModelSeeds < 1 {
		return errors.Errorf("model_seeds=%d, want ≥ 1", c.ModelSeeds)
	}
	if err := c.AttributorConfig.Validate(); err != nil {
		return err
	}
	switch {
	case c.Queries < 1:
		return errors.Errorf("queries=%d, want ≥ 1", c.Queries)
	case c.QueryOffset < 0:
		return errors.Errorf("query_offset=%d, want ≥ 0", c.QueryOffset)
	case c.PromptTokens < 0 || c.PromptTokens >= seqLen:
		return errors.Errorf("prompt_tokens=%d, want in [0, data.seq_len=%d)", c.PromptTokens, seqLen)
	case len(c.OverlapK) == 0:
		return errors.New("overlap_k is empty")
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
	for i, k := range c.OverlapK {
		if k < 1 {
			return errors.Errorf("overlap_k[%d]=%d, want ≥ 1", i, k)
		}
	}
	return nil
}

func (c Settings) wantBlocks() bool { return c.EKFAC == EKFACBlocks || c.EKFAC == EKFACBoth }
func (c Settings) wantBank() bool   { return c.EKFAC == EKFACBank || c.EKFAC == EKFACBoth }
