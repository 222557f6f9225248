package attribution

import (
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/lmdata"
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
	// Corpora are the data sources the study runs on, one after the other, each a complete run of these settings:
	// model_seeds models trained with data.source set to it, its own validation queries and LDS retrainings, its own
	// summary and claim rows. Empty: data.source alone (protocol v1). No source twice.
	Corpora []string `json:"corpora"`
	// BrownTrainDocs, when > 0, is data.read.max_docs of the models trained on the Brown corpus: they train on (and
	// are attributed over) brown_train_docs documents of its training split, taken one genre at a time, so that the
	// recipe's updates cover their training set as they cover the synthetic one; 0 leaves data.read.max_docs as it
	// is (by default 0: the whole split). ≥ 0.
	BrownTrainDocs int `json:"brown_train_docs"`
}

// sources returns the data sources of the study: attribution.corpora, or data.source when it is empty.
func (c Config) sources() []string {
	if len(c.Attribution.Corpora) == 0 {
		return []string{c.Data.Source}
	}
	return c.Attribution.Corpora
}

// Small is the study's protocol v2 (docs/PROTOCOL.md; `protolab run attribution --preset small`): the same protocol run
// on the synthetic and on the Brown corpus in turn (attribution.corpora), each run complete. Per corpus: three PRISM
// models of lm.PrismSmall (seeds 1, 2, 3; same data and recipe) trained on it, the Brown models on the first 24
// documents of its training split (brown_train_docs: about as many sequences as the synthetic training set, so that the
// recipe's 400 updates of 8 sequences cover both alike); each attributed over its whole training set with every method
// of prism.Methods, on 100 validation queries of its corpus (sequences 100–199; the last 24 of 32 tokens attributed)
// that no setting was ever chosen on; sequences 200–299 are held back (query_offset=200) until the settings are frozen.
// Every setting is the spec's (§5 damping 0.1, §8 100 queries, Overlap@{10, 50, 100}, M = 50 LDS subsets of 50%) or
// changes no score (batch, direct_max_k, timed_queries); brown_train_docs is set by the size of the synthetic training
// set, never by a score. Ground truth: the LDS over 50 models per seed retrained from scratch on random halves of the
// training set with the model's own recipe (lm.TrainOn), 150 per corpus; its 95% intervals resample models, queries and
// subsets (1000 resamples). Speed: every query of the cached methods and of the reference is timed; EK-FAC on the
// blocks and on P is timed end to end on 3 queries per model at the memory of the default cached method.
//
// Budget: per corpus and model, the caches, the timed queries, the reference, EK-FAC on the blocks and on P, then the
// LDS retrainings, most of the compute. Protocol v1 is this preset at commit 8706f7f: the synthetic corpus only, with
// M = 16 subsets (what v1's budget left); v2 spends the new engine's budget on the spec's M = 50 and on the Brown run.
// `protolab cost` estimates its compute from the configuration; a stored run's provenance records the seconds each
// phase took.
func Small() Config {
	c := Quick()
	a := &c.Attribution
	a.ModelSeeds, a.QueryOffset, a.LDSSubsets = 3, 100, 50
	a.Corpora, a.BrownTrainDocs = []string{lmdata.SourceSynthetic, lmdata.SourceBrown}, 24
	return c
}

// Quick is what `make run` and the notebooks compute when no protocol run is stored (a few minutes on a 2-core
// CPU): one lm.PrismSmall model on data.source (the synthetic corpus; attribution.corpora empty), its whole training
// set as corpus, passes over 32 sequences at a time, 100 validation queries (sequences 0–99) whose last 24 of 32
// tokens are attributed, Overlap@{10, 50, 100}, EK-FAC on the blocks and on P timed on three queries, no LDS.
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
	if err := c.Attribution.Validate(c.Data.SeqLen); err != nil {
		return errors.WithMessage(err, "attribution")
	}
	for i, src := range c.Attribution.Corpora {
		switch {
		case src == "":
			return errors.Errorf("attribution.corpora[%d] is empty; want a data source (\"synthetic\", \"brown\", "+
				"…)", i)
		case slices.Contains(c.Attribution.Corpora[:i], src):
			return errors.Errorf("attribution.corpora lists %q twice; each corpus is one complete run", src)
		}
		if err := modelConfig(c, src, 0).Validate(); err != nil {
			return errors.WithMessagef(err, "attribution.corpora[%d]=%q", i, src)
		}
	}
	return nil
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
	case c.BrownTrainDocs < 0:
		return errors.Errorf("brown_train_docs=%d, want ≥ 0 (0: the whole training split)", c.BrownTrainDocs)
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
