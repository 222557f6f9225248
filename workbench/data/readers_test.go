package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// fineWebRow mimics the FineWeb-Edu schema (text plus metadata columns).
type fineWebRow struct {
	Text     *string `parquet:"text,optional"`
	ID       string  `parquet:"id"`
	URL      string  `parquet:"url"`
	Score    float64 `parquet:"score"`
	IntScore int64   `parquet:"int_score"`
}

// writeParquet writes texts ("" becomes a null) in row groups of 3 rows.
func writeParquet(t *testing.T, path string, texts []string) string {
	t.Helper()
	rows := make([]fineWebRow, len(texts))
	for i, tx := range texts {
		rows[i] = fineWebRow{ID: "id" + tx, URL: "https://example.org/" + tx, Score: 3.5, IntScore: int64(i)}
		if tx != "" {
			rows[i].Text = &texts[i]
		}
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, parquet.WriteFile(path, rows, parquet.MaxRowsPerRowGroup(3)))
	return path
}

func TestReadText(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, filepath.Join(dir, "a.txt"), "Hello world.\n\nSecond paragraph.\n")
	c, err := ReadText(p)
	require.NoError(t, err)
	require.Equal(t, []string{"Hello world.", "Second paragraph."}, c.Texts) // SplitText's paragraphs

	_, err = ReadText(filepath.Join(dir, "missing.txt"))
	require.ErrorContains(t, err, "missing.txt")
	_, err = ReadText(writeFile(t, filepath.Join(dir, "blank.txt"), " \n\t\n"))
	require.ErrorContains(t, err, `"`+filepath.Join(dir, "blank.txt")+`" is empty`)
	_, err = ReadText(writeFile(t, filepath.Join(dir, "bin.txt"), "ok\xff\xfe"))
	require.ErrorContains(t, err, "not valid UTF-8 (first bad byte at offset 2)")
}

func TestReadJSONL(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, filepath.Join(dir, "d.jsonl"),
		`{"text": "first doc", "id": 1}`+"\n\n"+`{"text": "", "id": 2}`+"\n"+`{"body": "x", "text": "third \"quoted\""}`)
	c, err := ReadJSONL(p, ReadConfig{})
	require.NoError(t, err)
	require.Equal(t, []string{"first doc", `third "quoted"`}, c.Texts)

	c, err = ReadJSONL(p, ReadConfig{Field: "body"})
	require.Nil(t, c)
	require.ErrorContains(t, err, `d.jsonl:1: no field "body"`)

	c, err = ReadJSONL(p, ReadConfig{MaxDocs: 1})
	require.NoError(t, err)
	require.Equal(t, []string{"first doc"}, c.Texts)

	bad := writeFile(t, filepath.Join(dir, "bad.jsonl"), "{\"text\": \"a\"}\n{\"text\": \"b\"}\n{\"text\": \"c\"\n")
	_, err = ReadJSONL(bad, ReadConfig{})
	require.ErrorContains(t, err, "bad.jsonl:3: not a JSON object")
	num := writeFile(t, filepath.Join(dir, "num.jsonl"), "{\"text\": 5}\n")
	_, err = ReadJSONL(num, ReadConfig{})
	require.ErrorContains(t, err, `num.jsonl:1: field "text" is not a string`)
	empty := writeFile(t, filepath.Join(dir, "empty.jsonl"), "\n\n")
	_, err = ReadJSONL(empty, ReadConfig{})
	require.ErrorContains(t, err, "holds no documents")
	_, err = ReadJSONL(filepath.Join(dir, "nope.jsonl"), ReadConfig{})
	require.ErrorContains(t, err, "nope.jsonl")
	_, err = ReadJSONL(p, ReadConfig{MaxDocs: -1})
	require.ErrorContains(t, err, "max_docs=-1")
}

func TestReadParquet(t *testing.T) {
	dir := t.TempDir()
	texts := []string{"alpha", "beta", "", "gamma", "delta", "epsilon", "zeta"}
	p := writeParquet(t, filepath.Join(dir, "shard.parquet"), texts)
	c, err := ReadParquet(p, ReadConfig{})
	require.NoError(t, err)
	require.Equal(t, []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}, c.Texts) // null skipped

	c, err = ReadParquet(p, ReadConfig{MaxDocs: 4})
	require.NoError(t, err)
	require.Equal(t, []string{"alpha", "beta", "gamma", "delta"}, c.Texts)
	c, err = ReadParquet(p, ReadConfig{MaxBytes: 9})
	require.NoError(t, err)
	require.Equal(t, []string{"alpha", "beta"}, c.Texts)

	c, err = ReadParquet(p, ReadConfig{Field: "url"})
	require.NoError(t, err)
	require.Len(t, c.Texts, len(texts))
	require.Equal(t, "https://example.org/alpha", c.Texts[0])

	_, err = ReadParquet(p, ReadConfig{Field: "content"})
	require.ErrorContains(t, err, `no column "content"`)
	require.ErrorContains(t, err, "int_score")
	_, err = ReadParquet(p, ReadConfig{Field: "int_score"})
	require.ErrorContains(t, err, "want a non-repeated string column")
	_, err = ReadParquet(filepath.Join(dir, "missing.parquet"), ReadConfig{})
	require.ErrorContains(t, err, "missing.parquet")

	// Corrupt files: random bytes, and a real file cut in half.
	_, err = ReadParquet(writeFile(t, filepath.Join(dir, "junk.parquet"), strings.Repeat("not parquet ", 20)), ReadConfig{})
	require.ErrorContains(t, err, "junk.parquet")
	raw, err := os.ReadFile(p)
	require.NoError(t, err)
	_, err = ReadParquet(writeFile(t, filepath.Join(dir, "cut.parquet"), string(raw[:len(raw)/2])), ReadConfig{})
	require.ErrorContains(t, err, "cut.parquet")

	nulls := writeParquet(t, filepath.Join(dir, "nulls.parquet"), []string{"", ""})
	_, err = ReadParquet(nulls, ReadConfig{})
	require.ErrorContains(t, err, "holds no non-empty values")
}

func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), "text one")
	writeFile(t, filepath.Join(dir, "b.jsonl"), `{"text": "json one"}`+"\n"+`{"text": "json two"}`)
	writeParquet(t, filepath.Join(dir, "sub", "c.parquet"), []string{"pq one", "pq two"})
	writeFile(t, filepath.Join(dir, "README.md"), "ignored in directory mode")

	c, err := ReadFiles(dir, ReadConfig{})
	require.NoError(t, err)
	require.Equal(t, []string{"text one", "json one", "json two", "pq one", "pq two"}, c.Texts)

	c, err = ReadFiles(filepath.Join(dir, "*.jsonl"), ReadConfig{})
	require.NoError(t, err)
	require.Equal(t, []string{"json one", "json two"}, c.Texts)

	c, err = ReadFiles(dir, ReadConfig{MaxDocs: 2}) // limits apply across files
	require.NoError(t, err)
	require.Equal(t, []string{"text one", "json one"}, c.Texts)

	_, err = ReadFiles(filepath.Join(dir, "*.md"), ReadConfig{})
	require.ErrorContains(t, err, "unknown extension")
	_, err = ReadFiles(filepath.Join(dir, "*.csv"), ReadConfig{})
	require.ErrorContains(t, err, "no files match")
	_, err = ReadFiles(filepath.Join(dir, "[x"), ReadConfig{})
	require.Error(t, err)
	emptyDir := t.TempDir()
	writeFile(t, filepath.Join(emptyDir, "notes.md"), "x")
	_, err = ReadFiles(emptyDir, ReadConfig{})
	require.ErrorContains(t, err, "holds no")
	writeFile(t, filepath.Join(dir, "z.jsonl"), "{oops}\n")
	_, err = ReadFiles(dir, ReadConfig{})
	require.ErrorContains(t, err, "z.jsonl:1")
}
