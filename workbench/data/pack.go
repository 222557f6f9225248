package data

import (
	"sort"

	"github.com/pkg/errors"
)

// Packed is a token stream cut into fixed-length training sequences. The documents are concatenated, each
// followed by the end-of-sequence id; sequence i is Stream[i·T : i·T+T+1], so consecutive sequences share one
// token and every stream token except the first is a target exactly once.
type Packed struct {
	Stream    []int32 // all tokens, EOS after each document
	SeqLen    int     // T: inputs per sequence; a sequence holds T+1 tokens (inputs and shifted targets)
	EOS       int32   // the separator id appended after every document
	DocStarts []int   // [N docs] offset in Stream of each document's first token
}

// Pack concatenates tokenized documents (each followed by eos) and cuts the stream into sequences of
// seqLen+1 tokens. Errors: seqLen <= 0, no tokens at all, or a stream too short for one sequence.
func Pack(docs [][]int32, seqLen int, eos int32) (*Packed, error) {
	if seqLen <= 0 {
		return nil, errors.Errorf("Pack: seqLen=%d, want > 0", seqLen)
	}
	total := 0
	for _, d := range docs {
		total += len(d) + 1
	}
	if total-len(docs) == 0 {
		return nil, errors.Errorf("Pack: empty corpus: %d documents with no tokens", len(docs))
	}
	if total < seqLen+1 {
		return nil, errors.Errorf("Pack: corpus too small: %d tokens (with separators), need at least seqLen+1=%d for one sequence",
			total, seqLen+1)
	}
	p := &Packed{Stream: make([]int32, 0, total), SeqLen: seqLen, EOS: eos, DocStarts: make([]int, len(docs))}
	for i, d := range docs {
		p.DocStarts[i] = len(p.Stream)
		p.Stream = append(p.Stream, d...)
		p.Stream = append(p.Stream, eos)
	}
	return p, nil
}

// NumSequences returns how many full sequences the stream holds: ⌊(len(Stream)-1)/T⌋; leftover tokens are unused.
func (p *Packed) NumSequences() int { return (len(p.Stream) - 1) / p.SeqLen }

// Sequence returns sequence i ([T+1] tokens) as a view into Stream; do not modify it. Panics if i is out of range.
func (p *Packed) Sequence(i int) []int32 {
	if i < 0 || i >= p.NumSequences() {
		panic(errors.Errorf("Packed.Sequence(%d): out of range [0, %d)", i, p.NumSequences()))
	}
	return p.Stream[i*p.SeqLen : i*p.SeqLen+p.SeqLen+1]
}

// Locate maps position t in [0, T] of sequence i to its document and the token index inside that document;
// tok equals the document's length for its trailing EOS.
func (p *Packed) Locate(i, t int) (doc, tok int) {
	pos := i*p.SeqLen + t
	doc = sort.Search(len(p.DocStarts), func(d int) bool { return p.DocStarts[d] > pos }) - 1
	return doc, pos - p.DocStarts[doc]
}
