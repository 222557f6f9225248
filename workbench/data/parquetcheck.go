package data

import (
	"bytes"
	"encoding/binary"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pkg/errors"
)

// Bounds on what a Parquet file may claim. parquet-go allocates what the footer and the page headers claim before
// it reads the bytes behind the claim (a 4 GiB footer, a list of 2^31 row groups, 2^31 values in a page), and
// recurses once per nested Thrift struct; checkParquetFooter and checkParquetChunk test every such claim against
// these bounds and against the file's size first.
const (
	// maxParquetPageBytes bounds a page's compressed and uncompressed sizes. Writers cut pages at about 1 MiB, and a
	// page exceeds that only by one oversized value (a document of hundreds of megabytes is not text for a corpus).
	maxParquetPageBytes = 256 << 20
	// maxParquetPageValues bounds the values (nulls included) of one page or dictionary; parquet-go allocates about
	// 5 bytes per value for levels and offsets. Writers emit at most 20,000 rows per page by default.
	maxParquetPageValues = 1 << 24
	// maxThriftMemory bounds the memory, estimated from the container sizes, that decoding one footer or page
	// header takes: a struct element counts as thriftStructBytes, a bound on the Go size of any parquet-format
	// struct (the largest, ColumnChunk, has 560 bytes), other elements as 24 bytes, and binary values as their
	// length. A footer of 100,000 column chunks, each with a few encoding statistics, stays under it.
	maxThriftMemory   = 512 << 20
	thriftStructBytes = 1024
	// maxThriftDepth bounds the nesting of Thrift structs and containers; the Parquet format nests about 6 deep.
	maxThriftDepth = 64
	// pageHeaderWindow is the first read of a page header; headers carrying long statistics need more.
	pageHeaderWindow = 4 << 10
)

// parquetMagic starts and ends every unencrypted Parquet file.
const parquetMagic = "PAR1"

// checkParquetFooter checks the framing of a Parquet file of the given size (leading and trailing magic, a footer
// length inside the file) and walks its Thrift footer without decoding it, so that parquet-go never sees a claim
// that the bytes cannot back. It returns the offset where the footer starts: every column chunk lies before it.
func checkParquetFooter(f io.ReaderAt, size int64) (int64, error) {
	const frame = 4 + 4 + 4 // "PAR1", footer length, "PAR1"
	if size < frame {
		return 0, errors.Errorf("%d bytes is too short for a parquet file (at least %d)", size, frame)
	}
	var head [4]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return 0, errors.Wrap(err, "reading the leading magic")
	}
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return 0, errors.Wrap(err, "reading the footer length")
	}
	switch {
	case string(tail[4:]) == "PARE":
		return 0, errors.New("encrypted parquet files (magic \"PARE\") are not supported")
	case string(head[:]) != parquetMagic || string(tail[4:]) != parquetMagic:
		return 0, errors.Errorf("magic %q ... %q, want %q at both ends", head[:], tail[4:], parquetMagic)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-frame {
		return 0, errors.Errorf("footer length %d exceeds the %d bytes between the magic numbers: truncated or "+
			"corrupt file", n, size-frame)
	}
	start := size - 8 - n
	footer := make([]byte, n) // at most the file's size
	if _, err := f.ReadAt(footer, start); err != nil {
		return 0, errors.Wrap(err, "reading the footer")
	}
	if _, err := walkThrift(footer); err != nil {
		return 0, errors.WithMessage(err, "footer")
	}
	return start, nil
}

// checkParquetChunk checks the column chunk cc of a file whose column data ends at dataEnd (the footer's start):
// its byte range lies inside the data, and the page headers in it, walked one by one, tile it exactly, hold page
// sizes and value counts within the bounds above, and add up to the values the chunk claims. Only the headers are
// read. Call it before parquet-go reads the chunk's pages.
func checkParquetChunk(f io.ReaderAt, dataEnd int64, cc *format.ColumnChunk) error {
	if cc.FilePath != "" {
		return errors.Errorf("column chunk stored in another file (%q) is not supported", cc.FilePath)
	}
	md := &cc.MetaData
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 { // where parquet-go starts reading
		start = md.DictionaryPageOffset
	}
	if start < int64(len(parquetMagic)) || md.TotalCompressedSize < 0 || md.TotalCompressedSize > dataEnd-start {
		return errors.Errorf("column chunk bytes [%d, %d+%d) lie outside the column data [%d, %d)",
			start, start, md.TotalCompressedSize, len(parquetMagic), dataEnd)
	}
	if md.NumValues < 0 {
		return errors.Errorf("column chunk claims %d values", md.NumValues)
	}
	end := start + md.TotalCompressedSize
	var values int64 // in data pages, nulls included
	for pos, page := start, 0; pos < end; page++ {
		h, n, err := readPageHeader(f, pos, end)
		if err != nil {
			return errors.WithMessagef(err, "page %d at offset %d", page, pos)
		}
		if err := checkPageHeader(h, end-pos-int64(n)); err != nil {
			return errors.WithMessagef(err, "page %d at offset %d", page, pos)
		}
		if h.DataPageHeader.Valid {
			values += int64(h.DataPageHeader.V.NumValues)
		}
		if h.DataPageHeaderV2.Valid {
			values += int64(h.DataPageHeaderV2.V.NumValues)
		}
		pos += int64(n) + int64(h.CompressedPageSize)
	}
	if values != md.NumValues {
		return errors.Errorf("the data pages hold %d values, but the column chunk claims %d", values, md.NumValues)
	}
	return nil
}

// readPageHeader reads and decodes the page header at pos, which must end before end. It returns the header and
// its encoded length. The read window starts at pageHeaderWindow bytes and doubles while the header runs past it.
func readPageHeader(f io.ReaderAt, pos, end int64) (*format.PageHeader, int, error) {
	window := min(int64(pageHeaderWindow), end-pos)
	for {
		buf := make([]byte, window)
		if _, err := f.ReadAt(buf, pos); err != nil {
			return nil, 0, errors.Wrap(err, "reading the page header")
		}
		n, err := walkThrift(buf)
		if errors.Is(err, errThriftTruncated) && window < end-pos {
			window = min(2*window, end-pos)
			continue
		}
		if err != nil {
			return nil, 0, errors.WithMessage(err, "page header")
		}
		h := new(format.PageHeader)
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), buf[:n], h); err != nil {
			return nil, 0, errors.Wrap(err, "decoding the page header")
		}
		return h, n, nil
	}
}

// checkPageHeader checks the sizes and counts of one page header, followed by left bytes of the chunk.
func checkPageHeader(h *format.PageHeader, left int64) error {
	switch {
	case h.CompressedPageSize < 0 || int64(h.CompressedPageSize) > left:
		return errors.Errorf("compressed_page_size=%d, but %d bytes of the column chunk follow the header",
			h.CompressedPageSize, left)
	case h.CompressedPageSize > maxParquetPageBytes:
		return errors.Errorf("compressed_page_size=%d exceeds the %d-byte limit", h.CompressedPageSize,
			maxParquetPageBytes)
	case h.UncompressedPageSize < 0 || h.UncompressedPageSize > maxParquetPageBytes:
		return errors.Errorf("uncompressed_page_size=%d, want [0, %d]", h.UncompressedPageSize, maxParquetPageBytes)
	}
	var numValues int32
	switch {
	case h.DataPageHeader.Valid:
		numValues = h.DataPageHeader.V.NumValues
	case h.DictionaryPageHeader.Valid:
		numValues = h.DictionaryPageHeader.V.NumValues
	case h.DataPageHeaderV2.Valid:
		v2 := &h.DataPageHeaderV2.V
		numValues = v2.NumValues
		if v2.NumNulls < 0 || v2.NumNulls > v2.NumValues || v2.NumRows < 0 || v2.NumRows > v2.NumValues {
			return errors.Errorf("data page v2 claims %d values, %d nulls and %d rows", v2.NumValues, v2.NumNulls,
				v2.NumRows)
		}
		levels := int64(v2.RepetitionLevelsByteLength) + int64(v2.DefinitionLevelsByteLength)
		if v2.RepetitionLevelsByteLength < 0 || v2.DefinitionLevelsByteLength < 0 ||
			levels > int64(h.CompressedPageSize) {
			return errors.Errorf("data page v2 levels take %d + %d bytes of a %d-byte page",
				v2.RepetitionLevelsByteLength, v2.DefinitionLevelsByteLength, h.CompressedPageSize)
		}
	}
	if numValues < 0 || numValues > maxParquetPageValues {
		return errors.Errorf("page claims %d values, want [0, %d]", numValues, maxParquetPageValues)
	}
	return nil
}

// errThriftTruncated reports Thrift data that ends inside a value.
var errThriftTruncated = errors.New("thrift data truncated")

// walkThrift checks that b starts with one Thrift compact-protocol struct whose every length and element count fits
// in the bytes that follow it, whose nesting stays within maxThriftDepth and whose decoding takes at most
// maxThriftMemory (see there). It returns the struct's encoded length. It allocates nothing.
func walkThrift(b []byte) (int, error) {
	w := &thriftWalker{r: bytes.NewReader(b), budget: maxThriftMemory}
	if err := w.value(12, 0); err != nil {
		return 0, err
	}
	return len(b) - w.r.Len(), nil
}

// thriftWalker walks Thrift compact-protocol values (types: 1, 2 bool, 3 i8, 4 i16, 5 i32, 6 i64, 7 double,
// 8 binary, 9 list, 10 set, 11 map, 12 struct, 13 uuid).
type thriftWalker struct {
	r      *bytes.Reader
	budget int64 // bytes of decoded memory still allowed
}

func (w *thriftWalker) byte() (byte, error) {
	c, err := w.r.ReadByte()
	if err != nil {
		return 0, errThriftTruncated
	}
	return c, nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	v, err := binary.ReadUvarint(w.r)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return 0, errThriftTruncated
	case err != nil:
		return 0, errors.Wrap(err, "thrift varint")
	}
	return v, nil
}

func (w *thriftWalker) skip(n uint64) error {
	if n > uint64(w.r.Len()) {
		return errThriftTruncated
	}
	_, err := w.r.Seek(int64(n), io.SeekCurrent)
	return err
}

// spend checks that a container's n elements can each take at least one of the remaining bytes and charges
// their decoded size, n·cost + extra bytes, against the budget.
func (w *thriftWalker) spend(n uint64, cost, extra int64) error {
	if n > uint64(w.r.Len()) {
		return errors.Errorf("thrift container claims %d elements in %d remaining bytes", n, w.r.Len())
	}
	if w.budget -= int64(n)*cost + extra; w.budget < 0 {
		return errors.Errorf("thrift data would take more than %d bytes of memory to decode", maxThriftMemory)
	}
	return nil
}

// elemBytes is the decoded size charged for one container element of type t.
func elemBytes(t byte) int64 {
	if t == 12 {
		return thriftStructBytes
	}
	return 24
}

// value walks one value of type t. In a struct a boolean field has no value bytes (its type holds it); as a
// container element it takes a byte.
func (w *thriftWalker) value(t byte, depth int) error {
	switch t {
	case 1, 2, 3:
		return w.skip(1)
	case 4, 5, 6:
		_, err := w.uvarint()
		return err
	case 7:
		return w.skip(8)
	case 13:
		return w.skip(16)
	case 8:
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		if err := w.skip(n); err != nil {
			return err
		}
		return w.spend(0, 0, int64(n)) // the decoder copies the bytes
	}
	if depth >= maxThriftDepth {
		return errors.Errorf("thrift values nested more than %d deep", maxThriftDepth)
	}
	switch t {
	case 9, 10:
		h, err := w.byte()
		if err != nil {
			return err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.spend(n, elemBytes(h&0x0f), 0); err != nil {
			return err
		}
		for range n {
			if err := w.value(h&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11:
		n, err := w.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		if err := w.spend(n, elemBytes(kv>>4)+elemBytes(kv&0x0f), 0); err != nil {
			return err
		}
		for range n {
			if err := w.value(kv>>4, depth+1); err != nil {
				return err
			}
			if err := w.value(kv&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 12:
		for {
			h, err := w.byte()
			if err != nil {
				return err
			}
			if h == 0 {
				return nil
			}
			if h>>4 == 0 { // a long-form field id follows
				if _, err := w.uvarint(); err != nil {
					return err
				}
			}
			ft := h & 0x0f
			if ft == 1 || ft == 2 { // a boolean field holds its value in its type
				continue
			}
			if err := w.value(ft, depth+1); err != nil {
				return err
			}
		}
	}
	return errors.Errorf("unknown thrift type %d", t)
}
