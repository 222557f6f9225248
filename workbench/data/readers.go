package data

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pkg/errors"
)

// ReadConfig configures the file readers. The zero value reads everything from the "text" field and splits .txt
// files into paragraphs (SplitText).
type ReadConfig struct {
	Field    string `json:"field"`     // JSONL field / Parquet column holding the text; "" means "text"
	MaxDocs  int    `json:"max_docs"`  // stop after this many documents; 0: no limit
	MaxBytes int64  `json:"max_bytes"` // stop once this many bytes of text are read; 0: no limit
	// TextSplit is how a .txt file becomes documents: TextSplitParagraphs (also "") or TextSplitFile. Omitted from
	// the JSON when empty, so configs (and their cache keys) written before it existed are unchanged.
	TextSplit string `json:"text_split,omitempty"`
}

// Values of ReadConfig.TextSplit.
const (
	TextSplitParagraphs = "paragraphs" // SplitText: blank-line-separated paragraphs, long ones cut into chunks
	TextSplitFile       = "file"       // the whole file is one document
)

// TextChunkBytes is the largest document SplitText makes of a long paragraph (or of a file with no blank line).
const TextChunkBytes = 4096

func (c ReadConfig) field() string {
	if c.Field == "" {
		return "text"
	}
	return c.Field
}

// Validate reports the first invalid field of the read config, naming its key.
func (c ReadConfig) Validate() error {
	if c.MaxDocs < 0 || c.MaxBytes < 0 {
		return errors.Errorf("read config: max_docs=%d, max_bytes=%d, want >= 0", c.MaxDocs, c.MaxBytes)
	}
	switch c.TextSplit {
	case "", TextSplitParagraphs, TextSplitFile:
		return nil
	}
	return errors.Errorf("read config: text_split=%q, want %q (the default) or %q", c.TextSplit, TextSplitParagraphs,
		TextSplitFile)
}

// limiter tracks MaxDocs / MaxBytes across files, and stops reading once ctx (when set) is done.
type limiter struct {
	cfg   ReadConfig
	docs  int
	bytes int64
	ctx   context.Context
}

// add records one document and reports whether reading may continue.
func (l *limiter) add(text string) bool {
	l.docs++
	l.bytes += int64(len(text))
	return !l.full()
}

func (l *limiter) full() bool {
	return (l.cfg.MaxDocs > 0 && l.docs >= l.cfg.MaxDocs) || (l.cfg.MaxBytes > 0 && l.bytes >= l.cfg.MaxBytes) ||
		(l.ctx != nil && l.ctx.Err() != nil)
}

// ReadText reads a UTF-8 text file and splits it into documents with SplitText. Errors: missing file, invalid UTF-8
// (e.g. a binary file), or a file with no non-whitespace text.
func ReadText(path string) (*Corpus, error) {
	c := &Corpus{Source: path}
	if err := readText(path, c, &limiter{}); err != nil {
		return nil, err
	}
	return c, nil
}

// SplitText cuts the text of a .txt file into documents, so that one file of prose is a corpus:
//   - a document is a paragraph: a run of lines that are not blank, separated from the next by one or more blank
//     lines (lines holding only whitespace); its lines are kept as they are, joined by "\n";
//   - a paragraph longer than TextChunkBytes bytes (in particular a file with no blank line at all, such as one
//     sentence per line) is cut into chunks of at most TextChunkBytes bytes, each ending at a line end; a single
//     line longer than that is cut at its last space before the limit, or else at a character boundary.
//
// It returns no documents for a text of whitespace only.
func SplitText(text string) []string {
	var docs []string
	var para []string // the lines of the current paragraph
	flush := func() {
		if len(para) > 0 {
			docs = append(docs, chunkText(strings.Join(para, "\n"), TextChunkBytes)...)
			para = para[:0]
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		para = append(para, line)
	}
	flush()
	return docs
}

// chunkText cuts p into pieces of at most max bytes, at line ends where possible, else at spaces, else at character
// boundaries; the separator at a cut is dropped, and pieces of whitespace only are skipped.
func chunkText(p string, max int) []string {
	var out []string
	keep := func(s string) {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	for len(p) > max {
		cut, skip := strings.LastIndexByte(p[:max+1], '\n'), 1
		if cut <= 0 {
			cut = strings.LastIndexByte(p[:max+1], ' ')
		}
		if cut <= 0 {
			cut, skip = max, 0
			for cut > 0 && !utf8.RuneStart(p[cut]) {
				cut--
			}
		}
		keep(p[:cut])
		p = p[cut+skip:]
	}
	keep(p)
	return out
}

func readText(path string, c *Corpus, lim *limiter) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return errors.Wrapf(err, "reading text file %q", path)
	}
	if !utf8.Valid(b) {
		return errors.Errorf("text file %q is not valid UTF-8 (first bad byte at offset %d)", path, firstInvalidUTF8(b))
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return errors.Errorf("text file %q is empty", path)
	}
	if lim.cfg.TextSplit == TextSplitFile {
		c.Texts = append(c.Texts, string(b))
		lim.add(string(b))
		return nil
	}
	for _, doc := range SplitText(string(b)) {
		c.Texts = append(c.Texts, doc)
		if !lim.add(doc) {
			return nil
		}
	}
	return nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// ReadJSONL reads one document per line from the string field cfg.Field of JSON objects. Blank lines and empty or
// null texts are skipped; a line that is not valid UTF-8, is not a JSON object, lacks the field or has a non-string
// field is an error naming the file and line number. A file with no documents is an error.
func ReadJSONL(path string, cfg ReadConfig) (*Corpus, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Corpus{Source: path}
	if err := readJSONL(path, cfg.field(), c, &limiter{cfg: cfg}); err != nil {
		return nil, err
	}
	if len(c.Texts) == 0 {
		return nil, errors.Errorf("JSONL file %q holds no documents with a non-empty %q field", path, cfg.field())
	}
	return c, nil
}

func readJSONL(path, field string, c *Corpus, lim *limiter) error {
	f, err := os.Open(path)
	if err != nil {
		return errors.Wrapf(err, "opening JSONL file %q", path)
	}
	defer func() { _ = f.Close() }()
	return readJSONLFrom(f, path, field, c, lim)
}

// readJSONLFrom is readJSONL on the lines of f, named path in errors.
func readJSONLFrom(f io.Reader, path, field string, c *Corpus, lim *limiter) error {
	r := bufio.NewReaderSize(f, 1<<20)
	for lineNo := 1; ; lineNo++ {
		line, readErr := r.ReadBytes('\n')
		if readErr != nil && readErr != io.EOF {
			return errors.Wrapf(readErr, "reading %s:%d", path, lineNo)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			// encoding/json would silently turn invalid UTF-8 into U+FFFD.
			if !utf8.Valid(line) {
				return errors.Errorf("%s:%d: not valid UTF-8 (first bad byte at column %d)", path, lineNo,
					firstInvalidUTF8(line)+1)
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(line, &obj); err != nil {
				return errors.Wrapf(err, "%s:%d: not a JSON object", path, lineNo)
			}
			if obj == nil { // the line is "null"
				return errors.Errorf("%s:%d: not a JSON object: null", path, lineNo)
			}
			raw, ok := obj[field]
			if !ok {
				return errors.Errorf("%s:%d: no field %q", path, lineNo, field)
			}
			var text string
			if err := json.Unmarshal(raw, &text); err != nil {
				return errors.Wrapf(err, "%s:%d: field %q is not a string", path, lineNo, field)
			}
			if text != "" {
				c.Texts = append(c.Texts, text)
				if !lim.add(text) {
					return nil
				}
			}
		}
		if readErr == io.EOF {
			return nil
		}
	}
}

// Extensions that ReadFiles understands.
var readableExts = []string{".txt", ".jsonl", ".parquet"}

// ReadFiles reads every file matched by pattern, which is a directory (walked recursively; files with other
// extensions are ignored), a glob, or a single file. It dispatches on the extension: .txt (SplitText, or one
// document per file with cfg.TextSplit "file"), .jsonl (ReadJSONL), .parquet (ReadParquet), in sorted path order,
// and stops at cfg's limits. Errors: nothing matches, a matched file with an unknown extension, or any file error.
func ReadFiles(pattern string, cfg ReadConfig) (*Corpus, error) {
	return ReadFilesContext(context.Background(), pattern, cfg)
}

// ReadFilesContext is ReadFiles that stops between documents once ctx is done and then returns ctx's error.
func ReadFilesContext(ctx context.Context, pattern string, cfg ReadConfig) (*Corpus, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	paths, err := listFiles(pattern)
	if err != nil {
		return nil, err
	}
	c := &Corpus{Source: pattern}
	lim := &limiter{cfg: cfg, ctx: ctx}
	for _, p := range paths {
		if lim.full() {
			break
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".txt":
			err = readText(p, c, lim)
		case ".jsonl":
			err = readJSONL(p, cfg.field(), c, lim)
		case ".parquet":
			err = readParquet(p, cfg.field(), c, lim)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, errors.WithMessagef(err, "reading %q", pattern)
	}
	if err := c.Validate(); err != nil {
		return nil, errors.WithMessagef(err, "ReadFiles(%q)", pattern)
	}
	return c, nil
}

func listFiles(pattern string) ([]string, error) {
	if st, err := os.Stat(pattern); err == nil && st.IsDir() {
		var paths []string
		err := filepath.WalkDir(pattern, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && slices.Contains(readableExts, strings.ToLower(filepath.Ext(p))) {
				paths = append(paths, p)
			}
			return nil
		})
		if err != nil {
			return nil, errors.Wrapf(err, "listing directory %q", pattern)
		}
		if len(paths) == 0 {
			return nil, errors.Errorf("directory %q holds no %v files", pattern, readableExts)
		}
		slices.Sort(paths)
		return paths, nil
	}
	paths, err := filepath.Glob(pattern)
	if err != nil {
		return nil, errors.Wrapf(err, "bad glob pattern %q", pattern)
	}
	if len(paths) == 0 {
		return nil, errors.Errorf("no files match %q", pattern)
	}
	for _, p := range paths {
		if !slices.Contains(readableExts, strings.ToLower(filepath.Ext(p))) {
			return nil, errors.Errorf("file %q has an unknown extension, want one of %v", p, readableExts)
		}
	}
	slices.Sort(paths)
	return paths, nil
}
