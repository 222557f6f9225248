package tokenizer

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"

	"github.com/pkg/errors"
)

// FormatVersion is the version of the JSON format written by Save and MarshalJSON (see doc.go).
const FormatVersion = 1

// MaxVocabBytes bounds the total length of the byte strings the V tokens decode to, which FromJSON checks before
// building them: each merge may double the longest one, so a file of a few hundred bytes could otherwise claim
// terabytes. 64 MiB is hundreds of times what a 16k-token vocabulary trained on ordinary text needs.
const MaxVocabBytes = 64 << 20

// vocabBytesLimit is MaxVocabBytes; a variable so tests can shrink it.
var vocabBytesLimit int64 = MaxVocabBytes

// fileFormat is the JSON form of a Tokenizer.
type fileFormat struct {
	Version       int       `json:"version"`
	VocabSize     int       `json:"vocab_size"`
	Pretokenize   string    `json:"pretokenize"`
	SpecialTokens []string  `json:"special_tokens"`
	Merges        [][]int32 `json:"merges"` // [][2]int32 would silently drop a third element
}

// MarshalJSON returns the JSON form described in doc.go; it fails for a tokenizer whose tokens decode to more
// than MaxVocabBytes in total, which FromJSON would reject.
func (t *Tokenizer) MarshalJSON() ([]byte, error) {
	var total int64
	for _, p := range t.pieces {
		total += int64(len(p))
	}
	if total > vocabBytesLimit {
		return nil, errors.Errorf("tokenizer: the %d tokens decode to %d bytes in total, over the %d-byte limit "+
			"(MaxVocabBytes) that FromJSON accepts", len(t.pieces), total, vocabBytesLimit)
	}
	f := fileFormat{
		Version:       FormatVersion,
		VocabSize:     t.VocabSize(),
		Pretokenize:   t.pretokenize,
		SpecialTokens: t.specials,
		Merges:        make([][]int32, len(t.merges)),
	}
	if f.SpecialTokens == nil {
		f.SpecialTokens = []string{}
	}
	for r, m := range t.merges {
		f.Merges[r] = m[:]
	}
	return json.Marshal(f)
}

// FromJSON parses and validates the JSON form written by MarshalJSON or Save. It returns an error for
// malformed JSON, unknown fields, another version, an unknown pre-tokenization mode, invalid special
// tokens, a merge referring to an id not defined before it, a repeated merge, tokens whose byte strings
// would total more than MaxVocabBytes (checked before any is built), or a vocab_size that does not equal
// 256 + merges + special tokens. No input makes it panic (FuzzFromJSON).
func FromJSON(data []byte) (*Tokenizer, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("tokenizer: corrupt JSON: the file is empty")
	}
	var f fileFormat
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, errors.Wrap(err, "tokenizer: corrupt JSON")
	}
	if dec.More() {
		return nil, errors.New("tokenizer: corrupt JSON: trailing data after the object")
	}
	if f.Version != FormatVersion {
		return nil, errors.Errorf("tokenizer: version=%d, want %d", f.Version, FormatVersion)
	}
	if err := validatePretokenize(f.Pretokenize); err != nil {
		return nil, err
	}
	if err := validateSpecials(f.SpecialTokens); err != nil {
		return nil, err
	}
	if v := NumBytes + len(f.Merges) + len(f.SpecialTokens); v > math.MaxInt32 {
		return nil, errors.Errorf("tokenizer: 256 bytes + %d merges + %d special tokens = %d ids do not fit in int32",
			len(f.Merges), len(f.SpecialTokens), v)
	}
	seen := make(map[[2]int32]int, len(f.Merges))
	merges := make([][2]int32, len(f.Merges))
	// pieceLen[id] is the length of the bytes id decodes to; their sum is checked against MaxVocabBytes as it grows,
	// so no length can overflow (each is at most twice the limit).
	pieceLen := make([]int64, NumBytes, NumBytes+len(f.Merges))
	for b := range pieceLen {
		pieceLen[b] = 1
	}
	total := int64(NumBytes)
	for _, s := range f.SpecialTokens {
		total += int64(len(s))
	}
	for r, pair := range f.Merges {
		if len(pair) != 2 {
			return nil, errors.Errorf("tokenizer: merges[%d]=%v has %d ids, want a pair", r, pair, len(pair))
		}
		m := [2]int32{pair[0], pair[1]}
		merges[r] = m
		limit := int32(NumBytes + r)
		for _, id := range m {
			if id < 0 || id >= limit {
				return nil, errors.Errorf("tokenizer: merges[%d]=[%d,%d] refers to id %d, which is not defined "+
					"before it (want ids in [0, %d))", r, m[0], m[1], id, limit)
			}
		}
		if q, ok := seen[m]; ok {
			return nil, errors.Errorf("tokenizer: merges[%d]=[%d,%d] repeats merges[%d]", r, m[0], m[1], q)
		}
		seen[m] = r
		n := pieceLen[m[0]] + pieceLen[m[1]]
		pieceLen = append(pieceLen, n)
		if total += n; total > vocabBytesLimit {
			return nil, errors.Errorf("tokenizer: merges[%d]=[%d,%d] makes id %d decode to %d bytes, and the tokens "+
				"to at least %d bytes in total, over the %d-byte limit (MaxVocabBytes): corrupt or crafted file",
				r, m[0], m[1], NumBytes+r, n, total, vocabBytesLimit)
		}
	}
	if want := NumBytes + len(f.Merges) + len(f.SpecialTokens); f.VocabSize != want {
		return nil, errors.Errorf("tokenizer: vocab_size=%d, but 256 bytes + %d merges + %d special tokens = %d",
			f.VocabSize, len(f.Merges), len(f.SpecialTokens), want)
	}
	return newTokenizer(merges, f.SpecialTokens, f.Pretokenize), nil
}

// Save writes the tokenizer as JSON to path atomically: a temporary file in the same directory, then a rename.
func (t *Tokenizer) Save(path string) (err error) {
	data, err := t.MarshalJSON()
	if err != nil {
		return errors.Wrapf(err, "tokenizer.Save %q", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return errors.Wrapf(err, "tokenizer.Save %q", path)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o644); err != nil { // CreateTemp makes 0600 files
		return errors.Wrapf(err, "tokenizer.Save %q: chmod %q", path, tmp.Name())
	}
	if _, err = tmp.Write(append(data, '\n')); err != nil {
		return errors.Wrapf(err, "tokenizer.Save %q: writing %q", path, tmp.Name())
	}
	if err = tmp.Sync(); err != nil {
		return errors.Wrapf(err, "tokenizer.Save %q: syncing %q", path, tmp.Name())
	}
	if err = tmp.Close(); err != nil {
		return errors.Wrapf(err, "tokenizer.Save %q: closing %q", path, tmp.Name())
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return errors.Wrapf(err, "tokenizer.Save %q: renaming %q", path, tmp.Name())
	}
	return nil
}

// Load reads and validates a tokenizer saved by Save; errors name the file (see FromJSON for the checks).
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrapf(err, "tokenizer.Load %q", path)
	}
	t, err := FromJSON(data)
	if err != nil {
		return nil, errors.WithMessagef(err, "tokenizer.Load %q", path)
	}
	return t, nil
}
