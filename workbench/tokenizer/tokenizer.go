package tokenizer

import (
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkg/errors"
)

// Tokenizer is a trained byte-level BPE tokenizer. Ids: 0..255 bytes, 256..256+M-1 merges in the order
// learned, then the special tokens. It is safe for concurrent use.
type Tokenizer struct {
	merges      [][2]int32       // merge r creates id 256+r from the pair merges[r]
	ranks       map[uint64]int32 // pairKey(a, b) -> r
	pieces      [][]byte         // id -> bytes it decodes to (a special token decodes to its name)
	specials    []string
	specialIDs  map[string]int32
	pretokenize string

	mu         sync.Mutex
	cacheShort map[uint64]uint64 // packShort(chunk) -> span in cacheIDs, chunks up to 7 bytes
	cacheLong  map[string]uint64 // chunk -> span in cacheIDs, chunks of 8 .. maxCachedChunk bytes
	cacheIDs   []int32           // the cached ids, back to back
}

const (
	maxCachedChunk = 64 // longer chunks are rare and not cached; also bounds a cached span's length to 8 bits
	shortChunk     = 48 // chunks up to this length use the quadratic merge loop, longer ones a heap
)

// maxCacheEntries bounds the encoding cache, which is cleared when full; a variable so tests can shrink it.
var maxCacheEntries = 1 << 16

// newTokenizer builds a Tokenizer from validated merges (each id < 256 + its rank) and specials.
func newTokenizer(merges [][2]int32, specials []string, pretokenize string) *Tokenizer {
	t := &Tokenizer{
		merges:      merges,
		ranks:       make(map[uint64]int32, len(merges)),
		pieces:      make([][]byte, 0, NumBytes+len(merges)+len(specials)),
		specials:    append([]string(nil), specials...),
		specialIDs:  make(map[string]int32, len(specials)),
		pretokenize: pretokenize,
		cacheShort:  make(map[uint64]uint64),
		cacheLong:   make(map[string]uint64),
	}
	for b := 0; b < NumBytes; b++ {
		t.pieces = append(t.pieces, []byte{byte(b)})
	}
	for r, m := range merges {
		t.ranks[pairKey(m[0], m[1])] = int32(r)
		p := make([]byte, 0, len(t.pieces[m[0]])+len(t.pieces[m[1]]))
		t.pieces = append(t.pieces, append(append(p, t.pieces[m[0]]...), t.pieces[m[1]]...))
	}
	for _, s := range specials {
		t.specialIDs[s] = int32(len(t.pieces))
		t.pieces = append(t.pieces, []byte(s))
	}
	return t
}

// VocabSize returns V, the number of token ids: 256 + NumMerges() + len(SpecialTokens()).
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// NumMerges returns the number of learned merges.
func (t *Tokenizer) NumMerges() int { return len(t.merges) }

// Merges returns a copy of the merges: merge r joins the pair Merges()[r] into id 256+r.
func (t *Tokenizer) Merges() [][2]int32 { return append([][2]int32(nil), t.merges...) }

// SpecialTokens returns a copy of the special token names, in id order.
func (t *Tokenizer) SpecialTokens() []string { return append([]string(nil), t.specials...) }

// Pretokenize returns the pre-tokenization mode (PretokenizeGPT2 or PretokenizeNone).
func (t *Tokenizer) Pretokenize() string { return t.pretokenize }

// SpecialID returns the id of the special token name, and false if there is no such special token.
func (t *Tokenizer) SpecialID(name string) (int32, bool) {
	id, ok := t.specialIDs[name]
	return id, ok
}

// IsSpecial reports whether id is the id of a special token.
func (t *Tokenizer) IsSpecial(id int32) bool {
	return int(id) >= NumBytes+len(t.merges) && int(id) < len(t.pieces)
}

// Encode returns the token ids of s. Special token names in s are encoded as ordinary text; append
// SpecialID values yourself. Decode(Encode(s)) == s for every string, valid UTF-8 or not.
func (t *Tokenizer) Encode(s string) []int32 { return t.EncodeBytes([]byte(s)) }

// EncodeBytes is Encode for a byte slice.
func (t *Tokenizer) EncodeBytes(b []byte) []int32 {
	ids := make([]int32, 0, len(b)/2+1)
	forEachChunk(b, t.pretokenize, func(chunk []byte) {
		ids = t.encodeChunk(ids, chunk)
	})
	return ids
}

// packShort packs a chunk of at most 7 bytes and its length into a map key.
func packShort(chunk []byte) uint64 {
	k := uint64(len(chunk))
	for _, c := range chunk {
		k = k<<8 | uint64(c)
	}
	return k
}

// encodeChunk appends the ids of one chunk to dst, using the cache for chunks up to maxCachedChunk bytes.
// A cache entry is a span of cacheIDs packed as offset<<8 | length.
func (t *Tokenizer) encodeChunk(dst []int32, chunk []byte) []int32 {
	if len(chunk) == 1 {
		return append(dst, int32(chunk[0]))
	}
	if len(chunk) > maxCachedChunk {
		return t.mergeChunk(dst, chunk)
	}
	var key uint64
	short := len(chunk) < 8
	t.mu.Lock()
	var span uint64
	var ok bool
	if short {
		key = packShort(chunk)
		span, ok = t.cacheShort[key]
	} else {
		span, ok = t.cacheLong[string(chunk)]
	}
	if ok {
		dst = append(dst, t.cacheIDs[span>>8:span>>8+span&0xff]...)
		t.mu.Unlock()
		return dst
	}
	t.mu.Unlock()
	n := len(dst)
	dst = t.mergeChunk(dst, chunk)
	t.mu.Lock()
	if len(t.cacheShort)+len(t.cacheLong) >= maxCacheEntries {
		clear(t.cacheShort)
		clear(t.cacheLong)
		t.cacheIDs = t.cacheIDs[:0]
	}
	span = uint64(len(t.cacheIDs))<<8 | uint64(len(dst)-n)
	t.cacheIDs = append(t.cacheIDs, dst[n:]...)
	if short {
		t.cacheShort[key] = span
	} else {
		t.cacheLong[string(chunk)] = span
	}
	t.mu.Unlock()
	return dst
}

// mergeChunk appends the ids of chunk after applying the merges in rank order.
func (t *Tokenizer) mergeChunk(dst []int32, chunk []byte) []int32 {
	if len(chunk) > shortChunk {
		return t.mergeLong(dst, chunk)
	}
	n0 := len(dst)
	for _, c := range chunk {
		dst = append(dst, int32(c))
	}
	return append(dst[:n0], t.mergeShort(dst[n0:])...)
}

// mergeShort applies the merges to s in place and returns the shortened slice. Each step finds the
// lowest-rank pair present and merges all its occurrences left to right: O(len(s)²) map lookups.
func (t *Tokenizer) mergeShort(s []int32) []int32 {
	for len(s) >= 2 {
		best := int32(-1)
		for i := 0; i+1 < len(s); i++ {
			if r, ok := t.ranks[pairKey(s[i], s[i+1])]; ok && (best < 0 || r < best) {
				best = r
			}
		}
		if best < 0 {
			break
		}
		a, b, z := t.merges[best][0], t.merges[best][1], int32(NumBytes)+best
		j := 0
		for i := 0; i < len(s); j++ {
			if i+1 < len(s) && s[i] == a && s[i+1] == b {
				s[j] = z
				i += 2
			} else {
				s[j] = s[i]
				i++
			}
		}
		s = s[:j]
	}
	return s
}

// mergeLong gives the same result as mergeShort in O(n log n): symbols form a linked list and a min-heap
// holds (rank, position) of candidate pairs. Equal ranks pop left to right, as in mergeShort, and a merge
// only creates pairs of higher rank, so popping in (rank, position) order applies the merges in rank order.
func (t *Tokenizer) mergeLong(dst []int32, chunk []byte) []int32 {
	n := len(chunk)
	tok := make([]int32, n)
	next := make([]int32, n) // -1 at the end
	prev := make([]int32, n) // -1 at the start
	for i, c := range chunk {
		tok[i], next[i], prev[i] = int32(c), int32(i+1), int32(i-1)
	}
	next[n-1] = -1
	var h rankHeap
	push := func(i int32) {
		if j := next[i]; j >= 0 {
			if r, ok := t.ranks[pairKey(tok[i], tok[j])]; ok {
				h.push(rankEntry{rank: r, pos: i})
			}
		}
	}
	for i := int32(0); i < int32(n-1); i++ {
		push(i)
	}
	for len(h) > 0 {
		e := h.pop()
		i := e.pos
		j := next[i]
		// Stale: i was absorbed (tok = -1), is the last symbol, or now starts another pair.
		if tok[i] < 0 || j < 0 || t.merges[e.rank] != [2]int32{tok[i], tok[j]} {
			continue
		}
		tok[i] = int32(NumBytes) + e.rank
		tok[j] = -1
		next[i] = next[j]
		if k := next[j]; k >= 0 {
			prev[k] = i
		}
		if p := prev[i]; p >= 0 {
			push(p)
		}
		push(i)
	}
	for i := int32(0); i >= 0; i = next[i] {
		dst = append(dst, tok[i])
	}
	return dst
}

type rankEntry struct{ rank, pos int32 }

// rankHeap is a binary min-heap on (rank, pos).
type rankHeap []rankEntry

func (h rankHeap) less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].pos < h[j].pos
}

func (h *rankHeap) push(e rankEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *rankHeap) pop() rankEntry {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	*h = s
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s.less(c+1, c) {
			c++
		}
		if !s.less(c, i) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	return top
}

// Decode returns the bytes of ids; a special token decodes to its name. An id outside [0, VocabSize())
// decodes to the UTF-8 replacement character U+FFFD; use DecodeChecked to get an error instead.
func (t *Tokenizer) Decode(ids []int32) []byte {
	out := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		if id < 0 || int(id) >= len(t.pieces) {
			out = utf8.AppendRune(out, utf8.RuneError)
			continue
		}
		out = append(out, t.pieces[id]...)
	}
	return out
}

// DecodeString is Decode returning a string.
func (t *Tokenizer) DecodeString(ids []int32) string { return string(t.Decode(ids)) }

// DecodeChecked is Decode, but returns an error naming the first id outside [0, VocabSize()).
func (t *Tokenizer) DecodeChecked(ids []int32) ([]byte, error) {
	for i, id := range ids {
		if id < 0 || int(id) >= len(t.pieces) {
			return nil, errors.Errorf("tokenizer: ids[%d]=%d is outside the vocabulary [0, %d)", i, id, len(t.pieces))
		}
	}
	return t.Decode(ids), nil
}

// TokenBytes returns a copy of the bytes id decodes to, and false for an id outside [0, VocabSize()).
func (t *Tokenizer) TokenBytes(id int32) ([]byte, bool) {
	if id < 0 || int(id) >= len(t.pieces) {
		return nil, false
	}
	return append([]byte(nil), t.pieces[id]...), true
}

// Piece returns a printable form of token id for display: printable characters as they are, other
// characters Go-escaped (`\n`, `\t`, `\x00`, `\u200b`), invalid UTF-8 bytes as `\xff`. A special token
// shows as its name; an id outside the vocabulary as "<invalid:ID>".
func (t *Tokenizer) Piece(id int32) string {
	if id < 0 || int(id) >= len(t.pieces) {
		return "<invalid:" + strconv.Itoa(int(id)) + ">"
	}
	if t.IsSpecial(id) {
		return string(t.pieces[id])
	}
	var sb strings.Builder
	for b := t.pieces[id]; len(b) > 0; {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			sb.WriteString(`\x`)
			sb.WriteString(strconv.FormatUint(uint64(b[0])|0x100, 16)[1:])
		case r == '\\':
			sb.WriteString(`\\`)
		case unicode.IsPrint(r):
			sb.WriteRune(r)
		default:
			q := strconv.QuoteRuneToASCII(r) // e.g. '\n'
			sb.WriteString(q[1 : len(q)-1])
		}
		b = b[n:]
	}
	return sb.String()
}
