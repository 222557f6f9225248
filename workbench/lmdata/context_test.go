package lmdata

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrepareContext_StopsWhenDone checks that a done context stops data preparation, during corpus loading and
// during tokenizer training, with the context's error and without writing the tokenizer file.
func TestPrepareContext_StopsWhenDone(t *testing.T) {
	dir := t.TempDir()
	tokPath := filepath.Join(dir, "tokenizer.json")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := PrepareContext(ctx, tinyConfig(), tokPath)
	require.ErrorIs(t, err, context.Canceled)

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	cfg := tinyConfig()
	merges := 0
	cfg.Tokenizer.Progress = func(done, total int) {
		if merges = done; done == 3 {
			cancel()
		}
	}
	_, err = PrepareContext(ctx, cfg, tokPath)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "after 3 of")
	require.Equal(t, 3, merges)
	require.NoFileExists(t, tokPath)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "an interrupted preparation leaves no file behind")
}

// TestPrepare_OneTextFile checks that one .txt file is a corpus: its paragraphs are the documents.
func TestPrepare_OneTextFile(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "Paragraph %d tells of the queen and the king.\nIt has a second line about the %d cats.\n\n",
			i, i%7)
	}
	path := filepath.Join(t.TempDir(), "my text.txt")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	cfg := tinyConfig()
	cfg.Source = path
	p, err := Prepare(cfg, "")
	require.NoError(t, err)
	require.Len(t, p.Corpus.Texts, 40)
	require.Equal(t, "Paragraph 0 tells of the queen and the king.\nIt has a second line about the 0 cats.",
		p.Corpus.Texts[0])

	cfg.Read.TextSplit = "file"
	_, err = Prepare(cfg, "")
	require.ErrorContains(t, err, "has 1 documents; need at least 2")
	require.ErrorContains(t, err, "split at blank lines")
	cfg.Read.TextSplit = "sentences"
	_, err = Prepare(cfg, "")
	require.ErrorContains(t, err, `data.read: read config: text_split="sentences"`)
}
