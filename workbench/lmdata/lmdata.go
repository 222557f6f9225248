// Package lmdata turns a corpus description into what a language-model experiment trains on: it loads the corpus
// (the synthetic concept corpus, WordNet, the Brown corpus, or .txt/.jsonl/.parquet files), splits it into train and
// validation documents (the Brown corpus by its fixed split: SourceBrown), trains (or loads) a byte-level BPE
// tokenizer on the training documents only, encodes and packs both splits into fixed-length sequences, and serves
// them as fit.Batches.
//
// Documents of file sources (data.source, read by data.ReadFiles): a .jsonl line or a .parquet row is one
// document; a .txt file is cut into its blank-line-separated paragraphs, and a paragraph longer than
// data.TextChunkBytes (4 KiB) — in particular a file with no blank line — into chunks of at most that size ending
// at line ends (data.SplitText). data.read.text_split=file keeps each .txt file whole, one document per file.
//
// PrepareContext checks its context between documents (reading, tokenizer training, encoding) and between the
// tokenizer's merges, so that an interrupt stops data preparation within a fraction of a second.
//
// Every language model ProtoLab trains (models/lm, for every study) is prepared on this path, so that
// their numbers are comparable.
package lmdata

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/tokenizer"
)

// Sources understood by Config.Source besides file paths.
const (
	SourceSynthetic = "synthetic" // data.Synthetic(Config.Synthetic), the default
	SourceWordNet   = "wordnet"   // glosses and examples of the WordNet 3.0 database (make wordnet)
	// SourceBrown is the Brown corpus (make brown; workbench/data/brown), one document per 2,000-word sample, split by
	// its fixed hash split, never by data.val_fraction and data.seed: its train split trains (data.read.max_docs and
	// max_bytes keep part of it, taken one genre at a time) and its validation split validates, whole; its test and
	// heldout splits are never loaded into either, only by EvalCorpus.
	SourceBrown = "brown"
)

// Config describes the data of a language-model run.
type Config struct {
	// Source is "synthetic", "wordnet", "brown", or a .txt/.jsonl/.parquet file, folder or glob.
	Source string `json:"source"`
	// Synthetic configures the synthetic concept corpus (Source "synthetic").
	Synthetic data.SyntheticConfig `json:"synthetic"`
	// Read limits and selects the text of file sources (field/column, max docs, max bytes); of source "brown" it
	// limits the training split only (max docs, max bytes).
	Read data.ReadConfig `json:"read"`
	// ValFraction is the fraction of documents held out for validation; in (0, 1). Source "brown" has a fixed
	// validation split and does not read it.
	ValFraction float64 `json:"val_fraction"`
	// SeqLen is T, the number of input tokens per sequence; > 0.
	SeqLen int `json:"seq_len"`
	// BatchSize is B, the number of sequences per training batch; > 0.
	BatchSize int `json:"batch_size"`
	// EvalBatchSize is the number of sequences per validation batch; 0 means BatchSize.
	EvalBatchSize int `json:"eval_batch_size"`
	// Seed seeds the split (not that of source "brown", which is fixed) and the shuffling of training batches.
	Seed uint64 `json:"seed"`
	// Tokenizer configures the BPE tokenizer trained on the training documents.
	Tokenizer tokenizer.Config `json:"tokenizer"`
}

// DefaultConfig returns the synthetic corpus, 10% validation, T = 128, B = 16 and a 2,048-token vocabulary.
func DefaultConfig() Config {
	tc := tokenizer.DefaultConfig()
	tc.VocabSize = 2048
	return Config{
		Source:      SourceSynthetic,
		Synthetic:   data.DefaultSyntheticConfig(),
		ValFraction: 0.1,
		SeqLen:      128,
		BatchSize:   16,
		Seed:        1,
		Tokenizer:   tc,
	}
}

// Validate reports the first problem of the configuration, naming its key.
func (c Config) Validate() error {
	switch {
	case c.Source == "":
		return errors.New("data: source is empty; want \"synthetic\", \"wordnet\", \"brown\" or a file, folder or glob")
	case !(c.ValFraction > 0 && c.ValFraction < 1):
		return errors.Errorf("data: val_fraction=%g, want in (0, 1)", c.ValFraction)
	case c.SeqLen <= 0:
		return errors.Errorf("data: seq_len=%d, want > 0", c.SeqLen)
	case c.BatchSize <= 0:
		return errors.Errorf("data: batch_size=%d, want > 0", c.BatchSize)
	case c.EvalBatchSize < 0:
		return errors.Errorf("data: eval_batch_size=%d, want ≥ 0 (0 means batch_size)", c.EvalBatchSize)
	}
	if c.Source == SourceSynthetic {
		if err := c.Synthetic.Validate(); err != nil {
			return errors.WithMessage(err, "data.synthetic")
		}
	}
	if err := c.Read.Validate(); err != nil {
		return errors.WithMessage(err, "data.read")
	}
	return errors.WithMessage(c.Tokenizer.Validate(), "data.tokenizer")
}

// LoadCorpus loads the corpus named by cfg.Source; for "brown", its training documents (as data.read limits them)
// and validation documents only.
func LoadCorpus(cfg Config) (*data.Corpus, error) { return loadCorpus(context.Background(), cfg) }

func loadCorpus(ctx context.Context, cfg Config) (*data.Corpus, error) {
	switch strings.ToLower(cfg.Source) {
	case SourceSynthetic:
		return data.SyntheticContext(ctx, cfg.Synthetic)
	case SourceWordNet:
		dir, err := wordnet.Dir()
		if err != nil {
			return nil, errors.WithMessage(err, "data source \"wordnet\" (run `make wordnet` or set PROTOLAB_WORDNET)")
		}
		db, err := wordnet.Load(dir)
		if err != nil {
			return nil, err
		}
		return db.Corpus(), nil
	case SourceBrown:
		s, err := loadBrown()
		if err != nil {
			return nil, err
		}
		return data.Merge(s.source, s.limitTrain(cfg.Read), s.corpus[brown.Validation]), nil
	}
	return data.ReadFilesContext(ctx, cfg.Source, cfg.Read)
}

// Prepared is a tokenized, split and packed corpus.
type Prepared struct {
	Config    Config
	Corpus    *data.Corpus // the whole corpus (for "brown": its training and validation documents)
	Train     *data.Corpus // training documents
	Val       *data.Corpus // validation documents
	Tokenizer *tokenizer.Tokenizer
	TrainSeqs *data.Packed // training token stream cut into sequences of SeqLen+1
	ValSeqs   *data.Packed
	EOS       int32 // the end-of-document token separating packed documents
}

// Prepare loads, splits, tokenizes and packs the corpus. When tokenizerPath names an existing file it is loaded
// instead of training a tokenizer (and must have the configured vocabulary size); when it names a missing file the
// trained tokenizer is saved there. An empty path trains without saving.
func Prepare(cfg Config, tokenizerPath string) (*Prepared, error) {
	return PrepareContext(context.Background(), cfg, tokenizerPath)
}

// PrepareContext is Prepare that stops once ctx is done, between documents and between tokenizer merges, and then
// returns ctx's error; the tokenizer file is written only once the tokenizer is complete.
func PrepareContext(ctx context.Context, cfg Config, tokenizerPath string) (*Prepared, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, err := loadSplit(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if p.Tokenizer, err = loadOrTrainTokenizer(ctx, p.Train.Texts, cfg.Tokenizer, tokenizerPath); err != nil {
		return nil, err
	}
	eos, ok := p.Tokenizer.SpecialID("<|eos|>")
	if !ok {
		return nil, errors.Errorf("data.tokenizer: special_tokens %q lack \"<|eos|>\", which separates packed documents",
			p.Tokenizer.SpecialTokens())
	}
	p.EOS = eos
	trainIDs, err := p.encode(ctx, p.Train.Texts)
	if err != nil {
		return nil, errors.WithMessage(err, "data: encoding the training split")
	}
	valIDs, err := p.encode(ctx, p.Val.Texts)
	if err != nil {
		return nil, errors.WithMessage(err, "data: encoding the validation split")
	}
	if p.TrainSeqs, err = data.Pack(trainIDs, cfg.SeqLen, eos); err != nil {
		return nil, errors.WithMessage(err, "data: packing the training split")
	}
	if p.ValSeqs, err = data.Pack(valIDs, cfg.SeqLen, eos); err != nil {
		return nil, errors.WithMessagef(err, "data: packing the validation split (%d documents; raise val_fraction or "+
			"lower seq_len)", len(p.Val.Texts))
	}
	return p, nil
}

// loadSplit loads the corpus and splits it into training and validation documents: a fixed-split source by its
// split, any other by data.val_fraction and data.seed.
func loadSplit(ctx context.Context, cfg Config) (*Prepared, error) {
	if strings.ToLower(cfg.Source) == SourceBrown {
		s, err := loadBrown()
		if err != nil {
			return nil, err
		}
		train, val := s.limitTrain(cfg.Read), s.corpus[brown.Validation]
		return &Prepared{Config: cfg, Corpus: data.Merge(s.source, train, val), Train: train, Val: val}, nil
	}
	corpus, err := loadCorpus(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, errors.WithMessage(err, "data: loading the corpus")
	}
	if len(corpus.Texts) < 2 {
		return nil, errors.Errorf("data: corpus %q has %d documents; need at least 2 to split train/validation "+
			"(a .txt file is split at blank lines and into chunks of at most %d bytes: give more text or more files)",
			corpus.Source, len(corpus.Texts), data.TextChunkBytes)
	}
	p := &Prepared{Config: cfg, Corpus: corpus}
	if p.Train, p.Val, err = corpus.Split(cfg.ValFraction, cfg.Seed); err != nil {
		return nil, errors.WithMessagef(err, "data: splitting %q", corpus.Source)
	}
	return p, nil
}

func loadOrTrainTokenizer(ctx context.Context, texts []string, cfg tokenizer.Config, path string) (
	*tokenizer.Tokenizer, error) {
	if path != "" {
		// Read once and parse those bytes (not a check, then a second read another writer could race).
		b, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return nil, errors.Wrapf(err, "reading the tokenizer %s", path)
		}
		if err == nil {
			tok, err := tokenizer.FromJSON(b)
			if err != nil {
				return nil, errors.WithMessagef(err, "the tokenizer %s is corrupt; delete it to retrain", path)
			}
			if tok.VocabSize() != cfg.VocabSize || !reflect.DeepEqual(tok.SpecialTokens(), cfg.SpecialTokens) {
				return nil, errors.Errorf("tokenizer %s has vocab_size %d and special tokens %q, but the config asks "+
					"for %d and %q; delete the file to retrain", path, tok.VocabSize(), tok.SpecialTokens(),
					cfg.VocabSize, cfg.SpecialTokens)
			}
			return tok, nil
		}
	}
	tok, err := tokenizer.TrainContext(ctx, texts, cfg)
	if err != nil {
		return nil, err
	}
	if path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, errors.Wrapf(err, "creating the folder of %s", path)
		}
		if err := tok.Save(path); err != nil {
			return nil, err
		}
	}
	return tok, nil
}

// Encode tokenizes each text (no special tokens added).
func (p *Prepared) Encode(texts []string) [][]int32 {
	out, _ := p.encode(context.Background(), texts)
	return out
}

// encode is Encode that stops with ctx's error once ctx is done, checked before each text.
func (p *Prepared) encode(ctx context.Context, texts []string) ([][]int32, error) {
	out := make([][]int32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = p.Tokenizer.Encode(t)
	}
	return out, nil
}

// TrainBatches returns shuffled training batches [B, T+1] that cycle over epochs and resume exactly.
func (p *Prepared) TrainBatches() (fit.Batches, error) {
	b, err := data.NewBatcher(p.TrainSeqs, data.BatcherConfig{BatchSize: p.Config.BatchSize, Seed: p.Config.Seed,
		Shuffle: true})
	if err != nil {
		return nil, errors.WithMessage(err, "data: training batches")
	}
	return fit.NewTokenBatches(b)
}

// ValBatches returns validation batches in stream order (the same batches every time).
func (p *Prepared) ValBatches() (fit.Batches, error) {
	b, err := data.NewBatcher(p.ValSeqs, data.BatcherConfig{BatchSize: p.evalBatchSize(), Shuffle: false})
	if err != nil {
		return nil, errors.WithMessage(err, "data: validation batches")
	}
	return fit.NewTokenBatches(b)
}

func (p *Prepared) evalBatchSize() int {
	bs := p.Config.EvalBatchSize
	if bs == 0 {
		bs = p.Config.BatchSize
	}
	return min(bs, p.ValSeqs.NumSequences())
}

// ValTensors returns up to maxBatches validation batches as [B, T+1] int32 tensors (all of them when maxBatches ≤ 0),
// in stream order, for perplexity evaluation.
func (p *Prepared) ValTensors(maxBatches int) ([]*tensors.Tensor, error) {
	b, err := data.NewBatcher(p.ValSeqs, data.BatcherConfig{BatchSize: p.evalBatchSize(), Shuffle: false})
	if err != nil {
		return nil, errors.WithMessage(err, "data: validation batches")
	}
	n := b.BatchesPerEpoch()
	if maxBatches > 0 {
		n = min(n, maxBatches)
	}
	out := make([]*tensors.Tensor, n)
	for i := range out {
		out[i] = tensors.FromValue(b.Next().Tokens)
	}
	return out, nil
}
