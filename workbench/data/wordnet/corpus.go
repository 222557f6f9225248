package wordnet

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/protolab/protolab/workbench/data"
)

// Concept indices of Corpus labels.
const (
	ConceptSupersense = iota // one of LexNames
	ConceptPOS               // noun, verb, adjective, adverb
)

// Concepts returns the label schema of Corpus.
func Concepts() []data.Concept {
	pos := make([]string, len(posFiles))
	for i, f := range posFiles {
		pos[i] = f.name
	}
	return []data.Concept{
		{Name: "supersense", Values: slices.Clone(LexNames[:])},
		{Name: "pos", Values: pos},
	}
}

// Corpus returns one document per synset that has a definition or an example:
//
//	"<word>, <word>, ...: <definition>. <example>. <example>."
//
// (terminal punctuation is added where missing). Labels: words are runs of letters, digits, '-' and '\”;
// every other non-space character is a word of its own. The synset's supersense and part of speech are in
// force on every word and marked on words that are (case-insensitively) one of the synset's single-word
// lemmas. Each sentence (the header with the definition, each example) gets a SentenceLabel with both values.
func (db *DB) Corpus() *data.Corpus {
	c := &data.Corpus{Source: "wordnet(" + db.Dir + ")", Concepts: Concepts()}
	for i := range db.Synsets {
		s := &db.Synsets[i]
		if s.Definition == "" && len(s.Examples) == 0 {
			continue
		}
		text, sentences := s.document()
		c.Texts = append(c.Texts, text)
		c.Labels = append(c.Labels, s.labels(text, sentences))
	}
	return c
}

// document renders the synset and returns the byte spans of its sentences.
func (s *Synset) document() (string, [][2]int32) {
	var b strings.Builder
	var spans [][2]int32
	sentence := func(text string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		start := int32(b.Len())
		b.WriteString(text)
		if r, _ := utf8.DecodeLastRuneInString(text); !strings.ContainsRune(".!?", r) {
			b.WriteByte('.')
		}
		spans = append(spans, [2]int32{start, int32(b.Len())})
	}
	sentence(strings.Join(s.Words, ", ") + ": " + s.Definition)
	for _, ex := range s.Examples {
		sentence(ex)
	}
	return b.String(), spans
}

func (s *Synset) labels(text string, sentences [][2]int32) data.DocLabels {
	ss, pos := int16(s.LexFile), int16(posIndex(s.Type))
	lemmas := map[string]bool{}
	for _, w := range s.Words {
		if !strings.Contains(w, " ") {
			lemmas[strings.ToLower(w)] = true
		}
	}
	l := data.DocLabels{InForce: make([][]int16, 2), Marked: make([][]int16, 2)}
	for _, sp := range segment(text) {
		l.Starts = append(l.Starts, sp[0])
		l.Ends = append(l.Ends, sp[1])
		mss, mpos := int16(-1), int16(-1)
		if lemmas[strings.ToLower(text[sp[0]:sp[1]])] {
			mss, mpos = ss, pos
		}
		l.InForce[ConceptSupersense] = append(l.InForce[ConceptSupersense], ss)
		l.InForce[ConceptPOS] = append(l.InForce[ConceptPOS], pos)
		l.Marked[ConceptSupersense] = append(l.Marked[ConceptSupersense], mss)
		l.Marked[ConceptPOS] = append(l.Marked[ConceptPOS], mpos)
	}
	for _, sp := range sentences {
		l.Sentences = append(l.Sentences, data.SentenceLabel{Start: sp[0], End: sp[1], Values: []int16{ss, pos}})
	}
	return l
}

// WordLabels returns the labels of a text whose words WordNet's lexicon labels one by one (the Brown corpus): its
// words, segmented as Corpus segments glosses, under Corpus's schema (Concepts) with no value marked or in force,
// since the text itself states none (naming.LabelsLexical reads each word's values from the database: every
// supersense of its synsets); and one SentenceLabel per span of sentences ([start, end) byte offsets), with no
// value.
func WordLabels(text string, sentences [][2]int32) data.DocLabels {
	nc := len(Concepts())
	l := data.DocLabels{InForce: make([][]int16, nc), Marked: make([][]int16, nc)}
	for _, sp := range segment(text) {
		l.Starts = append(l.Starts, sp[0])
		l.Ends = append(l.Ends, sp[1])
	}
	for c := range nc {
		l.InForce[c], l.Marked[c] = make([]int16, len(l.Starts)), make([]int16, len(l.Starts))
		for w := range l.Starts {
			l.InForce[c][w], l.Marked[c][w] = -1, -1
		}
	}
	for _, sp := range sentences {
		none := make([]int16, nc)
		for c := range none {
			none[c] = -1
		}
		l.Sentences = append(l.Sentences, data.SentenceLabel{Start: sp[0], End: sp[1], Values: none})
	}
	return l
}

func posIndex(t byte) int {
	for i, f := range posFiles {
		if strings.IndexByte(f.types, t) >= 0 {
			return i
		}
	}
	return -1
}

// segment splits text into words: runs of letters, digits, '-' and '\”; any other non-space rune alone.
func segment(text string) [][2]int32 {
	var out [][2]int32
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '\'' }
	start := -1
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isWord(r):
			if start < 0 {
				start = i
			}
		case start >= 0:
			out = append(out, [2]int32{int32(start), int32(i)})
			start = -1
			fallthrough
		default:
			if !unicode.IsSpace(r) {
				out = append(out, [2]int32{int32(i), int32(i + size)})
			}
		}
		i += size
	}
	if start >= 0 {
		out = append(out, [2]int32{int32(start), int32(len(text))})
	}
	return out
}
