package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"os"
	"sort"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"
)

// MaxHeaderBytes bounds the JSON header Load accepts (100 MB, the limit of the reference implementation); a larger
// length field means a corrupt or foreign file.
const MaxHeaderBytes = 100 << 20

// metadataKey is the reserved header entry holding the string-to-string metadata.
const metadataKey = "__metadata__"

// safetensors dtype names and their gomlx dtypes.
var (
	dtypeByName = map[string]dtypes.DType{
		"F64": dtypes.Float64, "F32": dtypes.Float32, "F16": dtypes.Float16, "BF16": dtypes.BFloat16,
		"I64": dtypes.Int64, "I32": dtypes.Int32, "I16": dtypes.Int16, "I8": dtypes.Int8,
		"U64": dtypes.Uint64, "U32": dtypes.Uint32, "U16": dtypes.Uint16, "U8": dtypes.Uint8,
		"BOOL": dtypes.Bool,
	}
	nameByDType = func() map[dtypes.DType]string {
		m := make(map[dtypes.DType]string, len(dtypeByName))
		for name, dt := range dtypeByName {
			m[dt] = name
		}
		return m
	}()
)

// headerEntry is one tensor's record in the JSON header.
type headerEntry struct {
	DType       string  `json:"dtype"`
	Shape       []int   `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"` // [begin, end]; a []int64 so that Load sees a third element
}

// hostIsLittleEndian reports whether tensor memory already has the file's byte order.
var hostIsLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Save writes tensors and metadata (nil for none) to path in the safetensors format, atomically. Tensor names must be
// non-empty and must not be "__metadata__"; nil tensors and unsupported dtypes are errors naming the tensor.
func Save(path string, tensorsByName map[string]*tensors.Tensor, metadata map[string]string) error {
	if !hostIsLittleEndian {
		return errors.Errorf("store.Save %s: big-endian hosts are not supported", path)
	}
	names := make([]string, 0, len(tensorsByName))
	for name := range tensorsByName {
		names = append(names, name)
	}
	sort.Strings(names)

	header := make(map[string]any, len(names)+1)
	var offset int64
	for _, name := range names {
		t := tensorsByName[name]
		switch {
		case name == "":
			return errors.Errorf("store.Save %s: empty tensor name", path)
		case name == metadataKey:
			return errors.Errorf("store.Save %s: tensor name %q is reserved for metadata", path, name)
		case t == nil:
			return errors.Errorf("store.Save %s: tensor %q is nil", path, name)
		}
		shape := t.Shape()
		dtName, ok := nameByDType[shape.DType]
		if !ok {
			return errors.Errorf("store.Save %s: tensor %q has dtype %s, which safetensors (as implemented here) "+
				"does not support", path, name, shape.DType)
		}
		size := int64(shape.Memory())
		dims := shape.Dimensions
		if dims == nil {
			dims = []int{} // a scalar: "shape": []
		}
		header[name] = headerEntry{DType: dtName, Shape: dims, DataOffsets: []int64{offset, offset + size}}
		offset += size
	}
	if len(metadata) > 0 {
		header[metadataKey] = metadata
	}
	headerJSON, err := json.Marshal(header) // map keys come out sorted: deterministic files
	if err != nil {
		return errors.Wrapf(err, "store.Save %s: encoding header", path)
	}
	// Pad with spaces so the data buffer starts 8-byte aligned, as the reference writer does.
	if pad := (8 - len(headerJSON)%8) % 8; pad > 0 {
		headerJSON = append(headerJSON, bytes.Repeat([]byte{' '}, pad)...)
	}

	return WriteFileAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		var lenBytes [8]byte
		binary.LittleEndian.PutUint64(lenBytes[:], uint64(len(headerJSON)))
		if _, err := bw.Write(lenBytes[:]); err != nil {
			return err
		}
		if _, err := bw.Write(headerJSON); err != nil {
			return err
		}
		for _, name := range names {
			t := tensorsByName[name]
			if t.Size() == 0 {
				continue
			}
			var werr error
			if err := t.ConstBytes(func(data []byte) { _, werr = bw.Write(data) }); err != nil {
				return errors.Wrapf(err, "reading tensor %q", name)
			}
			if werr != nil {
				return werr
			}
		}
		return bw.Flush()
	})
}

// Load reads a safetensors file written by Save or by any other safetensors writer. It returns the tensors (local,
// on the host) and the metadata (an empty map when the file has none). See the package documentation for the checks;
// every error names the file and, where there is one, the tensor.
func Load(path string) (map[string]*tensors.Tensor, map[string]string, error) {
	if !hostIsLittleEndian {
		return nil, nil, errors.Errorf("store.Load %s: big-endian hosts are not supported", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, errors.Wrapf(err, "store.Load")
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, errors.Wrapf(err, "store.Load %s", path)
	}
	out, metadata, err := load(f, info.Size())
	if err != nil {
		return nil, nil, errors.Wrapf(err, "store.Load %s", path)
	}
	return out, metadata, nil
}

// load is Load on the fileSize bytes of f. Nothing is allocated before the header's sizes have been checked
// against fileSize.
func load(f io.ReaderAt, fileSize int64) (map[string]*tensors.Tensor, map[string]string, error) {
	entries, metadata, dataStart, err := readHeader(f, fileSize)
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string]*tensors.Tensor, len(entries))
	for _, e := range entries {
		t := tensors.FromShape(e.shape)
		if t.Size() > 0 {
			var rerr error
			if err := t.MutableBytes(func(data []byte) {
				if _, rerr = f.ReadAt(data, dataStart+e.begin); rerr == nil && e.shape.DType == dtypes.Bool {
					rerr = checkBools(data)
				}
			}); err != nil {
				return nil, nil, errors.Wrapf(err, "tensor %q", e.name)
			}
			if rerr != nil {
				return nil, nil, errors.Wrapf(rerr, "reading tensor %q", e.name)
			}
		}
		out[e.name] = t
	}
	return out, metadata, nil
}

// checkBools returns an error for a BOOL byte other than 0 or 1, which Go's bool cannot hold.
func checkBools(data []byte) error {
	for i, b := range data {
		if b > 1 {
			return errors.Errorf("BOOL element %d is byte %d, want 0 or 1", i, b)
		}
	}
	return nil
}

// ReadHeader returns the shapes of a safetensors file's tensors and its metadata without reading the data; it runs
// the same checks as Load.
func ReadHeader(path string) (map[string]shapes.Shape, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, errors.Wrapf(err, "store.ReadHeader")
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, errors.Wrapf(err, "store.ReadHeader %s", path)
	}
	entries, metadata, _, err := readHeader(f, info.Size())
	if err != nil {
		return nil, nil, errors.Wrapf(err, "store.ReadHeader %s", path)
	}
	out := make(map[string]shapes.Shape, len(entries))
	for _, e := range entries {
		out[e.name] = e.shape
	}
	return out, metadata, nil
}

// entry is a validated header record.
type entry struct {
	name       string
	shape      shapes.Shape
	begin, end int64 // offsets into the data buffer
}

// readHeader reads and validates the header of a file of the given size. It returns the entries sorted by offset
// and the absolute file offset of the data buffer.
func readHeader(f io.ReaderAt, fileSize int64) ([]entry, map[string]string, int64, error) {
	if fileSize < 8 {
		return nil, nil, 0, errors.Errorf("truncated file: %d bytes, shorter than the 8-byte header length", fileSize)
	}
	var lenBytes [8]byte
	if _, err := f.ReadAt(lenBytes[:], 0); err != nil {
		return nil, nil, 0, errors.Wrap(err, "reading header length")
	}
	n := binary.LittleEndian.Uint64(lenBytes[:])
	if n > MaxHeaderBytes {
		return nil, nil, 0, errors.Errorf("header length %d exceeds the %d-byte limit (not a safetensors file?)",
			n, MaxHeaderBytes)
	}
	if int64(n) > fileSize-8 {
		return nil, nil, 0, errors.Errorf("header length %d runs past the end of the file (%d bytes): truncated file",
			n, fileSize)
	}
	headerBytes := make([]byte, n)
	if _, err := f.ReadAt(headerBytes, 8); err != nil {
		return nil, nil, 0, errors.Wrap(err, "reading header")
	}
	raw, err := decodeHeaderObject(headerBytes)
	if err != nil {
		return nil, nil, 0, err
	}
	dataStart := 8 + int64(n)
	dataSize := fileSize - dataStart

	metadata := map[string]string{}
	entries := make([]entry, 0, len(raw))
	for name, msg := range raw {
		if name == metadataKey {
			if err := json.Unmarshal(msg, &metadata); err != nil {
				return nil, nil, 0, errors.Wrapf(err, "%s must be an object of strings", metadataKey)
			}
			if metadata == nil { // "__metadata__": null
				metadata = map[string]string{}
			}
			continue
		}
		e, err := validateEntry(name, msg, dataSize)
		if err != nil {
			return nil, nil, 0, err
		}
		entries = append(entries, e)
	}
	// The byte ranges must tile the data buffer: no overlaps, no holes, nothing left over.
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].begin != entries[j].begin {
			return entries[i].begin < entries[j].begin
		}
		return entries[i].end < entries[j].end
	})
	var pos int64
	for i, e := range entries {
		if e.begin < pos {
			return nil, nil, 0, errors.Errorf("tensor %q: data_offsets [%d, %d] overlap tensor %q (ends at %d)",
				e.name, e.begin, e.end, entries[i-1].name, pos)
		}
		if e.begin > pos {
			return nil, nil, 0, errors.Errorf("tensor %q: data_offsets [%d, %d] leave a hole at [%d, %d)",
				e.name, e.begin, e.end, pos, e.begin)
		}
		pos = e.end
	}
	if pos != dataSize {
		return nil, nil, 0, errors.Errorf("data buffer has %d bytes but the tensors cover %d: truncated or "+
			"trailing data", dataSize, pos)
	}
	return entries, metadata, dataStart, nil
}

// decodeHeaderObject parses the header JSON as an object, rejecting duplicate names (which a plain map decode would
// silently merge).
func decodeHeaderObject(headerBytes []byte) (map[string]json.RawMessage, error) {
	trimmed := bytes.TrimRight(headerBytes, " ")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errors.New("header is not a JSON object (must start with '{')")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil {
		return nil, errors.Wrap(err, "header is not valid JSON")
	}
	raw := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.Wrap(err, "header is not valid JSON")
		}
		name, _ := tok.(string)
		var msg json.RawMessage
		if err := dec.Decode(&msg); err != nil {
			return nil, errors.Wrapf(err, "header is not valid JSON (at entry %q)", name)
		}
		if _, dup := raw[name]; dup {
			return nil, errors.Errorf("header has a duplicate entry %q", name)
		}
		raw[name] = msg
	}
	if _, err := dec.Token(); err != nil {
		return nil, errors.Wrap(err, "header is not valid JSON")
	}
	if dec.More() {
		return nil, errors.New("header has trailing data after the JSON object")
	}
	return raw, nil
}

// validateEntry checks one tensor record against the data buffer size.
func validateEntry(name string, msg json.RawMessage, dataSize int64) (entry, error) {
	var h headerEntry
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return entry{}, errors.Wrapf(err, "tensor %q: invalid header record %s", name, msg)
	}
	dt, ok := dtypeByName[h.DType]
	if !ok {
		return entry{}, errors.Errorf("tensor %q: unknown or unsupported dtype %q", name, h.DType)
	}
	if len(h.DataOffsets) != 2 {
		return entry{}, errors.Errorf("tensor %q: data_offsets %v has %d values, want [begin, end]",
			name, h.DataOffsets, len(h.DataOffsets))
	}
	begin, end := h.DataOffsets[0], h.DataOffsets[1]
	if begin < 0 || end < begin || end > dataSize {
		return entry{}, errors.Errorf("tensor %q: data_offsets [%d, %d] out of range (data buffer has %d bytes)",
			name, begin, end, dataSize)
	}
	if h.Shape == nil { // "shape": [] decodes to an empty slice, a missing or null shape to nil
		return entry{}, errors.Errorf("tensor %q: no shape (a scalar has \"shape\": [])", name)
	}
	for _, d := range h.Shape {
		if d < 0 {
			return entry{}, errors.Errorf("tensor %q: negative dimension in shape %v", name, h.Shape)
		}
	}
	want, ok := tensorBytes(h.Shape, dt.Size())
	if !ok {
		return entry{}, errors.Errorf("tensor %q: shape %v of %s is too large: its byte size overflows int64",
			name, h.Shape, h.DType)
	}
	if end-begin != want {
		return entry{}, errors.Errorf("tensor %q: data_offsets [%d, %d] span %d bytes, but %s%v needs %d",
			name, begin, end, end-begin, h.DType, h.Shape, want)
	}
	return entry{name: name, shape: shapes.Make(dt, h.Shape...), begin: begin, end: end}, nil
}

// tensorBytes returns the byte size of a tensor with non-negative dimensions dims and elements of elemSize bytes,
// and false when the size overflows int64. Each multiplication is checked before it is done, so no product wraps.
// The dimensions other than zeros must multiply without overflow even when a zero makes the size 0, so that no
// loaded shape has a wrapping element count.
func tensorBytes(dims []int, elemSize int) (int64, bool) {
	size, zero := int64(elemSize), false
	for _, d := range dims {
		if d == 0 {
			zero = true
			continue
		}
		if int64(d) > math.MaxInt64/size {
			return 0, false
		}
		size *= int64(d)
	}
	if zero {
		return 0, true
	}
	return size, true
}
