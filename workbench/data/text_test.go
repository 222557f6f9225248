package data

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestSplitText_Paragraphs(t *testing.T) {
	text := "\n\nTitle line\n\nFirst paragraph,\nsecond line.\n \t \nSecond paragraph.\r\n\r\n\r\nThird\n\n"
	require.Equal(t, []string{"Title line", "First paragraph,\nsecond line.", "Second paragraph.\r", "Third"},
		SplitText(text))
	require.Empty(t, SplitText(" \n\t\n"))
	require.Equal(t, []string{"one line, no newline"}, SplitText("one line, no newline"))
}

// TestSplitText_ChunksLongParagraphs checks the fallback: a text with no blank line (one sentence per line) becomes
// chunks of at most TextChunkBytes that end at line ends and, joined by the dropped newlines, give the text back.
func TestSplitText_ChunksLongParagraphs(t *testing.T) {
	var lines []string
	for i := 0; i < 500; i++ {
		lines = append(lines, strings.Repeat("word ", 5+i%13)+"end.")
	}
	text := strings.Join(lines, "\n")
	docs := SplitText(text + "\n")
	require.Greater(t, len(docs), len(text)/TextChunkBytes, "fewer chunks than the size allows")
	for i, d := range docs {
		require.LessOrEqual(t, len(d), TextChunkBytes, "chunk %d", i)
		require.True(t, strings.HasSuffix(d, "end."), "chunk %d does not end at a line end", i)
	}
	require.Equal(t, text, strings.Join(docs, "\n"))

	// One long line is cut at spaces; a line without spaces at character boundaries.
	long := strings.TrimSpace(strings.Repeat("abc ", 3*TextChunkBytes/4))
	docs = SplitText(long)
	require.Len(t, docs, 3)
	require.Equal(t, long, strings.Join(docs, " "))
	runes := strings.Repeat("é", TextChunkBytes) // 2 bytes each
	docs = SplitText(runes)
	require.Len(t, docs, 2)
	for _, d := range docs {
		require.True(t, utf8.ValidString(d))
		require.LessOrEqual(t, len(d), TextChunkBytes)
	}
	require.Equal(t, runes, strings.Join(docs, ""))
}

func TestReadFiles_TextSplitAndContext(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, filepath.Join(dir, "book.txt"), "Chapter one.\n\nIt was a dark night.\n\nThe end.\n")
	c, err := ReadFiles(p, ReadConfig{})
	require.NoError(t, err)
	require.Equal(t, []string{"Chapter one.", "It was a dark night.", "The end."}, c.Texts)
	c, err = ReadFiles(p, ReadConfig{TextSplit: TextSplitParagraphs, MaxDocs: 2})
	require.NoError(t, err)
	require.Len(t, c.Texts, 2, "max_docs counts paragraphs")
	c, err = ReadFiles(p, ReadConfig{TextSplit: TextSplitFile})
	require.NoError(t, err)
	require.Equal(t, []string{"Chapter one.\n\nIt was a dark night.\n\nThe end.\n"}, c.Texts)
	_, err = ReadFiles(p, ReadConfig{TextSplit: "lines"})
	require.ErrorContains(t, err, `text_split="lines", want "paragraphs" (the default) or "file"`)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = ReadFilesContext(ctx, p, ReadConfig{})
	require.ErrorIs(t, err, context.Canceled)
}

// countdown is a context that reports itself cancelled from its (n+1)-th Err call on, counting the calls.
type countdown struct {
	context.Context
	n, calls atomic.Int64
}

func (c *countdown) Err() error {
	if c.calls.Add(1) > c.n.Load() {
		return context.Canceled
	}
	return nil
}

// TestSyntheticContext_StopsBetweenDocuments cancels the generation of 5,000 documents after 10: the workers stop at
// their next document (far fewer than 5,000 checks) and the context's error is returned.
func TestSyntheticContext_StopsBetweenDocuments(t *testing.T) {
	cfg := DefaultSyntheticConfig()
	cfg.NumDocs = 5000
	ctx := &countdown{Context: context.Background()}
	ctx.n.Store(10)
	_, err := SyntheticContext(ctx, cfg)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, ctx.calls.Load(), int64(100), "generation went on after the cancel")

	cfg.NumDocs = 20
	ctx = &countdown{Context: context.Background()}
	ctx.n.Store(1 << 30)
	c, err := SyntheticContext(ctx, cfg)
	require.NoError(t, err)
	want, err := Synthetic(cfg)
	require.NoError(t, err)
	require.Equal(t, want.Texts, c.Texts)
}
