package data

import (
	"math"
	"sort"

	"github.com/pkg/errors"
)

// Corpus is a list of documents (plain strings) with optional ground-truth labels.
//
// Labels is nil for unlabeled corpora (files, FineWeb-Edu); otherwise it has one entry per document and Concepts is
// the schema its values index into.
type Corpus struct {
	Source   string      `json:"source"`   // provenance, e.g. "synthetic(seed=1)" or a file path
	Texts    []string    `json:"texts"`    // [N] documents
	Labels   []DocLabels `json:"labels"`   // [N] or nil
	Concepts []Concept   `json:"concepts"` // schema of Labels; nil when Labels is nil
}

// Concept names one latent variable and its values; a label value v >= 0 means Values[v], -1 means "not applicable".
type Concept struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// DocLabels holds the labels of one document. Word spans are byte offsets into the document text, in text order,
// non-overlapping. C is the number of concepts, W the number of words.
type DocLabels struct {
	Starts []int32 `json:"starts"` // [W] byte offset where word w starts
	Ends   []int32 `json:"ends"`   // [W] byte offset just past word w
	// InForce[c][w] is the value of concept c that holds in the context of word w (the document's latent
	// topic, the subject's number, ...), or -1.
	InForce [][]int16 `json:"in_force"` // [C][W]
	// Marked[c][w] is the value of concept c that word w itself expresses by its form ("queens" marks
	// gender=female and number=plural), or -1.
	Marked     [][]int16       `json:"marked"`     // [C][W]
	Sentences  []SentenceLabel `json:"sentences"`  // sentence-level labels, usable as classification targets
	Agreements []Agreement     `json:"agreements"` // controller → target dependencies (minimal pairs)
}

// SentenceLabel labels one sentence: Values[c] is the value of concept c expressed in the sentence, or -1.
type SentenceLabel struct {
	Start  int32   `json:"start"`  // byte offset of the sentence's first word
	End    int32   `json:"end"`    // byte offset just past its final punctuation
	Values []int16 `json:"values"` // [C]
}

// Agreement is one long-range dependency: the form of word Target is fixed by word Controller, Distance words
// earlier. Replacing the target by Alternative gives the ungrammatical member of a minimal pair.
type Agreement struct {
	Concept     int    `json:"concept"`     // index into Corpus.Concepts (number or gender)
	Value       int16  `json:"value"`       // the controller's value of that concept
	Controller  int32  `json:"controller"`  // word index
	Target      int32  `json:"target"`      // word index, > Controller
	Distance    int    `json:"distance"`    // Target - Controller, in words
	Alternative string `json:"alternative"` // the target word with the other value (e.g. "play" for "plays")
}

// NumDocs returns the number of documents.
func (c *Corpus) NumDocs() int { return len(c.Texts) }

// NumBytes returns the total size of all documents in bytes.
func (c *Corpus) NumBytes() int64 {
	var n int64
	for _, t := range c.Texts {
		n += int64(len(t))
	}
	return n
}

// ConceptIndex returns the index of the named concept in c.Concepts.
func (c *Corpus) ConceptIndex(name string) (int, error) {
	for i, k := range c.Concepts {
		if k.Name == name {
			return i, nil
		}
	}
	names := make([]string, len(c.Concepts))
	for i, k := range c.Concepts {
		names[i] = k.Name
	}
	return -1, errors.Errorf("corpus %q has no concept %q (has %v)", c.Source, name, names)
}

// Validate checks that the corpus has at least one non-empty document and that labels, if any, are consistent
// with the texts and the concept schema.
func (c *Corpus) Validate() error {
	if c == nil || len(c.Texts) == 0 {
		return errors.New("empty corpus: no documents")
	}
	if c.NumBytes() == 0 {
		return errors.Errorf("empty corpus %q: %d documents, all empty", c.Source, len(c.Texts))
	}
	if c.Labels == nil {
		return nil
	}
	if len(c.Labels) != len(c.Texts) {
		return errors.Errorf("corpus %q: %d label sets for %d documents", c.Source, len(c.Labels), len(c.Texts))
	}
	nc := len(c.Concepts)
	for d, l := range c.Labels {
		if err := l.validate(len(c.Texts[d]), c.Concepts); err != nil {
			return errors.WithMessagef(err, "corpus %q, document %d (of %d concepts)", c.Source, d, nc)
		}
	}
	return nil
}

func (l *DocLabels) validate(textLen int, concepts []Concept) error {
	w := len(l.Starts)
	if len(l.Ends) != w {
		return errors.Errorf("%d word starts but %d ends", w, len(l.Ends))
	}
	prevEnd := int32(0)
	for i := range w {
		if l.Starts[i] < prevEnd || l.Ends[i] <= l.Starts[i] || int(l.Ends[i]) > textLen {
			return errors.Errorf("word %d span [%d, %d) is not ordered, non-empty and inside the text (%d bytes)",
				i, l.Starts[i], l.Ends[i], textLen)
		}
		prevEnd = l.Ends[i]
	}
	for _, arr := range [][][]int16{l.InForce, l.Marked} {
		if len(arr) != len(concepts) {
			return errors.Errorf("word labels for %d concepts, schema has %d", len(arr), len(concepts))
		}
		for ci, vals := range arr {
			if len(vals) != w {
				return errors.Errorf("concept %q: %d word labels for %d words", concepts[ci].Name, len(vals), w)
			}
			for wi, v := range vals {
				if v < -1 || int(v) >= len(concepts[ci].Values) {
					return errors.Errorf("concept %q, word %d: value %d out of range [-1, %d)",
						concepts[ci].Name, wi, v, len(concepts[ci].Values))
				}
			}
		}
	}
	for si, s := range l.Sentences {
		if len(s.Values) != len(concepts) {
			return errors.Errorf("sentence %d: %d values for %d concepts", si, len(s.Values), len(concepts))
		}
	}
	for ai, a := range l.Agreements {
		if a.Controller < 0 || a.Target <= a.Controller || int(a.Target) >= w || a.Distance != int(a.Target-a.Controller) {
			return errors.Errorf("agreement %d: controller %d, target %d, distance %d inconsistent (%d words)",
				ai, a.Controller, a.Target, a.Distance, w)
		}
	}
	return nil
}

// Subset returns a corpus holding documents idx (in that order), sharing the underlying strings and labels.
func (c *Corpus) Subset(idx []int) *Corpus {
	out := &Corpus{Source: c.Source, Concepts: c.Concepts, Texts: make([]string, len(idx))}
	if c.Labels != nil {
		out.Labels = make([]DocLabels, len(idx))
	}
	for i, j := range idx {
		out.Texts[i] = c.Texts[j]
		if c.Labels != nil {
			out.Labels[i] = c.Labels[j]
		}
	}
	return out
}

// Split divides the documents at random (seeded) into a training and a validation corpus. The validation part
// gets round(valFraction·N) documents, at least one when valFraction > 0; both parts keep the original document
// order. valFraction must be in [0, 1) and the training part must not end up empty.
func (c *Corpus) Split(valFraction float64, seed uint64) (train, val *Corpus, err error) {
	if err := c.Validate(); err != nil {
		return nil, nil, errors.WithMessage(err, "Split")
	}
	if !(valFraction >= 0 && valFraction < 1) {
		return nil, nil, errors.Errorf("Split: valFraction=%g, want in [0, 1)", valFraction)
	}
	n := len(c.Texts)
	nVal := int(math.Round(valFraction * float64(n)))
	if valFraction > 0 && nVal == 0 {
		nVal = 1
	}
	if nVal >= n {
		return nil, nil, errors.Errorf("Split: corpus %q has %d documents, too few for valFraction=%g (no training documents left)",
			c.Source, n, valFraction)
	}
	perm := newRNG(seed, 0x5711).permutation(n)
	valIdx, trainIdx := perm[:nVal], perm[nVal:]
	sort.Ints(valIdx)
	sort.Ints(trainIdx)
	train, val = c.Subset(trainIdx), c.Subset(valIdx)
	train.Source += " [train]"
	val.Source += " [val]"
	return train, val, nil
}

// Merge concatenates corpora. Labels are kept only when every part has labels with the same concept schema.
func Merge(source string, parts ...*Corpus) *Corpus {
	out := &Corpus{Source: source}
	keepLabels := len(parts) > 0
	for _, p := range parts {
		if p.Labels == nil || !sameSchema(p.Concepts, parts[0].Concepts) {
			keepLabels = false
		}
	}
	for _, p := range parts {
		out.Texts = append(out.Texts, p.Texts...)
		if keepLabels {
			out.Labels = append(out.Labels, p.Labels...)
		}
	}
	if keepLabels {
		out.Concepts = parts[0].Concepts
	}
	return out
}

func sameSchema(a, b []Concept) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || len(a[i].Values) != len(b[i].Values) {
			return false
		}
		for j := range a[i].Values {
			if a[i].Values[j] != b[i].Values[j] {
				return false
			}
		}
	}
	return true
}
