package data

import (
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/pkg/errors"
)

// ReadParquet reads one document per row from the string column cfg.Field (default "text") of a Parquet file,
// such as a FineWeb-Edu shard. Only that column is decoded; null and empty values are skipped. Errors: missing or
// corrupt file, missing, repeated or non-string column, no documents. Before parquet-go decodes anything, the footer
// and the column's page headers are checked against the file's size and against bounds on page sizes (256 MiB),
// values per page (2^24) and footer memory (parquetcheck.go), so that no file makes it allocate what the file
// cannot back; encrypted files are not supported.
func ReadParquet(path string, cfg ReadConfig) (*Corpus, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Corpus{Source: path}
	if err := readParquet(path, cfg.field(), c, &limiter{cfg: cfg}); err != nil {
		return nil, err
	}
	if len(c.Texts) == 0 {
		return nil, errors.Errorf("parquet file %q holds no non-empty values in column %q", path, cfg.field())
	}
	return c, nil
}

func readParquet(path, column string, c *Corpus, lim *limiter) (err error) {
	f, err := os.Open(path)
	if err != nil {
		return errors.Wrapf(err, "opening parquet file %q", path)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return errors.Wrapf(err, "stat parquet file %q", path)
	}
	return readParquetFrom(f, st.Size(), path, column, c, lim)
}

// readParquetFrom is readParquet on the size bytes of f, named path in errors.
func readParquetFrom(f io.ReaderAt, size int64, path, column string, c *Corpus, lim *limiter) (err error) {
	// parquet-go may panic on some malformed inputs; report those as errors about the file.
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("parquet file %q is corrupt: %v", path, r)
		}
	}()
	dataEnd, err := checkParquetFooter(f, size)
	if err != nil {
		return errors.WithMessagef(err, "parquet file %q is corrupt or not a parquet file", path)
	}
	// The page index and bloom filters are not needed to read a column from start to end, and are more claims.
	pf, err := parquet.OpenFile(f, size, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return errors.Wrapf(err, "parquet file %q is corrupt or not a parquet file", path)
	}
	leaf, ok := pf.Schema().Lookup(column)
	if !ok {
		var cols []string
		for _, p := range pf.Schema().Columns() {
			cols = append(cols, strings.Join(p, "."))
		}
		return errors.Errorf("parquet file %q has no column %q (columns: %v)", path, column, cols)
	}
	if leaf.MaxRepetitionLevel > 0 || leaf.Node.Type().Kind() != parquet.ByteArray {
		return errors.Errorf("parquet file %q: column %q is %s, want a non-repeated string column",
			path, column, leaf.Node.Type())
	}
	buf := make([]parquet.Value, 256)
	for gi, rg := range pf.RowGroups() {
		if cols := pf.Metadata().RowGroups[gi].Columns; len(cols) <= leaf.ColumnIndex {
			return errors.Errorf("parquet file %q: row group %d has %d column chunks, want one per column",
				path, gi, len(cols))
		}
		if err := checkParquetChunk(f, dataEnd, &pf.Metadata().RowGroups[gi].Columns[leaf.ColumnIndex]); err != nil {
			return errors.WithMessagef(err, "parquet file %q: column %q of row group %d is corrupt", path, column, gi)
		}
		pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		done, err := readPages(pages, buf, c, lim)
		_ = pages.Close()
		if err != nil {
			return errors.Wrapf(err, "parquet file %q: reading column %q of row group %d", path, column, gi)
		}
		if done {
			return nil
		}
	}
	return nil
}

// readPages appends the non-empty string values of one column chunk; done reports that the limits were reached.
func readPages(pages parquet.Pages, buf []parquet.Value, c *Corpus, lim *limiter) (done bool, err error) {
	for {
		page, err := pages.ReadPage()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		values := page.Values()
		for {
			n, err := values.ReadValues(buf)
			for _, v := range buf[:n] {
				if v.IsNull() || len(v.ByteArray()) == 0 {
					continue
				}
				text := string(v.ByteArray()) // copies out of the page buffer
				c.Texts = append(c.Texts, text)
				if !lim.add(text) {
					parquet.Release(page)
					return true, nil
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				parquet.Release(page)
				return false, err
			}
		}
		parquet.Release(page)
	}
}
