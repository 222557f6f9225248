package naming

import (
	"fmt"
	"slices"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/tokenizer"
)

// Label kinds of Labelling.Kind: which word labels of a corpus a token carries (data.DocLabels).
const (
	LabelsMarked  = "marked"   // the values the token's word itself expresses ("queens": female, plural)
	LabelsInForce = "in_force" // the values in force in the token's context (the document's topic, a gloss's supersense)
	LabelsLexical = "lexical"  // the values a lexicon lists for the token's word (every WordNet supersense of the word)
)

// NoneLabel is the label of the tokens that carry no concept label, when Labelling.None is set (function words,
// punctuation): it is scored like any label but is never a concept.
const NoneLabel = "none"

// Source is a packed, labelled token stream a Text is cut from: a model's validation split, or fresh documents
// tokenized and packed as the model's data.
type Source struct {
	Name   string               // the corpus's name, for messages
	Packed *data.Packed         // the packed stream
	Corpus *data.Corpus         // its documents, with their labels
	Tok    *tokenizer.Tokenizer // the tokenizer that encoded them
}

// Labelling says which labels the tokens of a Text carry: for each concept c of Concepts (empty: every concept of
// the corpus) and value v the label "c=v", carried by the tokens whose word has that value (Kind LabelsMarked or
// LabelsInForce, data.DocLabels.AlignTokens); with Kind LabelsLexical instead the values that Lexicon(word) lists for
// the token's word (exactly one concept). With None the tokens without any label carry NoneLabel. Labels carried by
// fewer than MinCount input tokens are dropped.
type Labelling struct {
	Kind     string
	Concepts []string
	MinCount int
	None     bool
	Lexicon  func(word string) []string
}

// Text is a labelled token set of one corpus: S sequences of T inputs, evenly spaced over a part of a packed stream
// (corpora stored in a sorted order, such as WordNet's lexicographer files, are then sampled throughout), with their
// labels and documents. Input token n = s·T + t is position t of sequence s.
type Text struct {
	T        int
	Seqs     [][]int32 // [S][T+1]: inputs [:T], targets [1:]
	Stream   []int32   // the packed stream the sequences come from
	Offset   []int     // [N] stream offset of each input
	Tokens   *Tokens   // N = S·T input tokens
	Next     [][]int32 // [N] the label ids of the target of input n (the token after it)
	NextWord []int     // [N] the tokens of the word the target of n starts, when it ends within the sequence; else 0
	DocStart []int     // per document of the stream, the offset of its first token
	Tok      *tokenizer.Tokenizer
}

// LabelText labels `sequences` sequences of src, evenly spaced over its sequences [from, to), as lab says.
// Text.NextWord[n] = k > 0 when targets n … n+k−1 spell one word that ends within the sequence.
func LabelText(src Source, lab Labelling, from, to, sequences int) (*Text, error) {
	p := src.Packed
	from, to = max(from, 0), min(to, p.NumSequences())
	S := min(sequences, to-from)
	if S <= 0 {
		return nil, errors.Errorf("naming: the text of %s has no full sequence in [%d, %d)", src.Name, from, to)
	}
	T := p.SeqLen
	es := &Text{T: T, Stream: p.Stream, Tok: src.Tok, DocStart: p.DocStarts}
	stride := (to - from) / S
	for s := range S {
		es.Seqs = append(es.Seqs, p.Sequence(from+s*stride))
	}
	val := src.Corpus
	if val.Labels == nil {
		return nil, errors.Errorf("naming: corpus %s has no labels", src.Name)
	}
	names := lab.Concepts
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
			return nil, errors.WithMessagef(err, "naming: corpus %s", src.Name)
		}
		concepts = append(concepts, c)
		for v, value := range val.Concepts[c].Values {
			id[cv{c, v}] = int32(len(labelNames))
			labelNames = append(labelNames, fmt.Sprintf("%s=%s", name, value))
		}
	}
	if lab.Kind == LabelsLexical && (len(concepts) != 1 || lab.Lexicon == nil) {
		return nil, errors.Errorf("naming: corpus %s: labels=%q needs one concept (has %v) and a lexicon", src.Name,
			LabelsLexical, names)
	}
	noneID := int32(-1)
	if lab.None {
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
				b, ok := src.Tok.TokenBytes(t)
				if !ok {
					return 0, nil, errors.Errorf("naming: token %d of document %d is outside the vocabulary", t, d)
				}
				lens[j] = len(b)
			}
			tl, err := val.Labels[d].AlignTokens(lens, len(val.Texts[d]))
			if err != nil {
				return 0, nil, errors.WithMessagef(err, "naming: aligning document %d of %s", d, src.Name)
			}
			byKind := tl.Marked
			if lab.Kind == LabelsInForce {
				byKind = tl.InForce
			}
			out := make([][]int32, len(ids)+1)
			for j := range out {
				switch {
				case j == len(ids): // the trailing EOS
				case lab.Kind == LabelsLexical:
					if w := tl.Word[j]; w >= 0 {
						dl := val.Labels[d]
						c := concepts[0]
						for _, value := range lab.Lexicon(val.Texts[d][dl.Starts[w]:dl.Ends[w]]) {
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
	es.NextWord = make([]int, N)
	for s := range S {
		for t := range T {
			n, o := s*T+t, (from+s*stride)*T+t
			es.Offset = append(es.Offset, o)
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
			es.NextWord[s*T+t] = k
		}
	}
	// Drop rare labels (counted over the inputs) and renumber the rest in order.
	remap := make([]int32, len(labelNames))
	var kept []string
	for l, c := range counts {
		remap[l] = -1
		if c >= lab.MinCount {
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
	es.Tokens = &Tokens{Names: kept, Of: of, Doc: doc}
	es.Next = next
	return es, es.Tokens.Validate()
}

// Concepts returns the kept labels other than NoneLabel.
func (es *Text) Concepts() []string {
	var out []string
	for _, n := range es.Tokens.Names {
		if n != NoneLabel {
			out = append(out, n)
		}
	}
	return out
}

// N returns the number of input tokens.
func (es *Text) N() int { return len(es.Tokens.Of) }

// Context returns the text around input n within its document: up to `before` tokens before it, the token itself
// and up to `after` tokens after it.
func (es *Text) Context(n, before, after int) Context {
	o, d := es.Offset[n], int(es.Tokens.Doc[n])
	eos := len(es.Stream) - 1
	if d+1 < len(es.DocStart) {
		eos = es.DocStart[d+1] - 1
	}
	lo := max(es.DocStart[d], o-before)
	hi := max(o+1, min(eos, o+1+after))
	return Context{Doc: d, Before: es.Tok.DecodeString(es.Stream[lo:o]), Token: es.Tok.DecodeString(es.Stream[o : o+1]),
		After: es.Tok.DecodeString(es.Stream[o+1 : hi])}
}

// Context is a top-activating token in its document context (docs/spec/protot.md §7.3).
type Context struct {
	Doc        int     `json:"doc"`
	Before     string  `json:"before"`
	Token      string  `json:"token"`
	After      string  `json:"after"`
	Activation float64 `json:"activation"`
	Labels     string  `json:"labels,omitempty"` // the token's labels, comma-separated
}
