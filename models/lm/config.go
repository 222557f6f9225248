package lm

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/store"
)

// Config is the complete description of one trained language model: two runs with equal (resolved) Configs give
// the same weights, which is what lets LoadOrTrain load instead of train. Studies build it from their presets.
type Config struct {
	// Seed seeds the weights, the data split, the batch order and the bank seeding; Resolved copies it into
	// data.seed and train.seed.
	Seed uint64 `json:"seed"`
	// Data is the corpus, the tokenizer, T and B.
	Data lmdata.Config `json:"data"`
	// Model is the decoder; model.vocab_size 0 means data.tokenizer.vocab_size.
	Model decoder.Config `json:"model"`
	// Head is HeadDense ("dense", the decoder's LM head; "" means dense) or HeadPrism ("prism", the PRISM
	// prototype head of docs/spec/prism.md, configured by Prism).
	Head string `json:"head"`
	// Prism configures the PRISM head and its training schedule; Resolved zeroes it for a dense model, so that the
	// dense baselines of PRISM variants are one run.
	Prism Prism `json:"prism"`
	// Train is the optimizer, schedule, evaluation and checkpoint cadence.
	Train fit.Config `json:"train"`
	// EvalBatches is the number of validation batches of the final perplexity; 0 means all of them.
	EvalBatches int `json:"eval_batches"`
}

// Values of Config.Head.
const (
	HeadDense = "dense" // the decoder's LM head, l = W z
	HeadPrism = "prism" // the PRISM prototype head, l = W(r + ẑ) (layers/prism)
)

// Prism configures the PRISM head of a Config and its training schedule (docs/spec/prism.md §2.3). The head's own
// settings are promoted: prism.num_prototypes, prism.top_k, prism.rec_weight, …
type Prism struct {
	// Config is the prototype head and its loss weights.
	prism.Config
	// ProtoWarmup is the number of cross-entropy-only updates before the bank is seeded and L_REC, L_R1, L_R2 switch
	// on; in [0, train.steps) and a multiple of train.log_every. Spec §2.3: 200. 0 keeps the N(0, σ²) bank.
	ProtoWarmup int `json:"proto_warmup"`
	// SeedBatches is the number of training batches whose hidden states seed the bank; their B·T tokens must
	// number at least K. Used when ProtoWarmup > 0.
	SeedBatches int `json:"seed_batches"`
	// RescaleSeed multiplies the seeded bank by the least-squares scale s = Σ⟨z_t, ẑ_t⟩/Σ‖ẑ_t‖² over the seeding
	// tokens (our choice; doc.go, "Bank seeding").
	RescaleSeed bool `json:"rescale_seed"`
}

// Resolved returns c with the derived fields filled: data.seed and train.seed set to seed, model.vocab_size set to
// data.tokenizer.vocab_size when 0, and the unused prism section zeroed for a dense model. Run folders are keyed by
// the resolved config.
func (c Config) Resolved() Config {
	c.Data.Seed = c.Seed
	c.Train.Seed = c.Seed
	if c.Model.VocabSize == 0 {
		c.Model.VocabSize = c.Data.Tokenizer.VocabSize
	}
	if c.Head == "" {
		c.Head = HeadDense
	}
	if c.Head == HeadDense {
		c.Prism = Prism{}
	}
	return c
}

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	c = c.Resolved()
	if err := c.Data.Validate(); err != nil {
		return err
	}
	if err := c.Model.Validate(); err != nil {
		return errors.WithMessage(err, "model")
	}
	if c.Model.VocabSize != c.Data.Tokenizer.VocabSize {
		return errors.Errorf("model.vocab_size=%d differs from data.tokenizer.vocab_size=%d (use 0 to follow the "+
			"tokenizer)", c.Model.VocabSize, c.Data.Tokenizer.VocabSize)
	}
	if err := c.Train.Validate(); err != nil {
		return errors.WithMessage(err, "train")
	}
	if c.EvalBatches < 0 {
		return errors.Errorf("eval_batches=%d, want ≥ 0 (0 means all)", c.EvalBatches)
	}
	switch c.Head {
	case HeadDense:
		return nil
	case HeadPrism:
	default:
		return errors.Errorf("head=%q, want %q or %q", c.Head, HeadDense, HeadPrism)
	}
	p := c.Prism
	if err := p.Config.Validate(); err != nil {
		return errors.WithMessage(err, "prism")
	}
	switch {
	case p.ProtoWarmup < 0 || p.ProtoWarmup >= c.Train.Steps:
		return errors.Errorf("prism.proto_warmup=%d, want in [0, train.steps=%d)", p.ProtoWarmup, c.Train.Steps)
	case p.ProtoWarmup > 0 && p.ProtoWarmup%c.Train.LogEvery != 0:
		return errors.Errorf("prism.proto_warmup=%d is not a multiple of train.log_every=%d, so the bank would "+
			"never be seeded", p.ProtoWarmup, c.Train.LogEvery)
	case p.ProtoWarmup > 0 && p.SeedBatches <= 0:
		return errors.Errorf("prism.seed_batches=%d, want > 0 when proto_warmup > 0", p.SeedBatches)
	case p.ProtoWarmup > 0 && p.SeedBatches*c.Data.BatchSize*c.Data.SeqLen < p.NumPrototypes:
		return errors.Errorf("prism.seed_batches=%d gives %d tokens, fewer than the %d prototypes to seed",
			p.SeedBatches, p.SeedBatches*c.Data.BatchSize*c.Data.SeqLen, p.NumPrototypes)
	}
	return nil
}

// Name returns a readable folder name: "<mixer>-<source>-d<width>-s<steps>-seed<seed>", with "-prismK<K>k<k>" after
// the mixer for a PRISM model.
func (c Config) Name() string {
	src := strings.TrimSuffix(filepath.Base(c.Data.Source), filepath.Ext(c.Data.Source))
	src = strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, src)
	head := ""
	if c.Head == HeadPrism {
		head = fmt.Sprintf("-prismK%dk%d", c.Prism.NumPrototypes, c.Prism.TopK)
	}
	return fmt.Sprintf("%s%s-%s-d%d-s%d-seed%d", c.Model.Mixer, head, src, c.Model.Width, c.Train.Steps, c.Seed)
}

// Hash returns the cache key of the resolved config (store.KeyHash: 10 hex digits of the SHA-256 of its JSON).
func (c Config) Hash() string {
	h, _, err := store.KeyHash(c.Resolved())
	if err != nil {
		panic(errors.WithMessage(err, "lm.Config.Hash")) // a Config always encodes
	}
	return h
}

// NumParams returns the trainable parameter count: the decoder's, plus the bank's K·D with a PRISM head. Panics if
// the resolved config is invalid.
func (c Config) NumParams() int {
	c = c.Resolved()
	if c.Head == HeadPrism {
		return decoder.PrismNumParams(c.Model, c.Prism.Config)
	}
	return c.Model.NumParams()
}

// Dense returns c with the dense LM head: the PRISM model's dense baseline (same backbone, data and training).
func (c Config) Dense() Config {
	c.Head = HeadDense
	return c.Resolved()
}
