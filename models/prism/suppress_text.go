package prism

// The suppression study's data on a corpus without labels (the Brown corpus): its documents carry no sentence
// spans and no concept, so the prompts and the perplexity text are chosen with the keyword set alone. The
// synthetic corpus keeps SuppressPrompts and SplitByKeywords (suppress.go).

import (
	"strings"
	"unicode"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
)

// PromptMinWords is the fewest words a sentence needs to give a prompt of KeywordFreePrompts: shorter ones are
// mostly headlines and fragments ("Voters reject plan").
const PromptMinWords = 4

// Sentences splits text into sentences: one ends after '.', '!' or '?' (and any closing quotes or brackets) when
// white space or the end of the text follows, and at every line break. Spaces around a sentence are trimmed and
// empty ones dropped. There is no list of abbreviations ("Mr. Smith" splits after "Mr."): the prompts need
// keyword-free pieces of real text, not a parse.
func Sentences(text string) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	rs := []rune(text)
	start := 0
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == '\n':
			add(string(rs[start:i]))
			start = i + 1
		case strings.ContainsRune(".!?", rs[i]):
			j := i + 1
			for j < len(rs) && strings.ContainsRune("\"')]", rs[j]) {
				j++
			}
			if j == len(rs) || unicode.IsSpace(rs[j]) {
				add(string(rs[start:j]))
				start, i = j, j-1
			}
		}
	}
	add(string(rs[start:]))
	return out
}

// firstWords returns s up to the end of its n-th word (words as SplitWords finds them), or s whole when it has
// fewer, and the number of words s has.
func firstWords(s string, n int) (string, int) {
	words, end, in := 0, len(s), false
	for i, r := range s {
		letter := unicode.IsLetter(r) || unicode.IsDigit(r)
		if in && !letter && words == n {
			end = min(end, i)
		}
		if letter && !in {
			words++
		}
		in = letter
	}
	if words <= n {
		end = len(s)
	}
	return s[:end], words
}

// hasKeyword reports whether text has a word of set.
func hasKeyword(text string, set map[string]bool) bool {
	for _, w := range SplitWords(text) {
		if set[w] {
			return true
		}
	}
	return false
}

// keywordSet returns kw as a set.
func keywordSet(kw []string) map[string]bool {
	set := make(map[string]bool, len(kw))
	for _, k := range kw {
		set[k] = true
	}
	return set
}

// KeywordFreePrompts returns n prompts made from texts without labels: [EOS] + the first `words` words of a sentence
// (Sentences) that has at least PromptMinWords words and no keyword of kw, so that the prompt is real text that does
// not name the concept. Sentences are taken in turn from each document (the first eligible sentence of every
// document, then the second, ...), so that the prompts span the documents rather than the first few. It errors when
// the texts hold fewer than n such sentences, or when words < 1.
func KeywordFreePrompts(m *lm.Model, texts []string, n, words int, kw []string) ([][]int32, error) {
	if words < 1 {
		return nil, errors.Errorf("prism.KeywordFreePrompts: %d words per prompt, want ≥ 1", words)
	}
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	set := keywordSet(kw)
	per := make([][]string, len(texts)) // the eligible prompts of each document, in order
	total := 0
	for i, text := range texts {
		for _, s := range Sentences(text) {
			p, count := firstWords(s, words)
			if count >= PromptMinWords && !hasKeyword(s, set) {
				per[i] = append(per[i], p)
				total++
			}
		}
	}
	if total < n {
		return nil, errors.Errorf("prism.KeywordFreePrompts: %d documents hold %d sentences of ≥ %d words without a "+
			"keyword, %d prompts asked for; ask for fewer samples or read more documents", len(texts), total,
			PromptMinWords, n)
	}
	out := make([][]int32, 0, n)
	for k := 0; len(out) < n; k++ {
		for i := 0; i < len(per) && len(out) < n; i++ {
			if k < len(per[i]) {
				out = append(out, append([]int32{d.EOS}, d.Tokenizer.Encode(per[i][k])...))
			}
		}
	}
	return out, nil
}

// SplitSequencesByKeywords is SplitByKeywords for long documents without labels: it packs texts (in order, each
// followed by EOS) into sequences of T+1 tokens (T = data.seq_len) and puts each sequence in concept when its decoded
// text has a keyword of kw, in other otherwise (a word cut at a sequence's edge counts as it decodes). Each part
// keeps at most maxSeq sequences, evenly spaced over the text (spread), so that it spans the documents. A Brown
// sample of about 2,000 words nearly always holds some word of a concept, so a split by documents would leave
// almost nothing without it. It errors when the texts are too short for one sequence.
func SplitSequencesByKeywords(m *lm.Model, texts, kw []string, maxSeq int) (other, concept [][]int32, err error) {
	prep, err := m.Data()
	if err != nil {
		return nil, nil, err
	}
	docs := make([][]int32, len(texts))
	for i, text := range texts {
		docs[i] = prep.Tokenizer.Encode(text)
	}
	p, err := data.Pack(docs, m.Config.Data.SeqLen, prep.EOS)
	if err != nil {
		return nil, nil, errors.WithMessage(err, "prism.SplitSequencesByKeywords")
	}
	set := keywordSet(kw)
	for s := range p.NumSequences() {
		seq := p.Sequence(s)
		if hasKeyword(prep.Tokenizer.DecodeString(seq), set) {
			concept = append(concept, seq)
		} else {
			other = append(other, seq)
		}
	}
	return spread(other, maxSeq), spread(concept, maxSeq), nil
}

// spread keeps at most n of xs, evenly spaced: xs[⌊j·len(xs)/n⌋] for j < n; xs whole when it has at most n.
func spread(xs [][]int32, n int) [][]int32 {
	if len(xs) <= n {
		return xs
	}
	out := make([][]int32, n)
	for j := range out {
		out[j] = xs[j*len(xs)/n]
	}
	return out
}
