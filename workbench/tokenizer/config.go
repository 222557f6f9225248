package tokenizer

import (
	"math"

	"github.com/pkg/errors"
)

// NumBytes is the number of base tokens: ids 0..255 are the raw bytes.
const NumBytes = 256

// Pre-tokenization modes for Config.Pretokenize.
const (
	// PretokenizeGPT2 splits text into GPT-2-like chunks (see doc.go); merges never cross a chunk boundary.
	PretokenizeGPT2 = "gpt2"
	// PretokenizeNone treats each text as one chunk. Training cost grows with the chunk length,
	// so use it only for short texts (for example one text per line).
	PretokenizeNone = "none"
)

// Config configures training. Start from DefaultConfig.
type Config struct {
	// VocabSize is the total number of token ids V: 256 bytes + merges + special tokens; >= 256+len(SpecialTokens).
	VocabSize int `json:"vocab_size"`
	// SpecialTokens get the last len(SpecialTokens) ids, in this order. They are never produced by Encode
	// from text; look their ids up with Tokenizer.SpecialID. Non-empty and distinct.
	SpecialTokens []string `json:"special_tokens"`
	// Pretokenize is PretokenizeGPT2 or PretokenizeNone.
	Pretokenize string `json:"pretokenize"`
	// MinPairCount is the smallest pair frequency that may become a merge; >= 1.
	// If fewer merges than VocabSize needs reach it, Train fails ("larger than the data supports").
	MinPairCount int `json:"min_pair_count"`
	// Progress, when not nil, is called after every merge with done merges out of total.
	Progress func(done, total int) `json:"-"`
}

// DefaultConfig returns the default training configuration: V = 4096, specials <|bos|>, <|eos|>, <|pad|>,
// GPT-2-like pre-tokenization and pairs seen at least twice.
func DefaultConfig() Config {
	return Config{
		VocabSize:     4096,
		SpecialTokens: []string{"<|bos|>", "<|eos|>", "<|pad|>"},
		Pretokenize:   PretokenizeGPT2,
		MinPairCount:  2,
	}
}

// NumMerges returns the number of merges the configuration asks for: VocabSize - 256 - len(SpecialTokens).
func (c Config) NumMerges() int { return c.VocabSize - NumBytes - len(c.SpecialTokens) }

// Validate returns an error naming the first invalid field.
func (c Config) Validate() error {
	if err := validateSpecials(c.SpecialTokens); err != nil {
		return err
	}
	if c.VocabSize < NumBytes+len(c.SpecialTokens) {
		return errors.Errorf("tokenizer: vocab_size=%d is smaller than 256 bytes + %d special tokens = %d",
			c.VocabSize, len(c.SpecialTokens), NumBytes+len(c.SpecialTokens))
	}
	if c.VocabSize > math.MaxInt32 {
		return errors.Errorf("tokenizer: vocab_size=%d does not fit in int32 ids", c.VocabSize)
	}
	if err := validatePretokenize(c.Pretokenize); err != nil {
		return err
	}
	if c.MinPairCount < 1 {
		return errors.Errorf("tokenizer: min_pair_count=%d, want >= 1", c.MinPairCount)
	}
	return nil
}

func validateSpecials(specials []string) error {
	seen := make(map[string]int, len(specials))
	for i, s := range specials {
		if s == "" {
			return errors.Errorf("tokenizer: special_tokens[%d] is empty", i)
		}
		if j, ok := seen[s]; ok {
			return errors.Errorf("tokenizer: special_tokens[%d]=%q duplicates special_tokens[%d]", i, s, j)
		}
		seen[s] = i
	}
	return nil
}

func validatePretokenize(mode string) error {
	switch mode {
	case PretokenizeGPT2, PretokenizeNone:
		return nil
	}
	return errors.Errorf("tokenizer: pretokenize=%q, want %q or %q", mode, PretokenizeGPT2, PretokenizeNone)
}
