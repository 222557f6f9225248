package data

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// parquetFile assembles a Parquet file by hand: one row group holding one required BYTE_ARRAY column "text" in one
// uncompressed PLAIN data page, so that a test can put any claim into the page header or the footer. page and meta
// (either may be nil) edit the page header and the footer before they are encoded.
func parquetFile(texts []string, page func(*format.PageHeader), meta func(*format.FileMetaData)) []byte {
	var data []byte
	for _, s := range texts {
		data = binary.LittleEndian.AppendUint32(data, uint32(len(s)))
		data = append(data, s...)
	}
	h := format.PageHeader{Type: format.DataPage, UncompressedPageSize: int32(len(data)),
		CompressedPageSize: int32(len(data))}
	h.DataPageHeader.Valid = true
	h.DataPageHeader.V = format.DataPageHeader{NumValues: int32(len(texts)), Encoding: format.Plain,
		DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE}
	if page != nil {
		page(&h)
	}
	header := mustThrift(&h)
	chunk := int64(len(header) + len(data))
	var root, text format.SchemaElement
	root.Name = "schema"
	root.NumChildren.Valid, root.NumChildren.V = true, 1
	text.Name = "text"
	text.Type.Valid, text.Type.V = true, format.ByteArray
	text.RepetitionType.Valid, text.RepetitionType.V = true, format.Required
	n := int64(len(texts))
	m := format.FileMetaData{
		Version: 1,
		Schema:  []format.SchemaElement{root, text},
		NumRows: n,
		RowGroups: []format.RowGroup{{
			Columns: []format.ColumnChunk{{FileOffset: 4, MetaData: format.ColumnMetaData{
				Type: format.ByteArray, Encoding: []format.Encoding{format.Plain}, PathInSchema: []string{"text"},
				Codec: format.Uncompressed, NumValues: n, TotalUncompressedSize: chunk, TotalCompressedSize: chunk,
				DataPageOffset: 4,
			}}},
			TotalByteSize: chunk, NumRows: n,
		}},
	}
	if meta != nil {
		meta(&m)
	}
	var b bytes.Buffer
	b.WriteString("PAR1")
	b.Write(header)
	b.Write(data)
	return withFooter(b.Bytes(), mustThrift(&m))
}

// withFooter appends footer, its length and the closing magic to body (which starts with "PAR1").
func withFooter(body, footer []byte) []byte {
	out := append(bytes.Clone(body), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

func mustThrift(v any) []byte {
	b, err := thrift.Marshal(new(thrift.CompactProtocol), v)
	if err != nil {
		panic(err)
	}
	return b
}

// craftedParquet is a hostile or damaged Parquet file and a substring of its ReadParquet error ("" for a file that
// reads, with the texts in want).
type craftedParquet struct {
	name string
	file []byte
	err  string
}

func craftedParquetFiles() []craftedParquet {
	texts := []string{"hello", "world"}
	valid := parquetFile(texts, nil, nil)
	footerLen := func(n uint32) []byte {
		b := bytes.Clone(valid)
		binary.LittleEndian.PutUint32(b[len(b)-8:], n)
		return b
	}
	page := func(edit func(*format.PageHeader)) []byte { return parquetFile(texts, edit, nil) }
	chunk := func(edit func(*format.ColumnChunk)) []byte {
		return parquetFile(texts, nil, func(m *format.FileMetaData) { edit(&m.RowGroups[0].Columns[0]) })
	}
	return []craftedParquet{
		{"valid", valid, ""},
		{"footer length 2^32-1", footerLen(1<<32 - 1), "footer length 4294967295 exceeds"},
		{"footer length 1 GiB", footerLen(1 << 30), "footer length 1073741824 exceeds"},
		{"footer length one past the data", footerLen(uint32(len(valid) - 12 + 1)), "exceeds"},
		{"footer length 0", footerLen(0), "footer"},
		{"truncated in the middle", valid[:len(valid)/2], `want "PAR1" at both ends`},
		{"no leading magic", append([]byte("XXXX"), valid[4:]...), `magic "XXXX"`},
		{"encrypted footer magic", append(bytes.Clone(valid[:len(valid)-4]), "PARE"...), "encrypted"},
		{"only magic", []byte("PAR1PAR1"), "too short"},
		{"empty file", nil, "too short"},
		{"page compressed size 2^31-1", page(func(h *format.PageHeader) { h.CompressedPageSize = 1<<31 - 1 }),
			"compressed_page_size=2147483647"},
		{"page compressed size past the chunk", page(func(h *format.PageHeader) { h.CompressedPageSize += 8 }),
			"compressed_page_size=26, but 18 bytes"},
		{"page compressed size negative", page(func(h *format.PageHeader) { h.CompressedPageSize = -1 }),
			"compressed_page_size=-1"},
		{"page uncompressed size 2^31-1", page(func(h *format.PageHeader) { h.UncompressedPageSize = 1<<31 - 1 }),
			"uncompressed_page_size=2147483647"},
		{"page num_values 2^31-1", page(func(h *format.PageHeader) { h.DataPageHeader.V.NumValues = 1<<31 - 1 }),
			"page claims 2147483647 values"},
		{"page num_values 2^26", page(func(h *format.PageHeader) { h.DataPageHeader.V.NumValues = 1 << 26 }),
			"page claims 67108864 values"},
		{"page num_values 3 for 2 texts", page(func(h *format.PageHeader) { h.DataPageHeader.V.NumValues = 3 }),
			"the data pages hold 3 values, but the column chunk claims 2"},
		{"page statistics string 2^31-1", func() []byte {
			b := page(func(h *format.PageHeader) { h.DataPageHeader.V.Statistics.MaxValue = []byte("zz") })
			i := bytes.Index(b, []byte{0x02, 'z', 'z'}) // the length varint of "zz"
			return append(append(bytes.Clone(b[:i]), 0xff, 0xff, 0xff, 0xff, 0x07), b[i+1:]...)
		}(), "page header"},
		{"chunk size 2^62", chunk(func(c *format.ColumnChunk) { c.MetaData.TotalCompressedSize = 1 << 62 }),
			"lie outside the column data"},
		{"chunk offset negative", chunk(func(c *format.ColumnChunk) { c.MetaData.DataPageOffset = -100 }),
			"lie outside the column data"},
		{"chunk offset past end", chunk(func(c *format.ColumnChunk) { c.MetaData.DataPageOffset = 1 << 40 }),
			"lie outside the column data"},
		{"chunk in the footer", chunk(func(c *format.ColumnChunk) { c.MetaData.TotalCompressedSize += 8 }),
			"lie outside the column data"},
		{"chunk num_values larger", chunk(func(c *format.ColumnChunk) { c.MetaData.NumValues = 1 << 40 }),
			"column chunk claims 1099511627776"},
		{"chunk in another file", chunk(func(c *format.ColumnChunk) { c.FilePath = "other.parquet" }),
			"another file"},
		{"offset index length 2^31-1", chunk(func(c *format.ColumnChunk) {
			c.OffsetIndexOffset, c.OffsetIndexLength = 4, 1<<31-1
		}), ""}, // the page index is not read
		{"schema num_children 2^31-1", parquetFile(texts, nil, func(m *format.FileMetaData) {
			m.Schema[0].NumChildren.V = 1<<31 - 1
		}), "declares 2147483647 children"},
		{"num_rows 2^62", parquetFile(texts, nil, func(m *format.FileMetaData) {
			m.NumRows, m.RowGroups[0].NumRows = 1<<62, 1<<62
		}), ""}, // not used: the pages' counts are checked against the chunk's
		{"no column chunks", parquetFile(texts, nil, func(m *format.FileMetaData) { m.RowGroups[0].Columns = nil }),
			"column"},
		// FileMetaData: version = 1, then field 2 (schema) as a list of structs claiming 2^31-1 elements.
		{"footer list size 2^31-1", withFooter([]byte("PAR1"), []byte{0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07}),
			"claims 2147483647 elements"},
		// FileMetaData: version = 1, then field 6 (created_by) as a string claiming 2^31-1 bytes.
		{"footer string length 2^31-1", withFooter([]byte("PAR1"), []byte{0x15, 0x02, 0x58, 0xff, 0xff, 0xff, 0xff, 0x07}),
			"truncated"},
		// FileMetaData: version = 1, then an unknown field 100 holding structs nested 100,000 deep (5,000,000 made
		// parquet-go overflow its stack).
		{"footer nested structs", withFooter([]byte("PAR1"), append([]byte{0x15, 0x02, 0x0c, 0xc8, 0x01},
			bytes.Repeat([]byte{0x1c}, 100_000)...)), "nested more than 64 deep"},
		{"footer unknown thrift type", withFooter([]byte("PAR1"), []byte{0x15, 0x02, 0x1e, 0x00}), "unknown thrift type 14"},
		{"footer overlong varint", withFooter([]byte("PAR1"), append([]byte{0x15}, bytes.Repeat([]byte{0xff}, 11)...)),
			"varint"},
	}
}

// TestReadParquet_Crafted reads each crafted file: a valid one reads, every other is an error naming the file and
// the problem, never a panic or an allocation the file cannot back.
func TestReadParquet_Crafted(t *testing.T) {
	dir := t.TempDir()
	for _, c := range craftedParquetFiles() {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".parquet")
		if err := os.WriteFile(path, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		corpus, err := ReadParquet(path, ReadConfig{})
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %+v", c.name, err)
			} else if strings.Join(corpus.Texts, "|") != "hello|world" {
				t.Errorf("%s: texts %q", c.name, corpus.Texts)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: ReadParquet succeeded with %q", c.name, corpus.Texts)
			continue
		}
		for _, want := range []string{c.err, path} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, want)
			}
		}
	}
}

// TestWalkThrift_Lengths checks walkThrift's length against encoded page headers and that it rejects each
// truncation of one.
func TestWalkThrift_Lengths(t *testing.T) {
	var h format.PageHeader
	h.Type, h.CompressedPageSize, h.UncompressedPageSize, h.CRC = format.DataPage, 300, 70000, -5
	h.DataPageHeader.Valid = true
	h.DataPageHeader.V.NumValues = 12345
	h.DataPageHeader.V.Statistics.MaxValue = []byte(strings.Repeat("m", 200))
	h.DataPageHeader.V.Statistics.NullCount = 3
	b := mustThrift(&h)
	n, err := walkThrift(append(bytes.Clone(b), 0xaa, 0xbb)) // trailing bytes are not the struct's
	if err != nil || n != len(b) {
		t.Fatalf("walkThrift = %d, %v; want %d", n, err, len(b))
	}
	for i := range b {
		if _, err := walkThrift(b[:i]); err == nil {
			t.Errorf("walkThrift accepted the first %d of %d bytes", i, len(b))
		}
	}
}

// TestWalkThrift_MemoryBudget checks the decoded-memory bound at its boundary: a struct holding one list of n empty
// structs is charged n·thriftStructBytes.
func TestWalkThrift_MemoryBudget(t *testing.T) {
	listOf := func(n int) []byte {
		b := binary.AppendUvarint([]byte{0x19, 0xfc}, uint64(n)) // field 1: a list of structs, long-form size
		return append(b, make([]byte, n+1)...)                   // n empty structs, then the outer stop
	}
	n := maxThriftMemory / thriftStructBytes
	if _, err := walkThrift(listOf(n)); err != nil {
		t.Errorf("%d structs: %v", n, err)
	}
	if _, err := walkThrift(listOf(n + 1)); err == nil || !strings.Contains(err.Error(), "memory") {
		t.Errorf("%d structs: err = %v, want the memory bound", n+1, err)
	}
}

// FuzzReadParquet feeds arbitrary bytes to the Parquet reader: it must return texts or an error, never panic, and
// every text it returns is non-empty.
func FuzzReadParquet(f *testing.F) {
	// Files as parquet-go writes them: the FineWeb-like schema, a null, row groups of 3 rows.
	text := "doc a"
	rows := []fineWebRow{{Text: &text, ID: "a"}, {ID: "b"}, {Text: &text, ID: "c"}, {Text: &text, Score: 1.5}}
	for _, n := range []int{1, len(rows)} {
		var buf bytes.Buffer
		if err := parquet.Write(&buf, rows[:n], parquet.MaxRowsPerRowGroup(3)); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	for _, c := range craftedParquetFiles() {
		f.Add(c.file)
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		c := &Corpus{}
		err := readParquetFrom(bytes.NewReader(file), int64(len(file)), "fuzz.parquet", "text", c, &limiter{})
		if err != nil {
			return
		}
		for i, s := range c.Texts {
			if s == "" {
				t.Fatalf("text %d is empty", i)
			}
		}
	})
}

// craftedJSONL are hostile or damaged JSONL files and a substring of each one's ReadJSONL error ("" for a file that
// reads, with its texts joined by "|" in texts).
var craftedJSONL = []struct{ name, file, err, texts string }{
	{"valid", "{\"text\": \"a\"}\n{\"text\": \"b\"}\n", "", "a|b"},
	{"CRLF line ends", "{\"text\": \"a\"}\r\n{\"text\": \"b\"}\r\n", "", "a|b"},
	{"no final newline", "{\"text\": \"a\"}", "", "a"},
	{"null text skipped", "{\"text\": null}\n{\"text\": \"b\"}\n", "", "b"},
	{"escaped lone surrogate", `{"text": "a\ud800b"}`, "", "a\ufffdb"},
	{"duplicate key, the last wins", `{"text": "a", "text": "b"}`, "", "b"},
	{"null line", "{\"text\": \"a\"}\nnull\n", "x.jsonl:2: not a JSON object: null", ""},
	{"array line", "[\"text\"]\n", "x.jsonl:1: not a JSON object", ""},
	{"string line", "\"text\"\n", "x.jsonl:1: not a JSON object", ""},
	{"number text", "{\"text\": 5}\n", `x.jsonl:1: field "text" is not a string`, ""},
	{"object text", "{\"text\": {\"a\": 1}}\n", `x.jsonl:1: field "text" is not a string`, ""},
	{"missing field", "{\"body\": \"a\"}\n", `x.jsonl:1: no field "text"`, ""},
	{"invalid UTF-8 in the text", "{\"text\": \"a\"}\n{\"text\": \"a\xffb\"}\n", "x.jsonl:2: not valid UTF-8 (first bad byte at column 12)", ""},
	{"invalid UTF-8 outside strings", "{\"text\": \"a\"}\xc3\n", "x.jsonl:1: not valid UTF-8", ""},
	{"truncated line", "{\"text\": \"a\"}\n{\"text\": \"b", "x.jsonl:2: not a JSON object", ""},
	{"two objects on a line", "{\"text\": \"a\"}{\"text\": \"b\"}\n", "x.jsonl:1: not a JSON object", ""},
	{"byte order mark", "\ufeff{\"text\": \"a\"}\n", "x.jsonl:1: not a JSON object", ""},
	{"binary", "\x00\x01\x02\x03", "x.jsonl:1: not a JSON object", ""},
	{"deep nesting", `{"text": "a", "x": ` + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + "}",
		"x.jsonl:1: not a JSON object", ""},
	{"empty file", "", "holds no documents", ""},
	{"blank lines only", "\n \n\t\n", "holds no documents", ""},
	{"empty texts only", "{\"text\": \"\"}\n", "holds no documents", ""},
}

// TestReadJSONL_Crafted reads each crafted file through ReadJSONL.
func TestReadJSONL_Crafted(t *testing.T) {
	dir := t.TempDir()
	for _, c := range craftedJSONL {
		path := filepath.Join(dir, "x.jsonl")
		if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		corpus, err := ReadJSONL(path, ReadConfig{})
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %+v", c.name, err)
			} else if got := strings.Join(corpus.Texts, "|"); got != c.texts {
				t.Errorf("%s: texts %q, want %q", c.name, got, c.texts)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.err)
		}
	}
}

// FuzzReadJSONL feeds arbitrary bytes to the JSONL reader: it must return texts or an error, never panic; every
// text is non-empty valid UTF-8, and there are no more texts than lines.
func FuzzReadJSONL(f *testing.F) {
	for _, c := range craftedJSONL {
		f.Add([]byte(c.file))
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		c := &Corpus{}
		if err := readJSONLFrom(bytes.NewReader(file), "fuzz.jsonl", "text", c, &limiter{}); err != nil {
			return
		}
		if lines := bytes.Count(file, []byte{'\n'}) + 1; len(c.Texts) > lines {
			t.Fatalf("%d texts from %d lines", len(c.Texts), lines)
		}
		for i, s := range c.Texts {
			if s == "" || !utf8.ValidString(s) {
				t.Fatalf("text %d = %q", i, s)
			}
		}
	})
}
