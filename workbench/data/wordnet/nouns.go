package wordnet

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/pkg/errors"
)

// SupersenseWords returns the written forms of the nouns whose most frequent sense has the given supersense (a
// noun.* entry of LexNames, e.g. "noun.food"): a word for a concept that is defined by WordNet alone, as the
// suppression study's Brown run defines its concept.
//
// The rule: a lemma of index.noun belongs when its first-listed synset (WordNet lists a lemma's senses by their
// frequency in its sense-tagged texts, the most frequent first) is in that lexicographer file. A lemma with some
// other sense of the supersense does not ("fish" is first an animal, "table" first furniture, though each has a
// food sense): with any sense counting, common polysemous words ("must", "water", "course", "side") would make
// most text look like the concept. Only single-word lemmas of letters count (the keyword matchers compare whole
// words, case-sensitively). Each lemma gives itself and its plural (the regular English plural, and every inflected
// form noun.exc maps to it: "loaves" for "loaf"), in lower case only: a capitalised form would match names ("Rusk").
// What the rule cannot see: a verb or adjective spelt like such a noun counts ("feed", "bitter"), and a word whose
// first sense is the supersense's head in noun.Tops ("food" itself) does not. The result is sorted, without
// repeats. It reads index.noun and noun.exc from db.Dir; it errors naming the file when one is missing or
// malformed, and when supersense is not a noun supersense.
func (db *DB) SupersenseWords(supersense string) ([]string, error) {
	lex := slices.Index(LexNames[:], supersense)
	if lex < 0 || !strings.HasPrefix(supersense, "noun.") {
		return nil, errors.Errorf("wordnet: supersense %q is not a noun lexicographer file; want one of the noun.* "+
			"entries of LexNames (e.g. \"noun.food\")", supersense)
	}
	nounLex := map[int64]int{} // synset offset in data.noun → lex_filenum
	for i := range db.Synsets {
		if s := &db.Synsets[i]; s.Type == 'n' {
			nounLex[s.Offset] = s.LexFile
		}
	}
	first, err := readFirstSenses(filepath.Join(db.Dir, "index.noun"))
	if err != nil {
		return nil, err
	}
	lemmas := map[string]bool{}
	for lemma, off := range first {
		l, ok := nounLex[off]
		if !ok {
			return nil, errors.Errorf("wordnet: index.noun names synset %08d for %q, which data.noun lacks; the "+
				"database is inconsistent: run `make wordnet` to reinstall it", off, lemma)
		}
		if l == lex && isLetters(lemma) {
			lemmas[lemma] = true
		}
	}
	exc, err := readExceptions(filepath.Join(db.Dir, "noun.exc"))
	if err != nil {
		return nil, err
	}
	forms := map[string]bool{}
	add := func(w string) { forms[strings.ToLower(w)] = true }
	for lemma := range lemmas {
		add(lemma)
		add(plural(lemma))
	}
	for inflected, bases := range exc {
		for _, b := range bases {
			if lemmas[b] && isLetters(inflected) {
				add(inflected)
			}
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for w := range forms {
			if !yield(w) {
				return
			}
		}
	}), nil
}

// plural is the regular English plural of a noun: -es after s, x, z, ch and sh, -ies for a consonant before a
// final y, -s otherwise.
func plural(w string) string {
	switch {
	case strings.HasSuffix(w, "s") || strings.HasSuffix(w, "x") || strings.HasSuffix(w, "z") ||
		strings.HasSuffix(w, "ch") || strings.HasSuffix(w, "sh"):
		return w + "es"
	case len(w) > 1 && w[len(w)-1] == 'y' && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		return w[:len(w)-1] + "ies"
	}
	return w + "s"
}

// isLetters reports whether w is a non-empty run of letters (one word to the keyword matchers).
func isLetters(w string) bool {
	return w != "" && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}

// readFirstSenses reads an index file (wndb(5): lemma pos synset_cnt p_cnt [ptr_symbol…] sense_cnt tagsense_cnt
// synset_offset…) and returns each lemma's first synset offset.
func readFirstSenses(path string) (map[string]int64, error) {
	out := map[string]int64{}
	err := scanLines(path, func(lineNo int, f []string) error {
		if len(f) < 6 {
			return errors.Errorf("%d fields, want at least 6 (lemma pos synset_cnt p_cnt sense_cnt tagsense_cnt "+
				"offset…)", len(f))
		}
		pcnt, err := strconv.Atoi(f[3])
		if err != nil || pcnt < 0 || len(f) < 4+pcnt+3 {
			return errors.Errorf("p_cnt %q does not fit a line of %d fields", f[3], len(f))
		}
		off, err := strconv.ParseInt(f[4+pcnt+2], 10, 64)
		if err != nil {
			return errors.Errorf("first synset_offset %q is not a number", f[4+pcnt+2])
		}
		out[f[0]] = off
		return nil
	})
	return out, err
}

// readExceptions reads an exception list (wndb(5) exc: inflected_form base_form…) into inflected → bases.
func readExceptions(path string) (map[string][]string, error) {
	out := map[string][]string{}
	err := scanLines(path, func(lineNo int, f []string) error {
		if len(f) < 2 {
			return errors.Errorf("%d fields, want an inflected form and at least one base form", len(f))
		}
		out[f[0]] = append(out[f[0]], f[1:]...)
		return nil
	})
	return out, err
}

// scanLines calls fn with the fields of every line of path but the license header (lines that begin with two
// spaces) and blank ones; an error names the file and the line.
func scanLines(path string, fn func(lineNo int, fields []string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return errors.Wrapf(err, "wordnet: opening %q (run `make wordnet` to install the whole database)", path)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := sc.Text()
		fields := strings.Fields(line)
		if strings.HasPrefix(line, "  ") || len(fields) == 0 {
			continue
		}
		if err := fn(lineNo, fields); err != nil {
			return errors.WithMessagef(err, "wordnet: %s:%d", path, lineNo)
		}
	}
	return errors.Wrapf(sc.Err(), "wordnet: reading %q", path)
}
