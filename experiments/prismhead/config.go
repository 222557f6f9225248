package prismhead

import (
	"math"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// Config configures the study. Start from a preset (Tiny, Quick, Small, Paper); change fields or apply run.Override.
type Config struct {
	// Config is the PRISM model analysed (seed, data, model, head "prism", prism, train, eval_batches; JSON keys at
	// the top level); its dense baseline is Config.Dense(): the same backbone, data and token budget.
	lm.Config
	// Corpora are the data sources the protocol runs on, each alone: its own tuning, replicates and evaluation, with
	// every other setting shared (protocol v2, docs/PROTOCOL.md: "synthetic" and "brown"). Empty means data.source
	// alone; when set, corpora[0] must equal data.source (the first corpus is the configured model's) and the
	// entries must differ.
	Corpora []string `json:"corpora"`
	// Seeds are the training seeds of the replicates: each trains the dense baseline and one PRISM model per sweep
	// weight with that seed (weights, data split, batch order, bank seeding). Empty means the one seed `seed`; when
	// set, seeds[0] must equal `seed` (the first replicate is the configured model). Claims need ≥ 3.
	Seeds []uint64 `json:"seeds"`
	// Tune chooses each model's learning rate on a validation split before the replicates are trained.
	Tune TuneConfig `json:"tune"`
	// Eval is the data that quality, coverage and curvature are measured on.
	Eval EvalConfig `json:"eval"`
	// Curvature configures the Hessian study (models/prism, ComputeCurvature) and the clustering-weight sweep (run.go).
	Curvature CurvatureConfig `json:"curvature"`
}

// TuneConfig is the learning-rate choice of doc.go ("Protocol"): the dense model and the PRISM model (at the
// configured weights) are each trained at every rate of LRs with seed Seed, and each keeps the rate with the lowest
// loss on its own validation split (eval_batches batches). Every model of the replicates and of the sweep then trains
// at its kind's rate, so both kinds get the same grid, seed and criterion.
type TuneConfig struct {
	// LRs is the grid; each > 0. Empty: no tuning, both kinds train at train.lr.
	LRs []float64 `json:"lrs"`
	// Seed is the tuning seed; it must not be one of seeds, so that no reported model is one a choice was made on.
	Seed uint64 `json:"seed"`
}

// EvalConfig is the evaluation data of each corpus (lm.Model.FreshCorpus), which no training run and no choice of
// settings has seen: fresh documents of the synthetic concept corpus, or the Brown corpus's test split (an odd seed)
// and held-out split (an even seed); packed with each replicate's tokenizer into batches of data.batch_size
// sequences of data.seq_len+1 tokens (a last partial batch is dropped).
type EvalConfig struct {
	// Docs is the number of fresh synthetic documents; 0 means each model's own validation split (eval_batches
	// batches) on every corpus, for data sources that have no evaluation documents. With docs > 0 every corpus must
	// be "synthetic" or "brown".
	Docs int `json:"docs"`
	// BrownDocs is the number of documents read from each Brown evaluation split (its first, in corpus order), for
	// the corpus "brown" when docs > 0: 1 to the smaller split's size (lm.Model.FreshCorpus errors beyond it, naming
	// the size). A Brown sample is about 2,000 words, so a few dozen give more tokens than hundreds of synthetic
	// documents. Nothing is capped: the protocol reads exactly this many.
	BrownDocs int `json:"brown_docs,omitempty"`
	// Seed seeds the evaluation documents; ≠ data.synthetic.seed, and odd when a corpus is "brown" (its test split).
	Seed uint64 `json:"seed"`
	// HeldSeed seeds a second evaluation set kept back until the settings are frozen; ≠ seed and
	// data.synthetic.seed, and even when a corpus is "brown" (its held-out split). It is used only with use_held.
	HeldSeed uint64 `json:"held_seed"`
	// UseHeld evaluates on held_seed's documents instead of seed's.
	UseHeld bool `json:"use_held"`
}

// DocSeed returns the seed of the documents evaluated on: HeldSeed with UseHeld, else Seed (0 with Docs = 0: the
// validation split).
func (e EvalConfig) DocSeed() uint64 {
	switch {
	case e.Docs == 0:
		return 0
	case e.UseHeld:
		return e.HeldSeed
	}
	return e.Seed
}

// DocsFor returns the number of evaluation documents of a corpus: brown_docs for "brown", docs otherwise (0 with
// docs = 0: the validation split).
func (e EvalConfig) DocsFor(source string) int {
	if e.Docs > 0 && isBrown(source) {
		return e.BrownDocs
	}
	return e.Docs
}

// CurvatureConfig configures the Hessian study of docs/spec/prism.md §5 (models/prism's ComputeCurvature) and the
// sweep of §3, §8.
type CurvatureConfig struct {
	// Batches is the number of evaluation batches whose tokens the objective sums over; > 0.
	Batches int `json:"batches"`
	// Prototypes is M: the exact Hessian is the principal submatrix of the M most used prototypes (M·D columns,
	// each one double-backprop Hessian-vector product); in [1, K].
	Prototypes int `json:"prototypes"`
	// Sweep lists the clustering weights λ_1 = λ_2 of the conditioning sweep; one PRISM run per weight and seed;
	// each ≥ 0, distinct.
	Sweep []float64 `json:"sweep"`
}

// Tiny is seconds on one CPU core (lm.PrismTiny): the unit tests and the notebook smoke run use it. Two seeds (too
// few for a claim: the scorecard marks Tiny's rows untestable), a two-rate tuning grid, 40 fresh evaluation
// documents, the curvature study on one batch and M = 4 prototypes, and the sweep λ_1 = λ_2 ∈ {0.1, 1} (0.1 is the
// configured weight, so each seed trains two PRISM models).
func Tiny() Config {
	c := lm.PrismTiny()
	return Config{Config: c, Seeds: []uint64{c.Seed, c.Seed + 1},
		Tune:      TuneConfig{LRs: []float64{1e-2, 3e-2}, Seed: 9},
		Eval:      EvalConfig{Docs: 40, Seed: 3001, HeldSeed: 3002},
		Curvature: CurvatureConfig{Batches: 1, Prototypes: 4, Sweep: []float64{0.1, 1}}}
}

// Quick is what `make run` and notebook 20 compute when no Small protocol result is stored: the former Small preset
// (lm.PrismSmall, one seed, train.lr untuned, the Hessian on M = 12 prototypes over two batches, the sweep
// λ_1 = λ_2 ∈ {0.01, 0.1, 1} of spec §3), measured on the same fresh evaluation documents as Small. One seed: its
// scorecard rows are untestable.
func Quick() Config {
	return Config{Config: lm.PrismSmall(), Eval: EvalConfig{Docs: 400, Seed: 3001, HeldSeed: 3002},
		Curvature: CurvatureConfig{Batches: 2, Prototypes: 12, Sweep: []float64{0.01, 0.1, 1}}}
}

// Small is the study's protocol v2 (doc.go, "Protocol"; docs/PROTOCOL.md, "prismhead"), `protolab run prismhead
// --preset small`: lm.PrismSmallV2's models (D = 64, L = 2, T = 64, B = 16, K = 512, k = 8, 500 updates of which
// 100 are cross-entropy only; the dense baseline and PRISM at λ_1 = λ_2 ∈ {0.01, 0.1, 1}, equal steps × batch), on
// the synthetic corpus and on the Brown corpus, each alone. On each corpus each kind's learning rate is chosen from
// {1e-3, 3e-3, 1e-2} on tuning seed 1's validation split, the replicates train with seeds 2, 3, 4 (none used for a
// choice), and quality, coverage and curvature are measured on that corpus's test documents: 400 fresh synthetic
// documents of seed 3001, or the Brown test split's 28 documents (3001 is odd); seed 3002 (on Brown the held-out
// split's first 28 documents) is kept back. The Hessian of each PRISM model is taken on M = 12 prototypes over one
// evaluation batch. Protocol v1 (lm.PrismSmall's models, the synthetic corpus only) is Small at commit 8706f7f.
//
// Budget: per corpus, tuning (three dense and three PRISM runs), replicates (three dense runs, nine PRISM runs and
// the evaluation of each PRISM/dense pair) and the curvature study of nine PRISM models (the exact Hessian on
// M·D = 768 columns dominates it). Width, depth, context and steps were scaled from the section's provisional
// shape, with protolab cost and a short timing run, so that both corpora fit docs/DESIGN.md's Small budget (about
// an hour per study on 2 cores). Three seeds is the fewest a claim allows. `protolab cost` estimates its compute
// from the configuration; a stored run's provenance records the seconds each phase took.
func Small() Config {
	c := Quick()
	c.Config = lm.PrismSmallV2()
	c.Seed, c.Seeds = 2, []uint64{2, 3, 4}
	c.Corpora = []string{lmdata.SourceSynthetic, lmdata.SourceBrown}
	c.Tune = TuneConfig{LRs: []float64{1e-3, 3e-3, 1e-2}, Seed: 1}
	c.Eval.BrownDocs = 28
	c.Curvature.Batches = 1
	return c
}

// Paper is spec §12's small-scale plan (lm.PrismPaper) under Small's protocol on data.source alone: three seeds, a
// learning-rate grid around the preset's 6e-4, 2,000 fresh evaluation documents (with data.source other than the
// synthetic or Brown corpus, set eval.docs=0), the Hessian on M = 16 prototypes over four batches. Meant for a GPU
// with XLA.
func Paper() Config {
	c := Small()
	c.Config = lm.PrismPaper()
	c.Seed = 2
	c.Corpora = nil
	c.Tune.LRs, c.Eval.Docs = []float64{3e-4, 6e-4, 1.2e-3}, 2000
	c.Curvature.Batches, c.Curvature.Prototypes = 4, 16
	return c
}

// Preset returns the named preset: "tiny", "small" (also "") or "paper".
func Preset(name string) (Config, error) { return run.SelectPreset(name, Tiny, Small, Paper) }

// ReplicateSeeds returns the training seeds of the replicates: Seeds, or {seed} when Seeds is empty.
func (c Config) ReplicateSeeds() []uint64 {
	if len(c.Seeds) == 0 {
		return []uint64{c.Seed}
	}
	return slices.Clone(c.Seeds)
}

// Sources returns the corpora the protocol runs on: Corpora, or {data.source} when Corpora is empty.
func (c Config) Sources() []string {
	if len(c.Corpora) == 0 {
		return []string{c.Data.Source}
	}
	return slices.Clone(c.Corpora)
}

// OnCorpus returns the configured model with data.source set to source: the model config of the protocol on that
// corpus.
func (c Config) OnCorpus(source string) lm.Config {
	m := c.Config
	m.Data.Source = source
	return m
}

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if err := c.validateCorpora(); err != nil {
		return err
	}
	if c.Head != lm.HeadPrism {
		return errors.Errorf("head=%q, want %q (the study compares a PRISM model with its dense baseline)", c.Head,
			lm.HeadPrism)
	}
	if len(c.Seeds) > 0 && c.Seeds[0] != c.Seed {
		return errors.Errorf("seeds[0]=%d differs from seed=%d: the first replicate is the configured model; set "+
			"seed=%d or put %d first", c.Seeds[0], c.Seed, c.Seeds[0], c.Seed)
	}
	for i, s := range c.Seeds {
		if slices.Index(c.Seeds, s) != i {
			return errors.Errorf("seeds[%d]=%d repeats a seed", i, s)
		}
	}
	if err := c.Tune.validate(c.ReplicateSeeds()); err != nil {
		return errors.WithMessage(err, "tune")
	}
	if err := c.Eval.validate(c.Data, c.Sources()); err != nil {
		return errors.WithMessage(err, "eval")
	}
	return errors.WithMessage(c.Curvature.validate(c.Prism.NumPrototypes), "curvature")
}

// validateCorpora checks corpora: the first is data.source, none repeats, and the model validates on each.
func (c Config) validateCorpora() error {
	if len(c.Corpora) == 0 {
		return nil
	}
	if c.Corpora[0] != c.Data.Source {
		return errors.Errorf("corpora[0]=%q differs from data.source=%q: the first corpus is the configured model's; "+
			"set data.source=%q or put %q first", c.Corpora[0], c.Data.Source, c.Corpora[0], c.Data.Source)
	}
	for i, src := range c.Corpora {
		if slices.IndexFunc(c.Corpora, func(s string) bool { return strings.EqualFold(s, src) }) != i {
			return errors.Errorf("corpora[%d]=%q repeats a corpus", i, src)
		}
		if err := c.OnCorpus(src).Validate(); err != nil {
			return errors.WithMessagef(err, "corpora[%d]=%q", i, src)
		}
	}
	return nil
}

func (t TuneConfig) validate(seeds []uint64) error {
	for i, lr := range t.LRs {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return errors.Errorf("lrs[%d]=%g, want a finite rate > 0", i, lr)
		}
	}
	if len(t.LRs) > 0 && slices.Contains(seeds, t.Seed) {
		return errors.Errorf("seed=%d is also a replicate seed (seeds=%v): tune on a seed that no reported model "+
			"uses", t.Seed, seeds)
	}
	return nil
}

func (e EvalConfig) validate(d lmdata.Config, sources []string) error {
	switch {
	case e.Docs < 0:
		return errors.Errorf("docs=%d, want ≥ 0 (0: the validation split)", e.Docs)
	case e.Docs == 0:
		if e.UseHeld {
			return errors.New("use_held=true needs docs > 0 (the held-back set is fresh documents)")
		}
		return nil
	case e.Seed == e.HeldSeed:
		return errors.Errorf("held_seed=%d equals seed: the held-back set must be other documents", e.HeldSeed)
	}
	for _, src := range sources {
		switch {
		case strings.EqualFold(src, lmdata.SourceSynthetic):
			if e.Seed == d.Synthetic.Seed || e.HeldSeed == d.Synthetic.Seed {
				return errors.Errorf("seed=%d, held_seed=%d: neither may equal data.synthetic.seed=%d (the documents "+
					"would repeat training documents)", e.Seed, e.HeldSeed, d.Synthetic.Seed)
			}
		case isBrown(src):
			switch {
			case e.BrownDocs <= 0:
				return errors.Errorf("brown_docs=%d with the corpus %q; want the number of documents of each Brown "+
					"evaluation split to measure on (> 0)", e.BrownDocs, src)
			case lm.EvalSplitOf(e.Seed) != brown.Test:
				return errors.Errorf("seed=%d is even: on the Brown corpus an odd seed reads the test split and an "+
					"even one the held-out split (lm.EvalSplitOf); set an odd seed", e.Seed)
			case lm.EvalSplitOf(e.HeldSeed) != brown.Heldout:
				return errors.Errorf("held_seed=%d is odd: on the Brown corpus the held-back set is the held-out "+
					"split, which an even seed reads (lm.EvalSplitOf); set an even held_seed", e.HeldSeed)
			}
		default:
			return errors.Errorf("docs=%d needs evaluation documents, which only the %q and %q corpora have; the "+
				"corpus %q has none: set eval.docs=0 to evaluate on the validation split", e.Docs,
				lmdata.SourceSynthetic, lmdata.SourceBrown, src)
		}
	}
	return nil
}

// isBrown reports whether source names the Brown corpus (lmdata.SourceBrown, as lmdata matches it).
func isBrown(source string) bool { return strings.EqualFold(source, lmdata.SourceBrown) }

func (c CurvatureConfig) validate(K int) error {
	switch {
	case c.Batches <= 0:
		return errors.Errorf("batches=%d, want > 0", c.Batches)
	case c.Prototypes < 1 || c.Prototypes > K:
		return errors.Errorf("prototypes=%d, want in [1, prism.num_prototypes=%d]", c.Prototypes, K)
	}
	for i, w := range c.Sweep {
		if !(w >= 0) || math.IsInf(w, 0) {
			return errors.Errorf("sweep[%d]=%g, want a finite value ≥ 0", i, w)
		}
		if slices.Index(c.Sweep, w) != i {
			return errors.Errorf("sweep[%d]=%g repeats a weight", i, w)
		}
	}
	return nil
}
