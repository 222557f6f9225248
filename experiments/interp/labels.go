package interp

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/tokenizer"
)

// evalSet is a labelled token set of one corpus: S sequences of T inputs, evenly spaced over a part of a packed
// stream (textSource; corpora stored in a sorted order, such as WordNet's lexicographer files, are then sampled
// throughout), with their labels and documents. Input token n = s·T + t is position t of sequence s.
type evalSet struct {
	T      int
	seqs   [][]int32      // [S][T+1]: inputs [:T], targets [1:]
	stream []int32        // the packed stream the sequences come from
	offset []int          // [N] stream offset of each input
	tokens *naming.Tokens // N = S·T input tokens
	// next[n] holds the label ids of the target of input n (the token after it): [N].
	next [][]int32
	// nextWord[n] is the number of tokens of the word whose first token is the target of input n, when that word
	// ends within the sequence (targets n … n+nextWord[n]−1 spell it); 0 when the target does not start a word or
	// the word runs past the sequence end: [N].
	nextWord []int
	docStart []int // per document of the stream, the offset of its first token
	tok      *tokenizer.Tokenizer
}

// NoneLabel is the label of the tokens that carry no concept label, when EvalConfig.NoneLabel is set.
const NoneLabel = "none"

// textSource is a packed, labelled token stream the evaluation sets are cut from: the model's validation split, or
// fresh documents tokenized as the model's data (freshSource).
type textSource struct {
	packed *data.Packed
	corpus *data.Corpus // its documents, with their labels
	tok    *tokenizer.Tokenizer
}

// valSource is the validation split of prep.
func valSource(prep *lmdata.Prepared) textSource {
	return textSource{packed: prep.ValSeqs, corpus: prep.Val, tok: prep.Tokenizer}
}

// freshSource generates `docs` synthetic documents with generator seed `seed` (the other settings of sc, so the
// same grammar and lexicon), tokenizes them with prep's tokenizer and packs them as prep packs its splits. The
// documents depend only on (seed, index), so no training or validation document of another seed is among them
// unless the grammar produces the same text.
func freshSource(prep *lmdata.Prepared, sc data.SyntheticConfig, seed uint64, docs int) (textSource, error) {
	sc.Seed, sc.NumDocs = seed, docs
	c, err := data.Synthetic(sc)
	if err != nil {
		return textSource{}, errors.WithMessage(err, "interp: the fresh evaluation documents (eval.data_seed, eval.docs)")
	}
	p, err := data.Pack(prep.Encode(c.Texts), prep.Config.SeqLen, prep.EOS)
	if err != nil {
		return textSource{}, errors.WithMessagef(err, "interp: packing %d fresh evaluation documents (raise eval.docs)",
			docs)
	}
	return textSource{packed: p, corpus: c, tok: prep.Tokenizer}, nil
}

// buildEvalSet labels `sequences` validation sequences of prep (evenly spaced over the stream) with the labels of
// cc: for each selected concept c and value v the label "c=v", carried by the tokens whose word has that value
// (Marked or InForce, data.DocLabels.AlignTokens), and with none set NoneLabel on the tokens without any; labels
// carried by fewer than minCount input tokens are dropped.
//
// With LabelsLexical the labels of a token are instead lexical(word) for its word: the values (of the single
// selected concept) that the lexicon lists for the word, e.g. every supersense WordNet knows for it.
func buildEvalSet(prep *lmdata.Prepared, cc CorpusConfig, sequences, minCount int, none bool,
	lexical func(word string) []string) (*evalSet, error) {
	src := valSource(prep)
	return buildEvalSetIn(src, cc, 0, src.packed.NumSequences(), sequences, minCount, none, lexical)
}

// buildEvalSetIn is buildEvalSet over the sequences [from, to) of src only: `sequences` of them, evenly spaced.
func buildEvalSetIn(src textSource, cc CorpusConfig, from, to, sequences, minCount int, none bool,
	lexical func(word string) []string) (*evalSet, error) {
	p := src.packed
	from, to = max(from, 0), min(to, p.NumSequences())
	S := min(sequences, to-from)
	if S <= 0 {
		return nil, errors.Errorf("interp: the text of %s has no full sequence in [%d, %d)", cc.Source, from, to)
	}
	T := p.SeqLen
	es := &evalSet{T: T, stream: p.Stream, tok: src.tok, docStart: p.DocStarts}
	stride := (to - from) / S
	for s := range S {
		es.seqs = append(es.seqs, p.Sequence(from+s*stride))
	}
	val := src.corpus
	if val.Labels == nil {
		return nil, errors.Errorf("interp: corpus %s has no labels", cc.Source)
	}
	names := cc.Concepts
	if len(names) == 0 {
		for _, k := range val.Concepts {
			names = append(names, k.Name)
		}
	}
	type cv struct{ c, v int }
	var concepts []int
	id := map[cv]int32{}
	var labelNames []string
	for _, name := range names {
		c, err := val.ConceptIndex(name)
		if err != nil {
			return nil, errors.WithMessagef(err, "interp: corpus %s", cc.Source)
		}
		concepts = append(concepts, c)
		for v, value := range val.Concepts[c].Values {
			id[cv{c, v}] = int32(len(labelNames))
			labelNames = append(labelNames, fmt.Sprintf("%s=%s", name, value))
		}
	}
	if cc.Labels == LabelsLexical && (len(concepts) != 1 || lexical == nil) {
		return nil, errors.Errorf("interp: corpus %s: labels=%q needs one concept (has %v) and a lexicon", cc.Source,
			LabelsLexical, names)
	}
	noneID := int32(-1)
	if none {
		noneID = int32(len(labelNames))
		labelNames = append(labelNames, NoneLabel)
	}
	// docLabels[d][i] are the label ids of token i of document d (i = its length for the trailing EOS), and
	// docWords[d][i] the index of the word token i belongs to (-1: none, the EOS included).
	docLabels, docWords := map[int][][]int32{}, map[int][]int32{}
	labelsAt := func(o int) (int, []int32, error) {
		d, i := p.Locate(0, o)
		if _, ok := docLabels[d]; !ok {
			start, eos := p.DocStarts[d], len(p.Stream)-1
			if d+1 < len(p.DocStarts) {
				eos = p.DocStarts[d+1] - 1
			}
			ids := p.Stream[start:eos]
			lens := make([]int, len(ids))
			for j, t := range ids {
				b, ok := src.tok.TokenBytes(t)
				if !ok {
					return 0, nil, errors.Errorf("interp: token %d of document %d is outside the vocabulary", t, d)
				}
				lens[j] = len(b)
			}
			tl, err := val.Labels[d].AlignTokens(lens, len(val.Texts[d]))
			if err != nil {
				return 0, nil, errors.WithMessagef(err, "interp: aligning document %d of %s", d, cc.Source)
			}
			byKind := tl.Marked
			if cc.Labels == LabelsInForce {
				byKind = tl.InForce
			}
			out := make([][]int32, len(ids)+1)
			for j := range out {
				switch {
				case j == len(ids): // the trailing EOS
				case cc.Labels == LabelsLexical:
					if w := tl.Word[j]; w >= 0 {
						dl := val.Labels[d]
						c := concepts[0]
						for _, value := range lexical(val.Texts[d][dl.Starts[w]:dl.Ends[w]]) {
							if v := slices.Index(val.Concepts[c].Values, value); v >= 0 {
								out[j] = append(out[j], id[cv{c, v}])
							}
						}
						slices.Sort(out[j])
						out[j] = slices.Compact(out[j])
					}
				default:
					for _, c := range concepts {
						if v := byKind[c][j]; v >= 0 {
							out[j] = append(out[j], id[cv{c, int(v)}])
						}
					}
				}
				if len(out[j]) == 0 && noneID >= 0 {
					out[j] = []int32{noneID}
				}
			}
			docLabels[d] = out
			docWords[d] = append(slices.Clone(tl.Word), -1)
		}
		return d, docLabels[d][i], nil
	}
	// wordAt returns the document and word of stream offset o (word -1: none); o must have been labelled.
	wordAt := func(o int) (int, int32) {
		d, i := p.Locate(0, o)
		return d, docWords[d][i]
	}
	N := S * T
	of, next := make([][]int32, N), make([][]int32, N)
	doc := make([]int32, N)
	counts := make([]int, len(labelNames))
	es.nextWord = make([]int, N)
	for s := range S {
		for t := range T {
			n, o := s*T+t, (from+s*stride)*T+t
			es.offset = append(es.offset, o)
			d, ls, err := labelsAt(o)
			if err != nil {
				return nil, err
			}
			if _, next[n], err = labelsAt(o + 1); err != nil {
				return nil, err
			}
			doc[n], of[n] = int32(d), ls
			for _, l := range ls {
				counts[l]++
			}
		}
		// Word starts among the targets (stream offsets base+1 … base+T), and their lengths in tokens. Every
		// offset base … base+T is labelled above.
		base := (from + s*stride) * T
		for t := range T {
			d, w := wordAt(base + t + 1)
			if pd, pw := wordAt(base + t); w < 0 || (pd == d && pw == w) {
				continue
			}
			k := 1
			for t+k < T {
				if nd, nw := wordAt(base + t + 1 + k); nd != d || nw != w {
					break
				}
				k++
			}
			if t+k == T && base+T+1 < len(p.Stream) { // the word reaches the last target: does it go on?
				if _, _, err := labelsAt(base + T + 1); err != nil {
					return nil, err
				}
				if nd, nw := wordAt(base + T + 1); nd == d && nw == w {
					continue
				}
			}
			es.nextWord[s*T+t] = k
		}
	}
	// Drop rare labels (counted over the inputs) and renumber the rest in order.
	remap := make([]int32, len(labelNames))
	var kept []string
	for l, c := range counts {
		remap[l] = -1
		if c >= minCount {
			remap[l] = int32(len(kept))
			kept = append(kept, labelNames[l])
		}
	}
	relabel := func(ls []int32) []int32 {
		var out []int32
		for _, l := range ls {
			if r := remap[l]; r >= 0 {
				out = append(out, r)
			}
		}
		return out
	}
	for n := range N {
		of[n], next[n] = relabel(of[n]), relabel(next[n])
	}
	es.tokens = &naming.Tokens{Names: kept, Of: of, Doc: doc}
	es.next = next
	return es, es.tokens.Validate()
}

// concepts returns the kept labels other than NoneLabel.
func (es *evalSet) concepts() []string {
	var out []string
	for _, n := range es.tokens.Names {
		if n != NoneLabel {
			out = append(out, n)
		}
	}
	return out
}

// N returns the number of input tokens.
func (es *evalSet) N() int { return len(es.tokens.Of) }

// batches returns sequences [0, n) as [B, T+1] int32 tensors of B rows each (the last rows may be dropped so that
// every tensor has the same shape).
func (es *evalSet) batches(n, B int) []*tensors.Tensor {
	n = min(n, len(es.seqs))
	B = min(B, n)
	var out []*tensors.Tensor
	for from := 0; from+B <= n; from += B {
		out = append(out, tensors.FromValue(es.seqs[from:from+B]))
	}
	return out
}

// context returns the text around input n within its document: up to `before` tokens before it, the token itself
// and up to `after` tokens after it.
func (es *evalSet) context(n, before, after int) Context {
	o, d := es.offset[n], int(es.tokens.Doc[n])
	eos := len(es.stream) - 1
	if d+1 < len(es.docStart) {
		eos = es.docStart[d+1] - 1
	}
	lo := max(es.docStart[d], o-before)
	hi := max(o+1, min(eos, o+1+after))
	return Context{Doc: d, Before: es.tok.DecodeString(es.stream[lo:o]), Token: es.tok.DecodeString(es.stream[o : o+1]),
		After: es.tok.DecodeString(es.stream[o+1 : hi])}
}

// Context is a top-activating token in its document context (spec §7.3).
type Context struct {
	Doc        int     `json:"doc"`
	Before     string  `json:"before"`
	Token      string  `json:"token"`
	After      string  `json:"after"`
	Activation float64 `json:"activation"`
	Labels     string  `json:"labels,omitempty"` // the token's labels, comma-separated
}
