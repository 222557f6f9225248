package tokenizer

import (
	"bytes"
	"context"
	"io"
	"iter"
	"slices"

	"github.com/pkg/errors"
)

// Train learns a byte-level BPE tokenizer from texts. Each text is pre-tokenized on its own, so no merge
// crosses the boundary between two texts. It returns an error for an invalid cfg, an empty corpus, or a
// cfg.VocabSize larger than the data supports (fewer than cfg.NumMerges() pairs reach cfg.MinPairCount).
func Train(texts []string, cfg Config) (*Tokenizer, error) {
	return TrainContext(context.Background(), texts, cfg)
}

// TrainContext is Train that stops once ctx is done, checked before each text is counted and after each merge,
// and then returns ctx's error: a long training on a large corpus can be interrupted.
func TrainContext(ctx context.Context, texts []string, cfg Config) (*Tokenizer, error) {
	return trainSeq(ctx, slices.Values(texts), cfg)
}

// TrainSeq is Train on a sequence of texts, read once; use it to stream documents.
func TrainSeq(texts iter.Seq[string], cfg Config) (*Tokenizer, error) {
	return trainSeq(context.Background(), texts, cfg)
}

func trainSeq(ctx context.Context, texts iter.Seq[string], cfg Config) (*Tokenizer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, errors.WithMessage(err, "tokenizer.Train")
	}
	c := newChunkCounter(cfg.Pretokenize)
	for s := range texts {
		if err := ctx.Err(); err != nil {
			return nil, errors.WithMessage(err, "tokenizer.Train: counting the corpus")
		}
		c.add([]byte(s))
	}
	return c.train(ctx, cfg)
}

// readerBlockSize is the read size of TrainReader; a variable so tests can force many small blocks.
var readerBlockSize = 1 << 20

// TrainReader is Train on the whole content of r taken as one text. It reads r in blocks and cuts them only
// where the pre-tokenizer would cut anyway (after a '\n' followed by an ASCII non-space byte), so the result
// equals Train([]string{content}, cfg) without holding the content in memory as a string.
func TrainReader(r io.Reader, cfg Config) (*Tokenizer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, errors.WithMessage(err, "tokenizer.TrainReader")
	}
	c := newChunkCounter(cfg.Pretokenize)
	var pending []byte
	buf := make([]byte, readerBlockSize)
	for {
		n, err := r.Read(buf)
		pending = append(pending, buf[:n]...)
		if cfg.Pretokenize != PretokenizeNone {
			if cut := safeCut(pending); cut > 0 {
				c.add(pending[:cut])
				pending = append(pending[:0], pending[cut:]...)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, errors.Wrap(err, "tokenizer.TrainReader: reading the corpus")
		}
	}
	c.add(pending)
	return c.train(context.Background(), cfg)
}

// safeCut returns the last position p > 0 with b[p-1] == '\n' and b[p] an ASCII non-space byte, or 0.
// The chunk before p is a whitespace run ending in '\n', which ends there whatever follows, and the
// pre-tokenizer restarts at p; hence cutting at p does not change the chunks.
func safeCut(b []byte) int {
	for p := len(b) - 1; p > 0; {
		q := bytes.LastIndexByte(b[:p], '\n')
		if q < 0 {
			return 0
		}
		if c := b[q+1]; c < 0x80 && asciiClass[c] != clsSpace {
			return q + 1
		}
		p = q
	}
	return 0
}

// chunkCounter counts distinct pre-tokenization chunks.
type chunkCounter struct {
	mode   string
	index  map[string]int32 // chunk -> position in chunks
	chunks [][]byte
	counts []int64
	bytes  int64
}

func newChunkCounter(mode string) *chunkCounter {
	return &chunkCounter{mode: mode, index: make(map[string]int32)}
}

func (c *chunkCounter) add(text []byte) {
	c.bytes += int64(len(text))
	forEachChunk(text, c.mode, func(chunk []byte) {
		if i, ok := c.index[string(chunk)]; ok {
			c.counts[i]++
			return
		}
		c.index[string(chunk)] = int32(len(c.chunks))
		c.chunks = append(c.chunks, bytes.Clone(chunk))
		c.counts = append(c.counts, 1)
	})
}

// train runs the merge loop on the counted chunks; it stops with ctx's error once ctx is done.
func (c *chunkCounter) train(ctx context.Context, cfg Config) (*Tokenizer, error) {
	if c.bytes == 0 {
		return nil, errors.New("tokenizer: cannot train on an empty corpus")
	}
	words := make([][]int32, len(c.chunks))
	for i, chunk := range c.chunks {
		w := make([]int32, len(chunk))
		for j, b := range chunk {
			w[j] = int32(b)
		}
		words[i] = w
	}
	c.index, c.chunks = nil, nil // free the strings before the merge loop
	merges := learnMerges(ctx, words, c.counts, cfg.NumMerges(), int64(cfg.MinPairCount), cfg.Progress)
	if err := ctx.Err(); err != nil {
		return nil, errors.WithMessagef(err, "tokenizer.Train: after %d of %d merges", len(merges), cfg.NumMerges())
	}
	if len(merges) < cfg.NumMerges() {
		return nil, errors.Errorf("tokenizer: vocabulary larger than the data supports: vocab_size=%d needs %d "+
			"merges, but the corpus (%d bytes) supports only %d merges of pairs occurring at least "+
			"min_pair_count=%d times; "+
			"the largest vocab_size it supports is %d (256 bytes + %d merges + %d special tokens)",
			cfg.VocabSize, cfg.NumMerges(), c.bytes, len(merges), cfg.MinPairCount,
			NumBytes+len(merges)+len(cfg.SpecialTokens), len(merges), len(cfg.SpecialTokens))
	}
	return newTokenizer(merges, cfg.SpecialTokens, cfg.Pretokenize), nil
}

// pairKey packs a pair of ids; keys order as (a, b) lexicographically because ids are non-negative.
func pairKey(a, b int32) uint64 { return uint64(a)<<32 | uint64(uint32(b)) }

func splitKey(k uint64) (a, b int32) { return int32(k >> 32), int32(uint32(k)) }

// learnMerges finds up to numMerges merges on words (symbol sequences, modified in place) with frequencies freq.
// Each step merges the pair with the highest count, ties going to the lowest (a, b). A pair's count is
// the number of adjacent positions holding it, times the word frequency, summed over words.
//
// Pair counts are updated incrementally: index maps a pair to the words that contained it when it appeared
// (possibly stale, never missing), and a max-heap with lazy deletion holds (count, pair) entries; an entry
// is valid when its count equals the pair's current count. It returns early, with the merges so far, once ctx is
// done.
func learnMerges(ctx context.Context, words [][]int32, freq []int64, numMerges int, minCount int64,
	progress func(done, total int)) [][2]int32 {
	m := &merger{
		words:   words,
		freq:    freq,
		counts:  make(map[uint64]int64),
		index:   make(map[uint64][]int32),
		touched: make(map[uint64]struct{}),
	}
	for w, s := range words {
		for i := 0; i+1 < len(s); i++ {
			m.addPair(pairKey(s[i], s[i+1]), freq[w], int32(w))
		}
	}
	for k, n := range m.counts {
		if n >= minCount {
			m.heap = append(m.heap, heapEntry{count: n, pair: k})
		}
	}
	m.heap.init()

	merges := make([][2]int32, 0, numMerges)
	for len(merges) < numMerges && ctx.Err() == nil {
		best, ok := m.popBest()
		if !ok {
			break // no pair reaches minCount: the caller reports the shortfall
		}
		a, b := splitKey(best.pair)
		z := int32(NumBytes + len(merges))
		merges = append(merges, [2]int32{a, b})
		ws := m.index[best.pair]
		delete(m.index, best.pair)
		for _, w := range ws {
			m.mergeWord(w, a, b, z)
		}
		for k := range m.touched {
			if n := m.counts[k]; n >= minCount {
				m.heap.push(heapEntry{count: n, pair: k})
			}
		}
		clear(m.touched)
		if progress != nil {
			progress(len(merges), numMerges)
		}
	}
	return merges
}

type merger struct {
	words   [][]int32
	freq    []int64
	counts  map[uint64]int64   // pair -> current count (absent means 0)
	index   map[uint64][]int32 // pair -> words that may contain it
	touched map[uint64]struct{}
	heap    pairHeap
}

// popBest pops the valid heap entry with the highest count; false when none is left.
func (m *merger) popBest() (heapEntry, bool) {
	for len(m.heap) > 0 {
		e := m.heap.pop()
		if m.counts[e.pair] == e.count {
			return e, true
		}
	}
	return heapEntry{}, false
}

// addPair adds n to the count of pair k; w >= 0 also records that word w contains k.
func (m *merger) addPair(k uint64, n int64, w int32) {
	c := m.counts[k] + n
	if c == 0 {
		delete(m.counts, k)
	} else {
		m.counts[k] = c
	}
	if w >= 0 {
		// Words are processed one at a time, so checking the last entry removes duplicates.
		if lst := m.index[k]; len(lst) == 0 || lst[len(lst)-1] != w {
			m.index[k] = append(lst, w)
		}
	}
}

// mergeWord replaces the non-overlapping occurrences of (a, b) in word w, scanned left to right, by z, and
// updates the counts of the pairs that change: the old pairs touching an occurrence are removed, the new
// pairs touching z are added. All other pairs are the same before and after.
func (m *merger) mergeWord(w int32, a, b, z int32) {
	s, f := m.words[w], m.freq[w]
	n := len(s)
	found := false
	last := -1 // last old pair position already removed
	for i := 0; i+1 < n; {
		if s[i] != a || s[i+1] != b {
			i++
			continue
		}
		found = true
		lo, hi := max(i-1, last+1), min(i+1, n-2)
		for p := lo; p <= hi; p++ {
			k := pairKey(s[p], s[p+1])
			m.addPair(k, -f, -1)
			m.touched[k] = struct{}{}
		}
		last = hi
		i += 2
	}
	if !found {
		return // a stale index entry
	}
	j := 0
	for i := 0; i < n; j++ {
		if i+1 < n && s[i] == a && s[i+1] == b {
			s[j] = z
			i += 2
		} else {
			s[j] = s[i]
			i++
		}
	}
	s = s[:j]
	m.words[w] = s
	last = -1 // last new pair position already added
	for k := range s {
		if s[k] != z {
			continue
		}
		for p := max(k-1, last+1); p <= min(k, len(s)-2); p++ {
			key := pairKey(s[p], s[p+1])
			m.addPair(key, f, w)
			m.touched[key] = struct{}{}
			last = p
		}
	}
}

// heapEntry is a candidate merge: pair with the given count when it was pushed.
type heapEntry struct {
	count int64
	pair  uint64
}

// pairHeap is a binary max-heap on (count, then lowest pair).
type pairHeap []heapEntry

func (h pairHeap) less(i, j int) bool {
	if h[i].count != h[j].count {
		return h[i].count > h[j].count
	}
	return h[i].pair < h[j].pair
}

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(e heapEntry) {
	*h = append(*h, e)
	h.up(len(*h) - 1)
}

func (h *pairHeap) pop() heapEntry {
	old := *h
	top := old[0]
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
	return top
}

func (h pairHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (h pairHeap) down(i int) {
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h.less(c+1, c) {
			c++
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
