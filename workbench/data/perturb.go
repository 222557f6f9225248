package data

import (
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/pkg/errors"
)

// Perturbation kinds of Perturb: meaning-preserving edits of one word, for robustness tests.
const (
	PerturbSwap    = "swap"    // two adjacent letters of one word exchanged
	PerturbDrop    = "drop"    // one letter of one word deleted
	PerturbInsert  = "insert"  // one random lower-case letter inserted into one word
	PerturbSynonym = "synonym" // one word replaced by a one-word synonym from a lexicon (e.g. wordnet.DB.Synonyms)
)

// WordSpan is a run of ASCII letters in a text: bytes [Start, End).
type WordSpan struct{ Start, End int }

// LetterWords returns the maximal runs of ASCII letters of text, in order ("don't" is two words, "don" and "t").
func LetterWords(text string) []WordSpan {
	var out []WordSpan
	start := -1
	for i := 0; i <= len(text); i++ {
		isLetter := i < len(text) && (text[i] >= 'a' && text[i] <= 'z' || text[i] >= 'A' && text[i] <= 'Z')
		switch {
		case isLetter && start < 0:
			start = i
		case !isLetter && start >= 0:
			out = append(out, WordSpan{start, i})
			start = -1
		}
	}
	return out
}

// Perturb applies one perturbation of the given kind (PerturbSwap, PerturbDrop, PerturbInsert, PerturbSynonym)
// to one word of text (a LetterWords span), chosen uniformly with rng among the eligible words, and returns the
// new text and the word changed. The last word is never changed (robustness tests compare the predictions at the
// last position). Typos need a word of ≥ 3 letters (a swap: two different adjacent letters); a synonym needs a word
// for which synonyms(lower-cased word) returns a one-word alternative of ASCII letters, which replaces it
// (capitalised like the original). ok is false when no word is eligible. An unknown kind, or PerturbSynonym with
// nil synonyms, is an error. The randomness is the caller's rng, not this package's stream.
func Perturb(text, kind string, rng *rand.Rand, synonyms func(word string) []string) (out, word string, ok bool,
	err error) {
	if kind == PerturbSynonym && synonyms == nil {
		return "", "", false, errors.New("data.Perturb: synonym perturbation without a synonym source")
	}
	if kind != PerturbSwap && kind != PerturbDrop && kind != PerturbInsert && kind != PerturbSynonym {
		return "", "", false, errors.Errorf("data.Perturb: unknown kind %q", kind)
	}
	words := LetterWords(text)
	if len(words) > 0 {
		words = words[:len(words)-1]
	}
	type candidate struct {
		span WordSpan
		alts []string // the synonyms (unused for typos)
	}
	var cands []candidate
	for _, w := range words {
		s := text[w.Start:w.End]
		switch kind {
		case PerturbSwap:
			if len(s) >= 3 && swapPositions(s) != nil {
				cands = append(cands, candidate{span: w})
			}
		case PerturbDrop, PerturbInsert:
			if len(s) >= 3 {
				cands = append(cands, candidate{span: w})
			}
		case PerturbSynonym:
			var alts []string
			for _, a := range synonyms(strings.ToLower(s)) {
				if lw := LetterWords(a); a != strings.ToLower(s) && len(lw) == 1 && lw[0] == (WordSpan{0, len(a)}) {
					alts = append(alts, a)
				}
			}
			if len(alts) > 0 {
				cands = append(cands, candidate{span: w, alts: alts})
			}
		}
	}
	if len(cands) == 0 {
		return text, "", false, nil
	}
	c := cands[rng.IntN(len(cands))]
	s := text[c.span.Start:c.span.End]
	var repl string
	switch kind {
	case PerturbSwap:
		pos := swapPositions(s)
		i := pos[rng.IntN(len(pos))]
		b := []byte(s)
		b[i], b[i+1] = b[i+1], b[i]
		repl = string(b)
	case PerturbDrop:
		i := rng.IntN(len(s))
		repl = s[:i] + s[i+1:]
	case PerturbInsert:
		i := rng.IntN(len(s) + 1)
		repl = s[:i] + string(rune('a'+rng.IntN(26))) + s[i:]
	case PerturbSynonym:
		repl = c.alts[rng.IntN(len(c.alts))]
		if unicode.IsUpper(rune(s[0])) {
			repl = strings.ToUpper(repl[:1]) + repl[1:]
		}
	}
	return text[:c.span.Start] + repl + text[c.span.End:], s, true, nil
}

// swapPositions returns the positions i where s[i] ≠ s[i+1] (a swap there changes the word).
func swapPositions(s string) []int {
	var out []int
	for i := 0; i+1 < len(s); i++ {
		if s[i] != s[i+1] {
			out = append(out, i)
		}
	}
	return out
}
