package lmdata

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/require"
)

func tinyConfig() Config {
	cfg := DefaultConfig()
	cfg.Synthetic.NumDocs = 60
	cfg.SeqLen = 16
	cfg.BatchSize = 4
	cfg.ValFraction = 0.2
	cfg.Tokenizer.VocabSize = 300
	return cfg
}

func TestPrepare_SyntheticSplitsTokenizesAndPacks(t *testing.T) {
	dir := t.TempDir()
	tokPath := filepath.Join(dir, "tokenizer.json")
	p, err := Prepare(tinyConfig(), tokPath)
	require.NoError(t, err)
	require.Equal(t, len(p.Corpus.Texts), len(p.Train.Texts)+len(p.Val.Texts))
	require.Equal(t, 300, p.Tokenizer.VocabSize())
	require.FileExists(t, tokPath)

	// Packed training stream = the training documents' tokens, each followed by EOS.
	n := 0
	for _, ids := range p.Encode(p.Train.Texts) {
		n += len(ids) + 1
	}
	require.Equal(t, n, len(p.TrainSeqs.Stream))
	require.Equal(t, string(p.Tokenizer.Decode(p.TrainSeqs.Stream[:len(p.Encode(p.Train.Texts[:1])[0])])), p.Train.Texts[0])

	tb, err := p.TrainBatches()
	require.NoError(t, err)
	batch, err := tb.Next()
	require.NoError(t, err)
	require.Equal(t, []int{4, 17}, batch[0].Shape().Dimensions)
	vals, err := p.ValTensors(2)
	require.NoError(t, err)
	require.NotEmpty(t, vals)
	require.Equal(t, 17, vals[0].Shape().Dim(1))
	require.Equal(t, p.ValSeqs.Sequence(0), tensors.MustCopyFlatData[int32](vals[0])[:17])

	// A second Prepare loads the saved tokenizer; a different vocabulary size is refused.
	p2, err := Prepare(tinyConfig(), tokPath)
	require.NoError(t, err)
	require.Equal(t, p.Tokenizer.Merges(), p2.Tokenizer.Merges())
	cfg := tinyConfig()
	cfg.Tokenizer.VocabSize = 310
	_, err = Prepare(cfg, tokPath)
	require.ErrorContains(t, err, "delete the file to retrain")
}

func TestPrepare_Errors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	for _, tc := range []struct {
		name    string
		mutate  func(*Config)
		mention string
	}{
		{"empty source", func(c *Config) { c.Source = "" }, "source is empty"},
		{"missing file", func(c *Config) { c.Source = filepath.Join(dir, "nope.txt") }, "nope.txt"},
		{"empty corpus", func(c *Config) { c.Source = empty }, "empty.txt"},
		{"bad val fraction", func(c *Config) { c.ValFraction = 1 }, "val_fraction"},
		{"bad seq len", func(c *Config) { c.SeqLen = 0 }, "seq_len"},
		{"bad batch", func(c *Config) { c.BatchSize = -1 }, "batch_size"},
		{"vocabulary too large", func(c *Config) { c.Tokenizer.VocabSize = 200_000 }, "larger than the data supports"},
		{"validation too small", func(c *Config) { c.SeqLen = 4000 }, "validation split"},
	} {
		cfg := tinyConfig()
		tc.mutate(&cfg)
		_, err := Prepare(cfg, "")
		require.Error(t, err, tc.name)
		require.Contains(t, err.Error(), tc.mention, tc.name)
	}
}
