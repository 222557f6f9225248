package wordnet

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pkg/errors"
)

// LexNames are the 45 lexicographer file names of WordNet 3.0 (lexnames(5)), indexed by lex_filenum: the
// supersense of a synset.
var LexNames = [...]string{
	"adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact", "noun.attribute",
	"noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group",
	"noun.location", "noun.motive", "noun.object", "noun.person", "noun.phenomenon", "noun.plant",
	"noun.possession", "noun.process", "noun.quantity", "noun.relation", "noun.shape", "noun.state",
	"noun.substance", "noun.time", "verb.body", "verb.change", "verb.cognition", "verb.communication",
	"verb.competition", "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
	"verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl",
}

// Part-of-speech files of the database, in load order, with the synset types each may contain.
var posFiles = []struct {
	file, types, name string
}{
	{"data.noun", "n", "noun"},
	{"data.verb", "v", "verb"},
	{"data.adj", "as", "adjective"},
	{"data.adv", "r", "adverb"},
}

// Synset is one WordNet synset (a line of a data.pos file).
type Synset struct {
	Offset     int64    // synset_offset: byte offset of the line in its data file
	Type       byte     // ss_type: 'n' noun, 'v' verb, 'a' adjective, 's' adjective satellite, 'r' adverb
	LexFile    int      // lex_filenum, index into LexNames
	Words      []string // lemmas as written, '_' replaced by ' ', adjective markers like "(a)" removed
	Definition string   // the gloss without its quoted examples
	Examples   []string // the quoted example sentences of the gloss
}

// Supersense returns the synset's lexicographer file name, e.g. "noun.person".
func (s *Synset) Supersense() string { return LexNames[s.LexFile] }

// POS returns "noun", "verb", "adjective" (satellites included) or "adverb".
func (s *Synset) POS() string {
	for _, f := range posFiles {
		if strings.IndexByte(f.types, s.Type) >= 0 {
			return f.name
		}
	}
	return ""
}

// DB is a loaded WordNet database.
type DB struct {
	Dir     string
	Synsets []Synset         // all synsets: nouns, verbs, adjectives, adverbs, each in file order
	byWord  map[string][]int // normalized lemma → indices into Synsets
}

// normalize maps a lemma or query to its lookup key: lower case, spaces for underscores.
func normalize(w string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(w), "_", " "))
}

// Load parses data.noun, data.verb, data.adj and data.adv from dir. It checks every line against wndb(5)
// (field counts, the synset offset equal to the line's byte offset, the synset type of the file, the
// lex_filenum range) and reports the file and line of the first violation.
func Load(dir string) (*DB, error) {
	db := &DB{Dir: dir, byWord: make(map[string][]int)}
	for _, pf := range posFiles {
		if err := db.loadFile(filepath.Join(dir, pf.file), pf.types); err != nil {
			return nil, err
		}
	}
	return db, nil
}

func (db *DB) loadFile(path, types string) error {
	f, err := os.Open(path)
	if err != nil {
		return errors.Wrapf(err, "opening WordNet data file %q (is %q a WordNet 3.0 dict folder?)", path, filepath.Dir(path))
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var offset int64
	n := 0
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := sc.Text()
		lineOffset := offset
		offset += int64(len(line)) + 1
		if strings.HasPrefix(line, "  ") { // license header
			continue
		}
		s, err := parseLine(line, lineOffset, types)
		if err != nil {
			return errors.WithMessagef(err, "%s:%d", path, lineNo)
		}
		idx := len(db.Synsets)
		db.Synsets = append(db.Synsets, s)
		for _, w := range s.Words {
			k := normalize(w)
			if l := db.byWord[k]; len(l) == 0 || l[len(l)-1] != idx {
				db.byWord[k] = append(l, idx)
			}
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return errors.Wrapf(err, "reading WordNet data file %q", path)
	}
	if n == 0 {
		return errors.Errorf("WordNet data file %q holds no synsets", path)
	}
	return nil
}

// parseLine parses one synset line: offset lex_filenum ss_type w_cnt (word lex_id)… p_cnt (ptr)… [frames] | gloss.
func parseLine(line string, lineOffset int64, types string) (Synset, error) {
	var s Synset
	bar := strings.IndexByte(line, '|')
	if bar < 0 {
		return s, errors.New("no '|' before the gloss")
	}
	f := strings.Fields(line[:bar])
	if len(f) < 6 {
		return s, errors.Errorf("%d fields before the gloss, want at least 6", len(f))
	}
	off, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || len(f[0]) != 8 {
		return s, errors.Errorf("synset_offset %q is not an 8-digit number", f[0])
	}
	if off != lineOffset {
		return s, errors.Errorf("synset_offset %d but the line starts at byte %d (corrupt or edited file)", off, lineOffset)
	}
	s.Offset = off
	if s.LexFile, err = strconv.Atoi(f[1]); err != nil || s.LexFile < 0 || s.LexFile >= len(LexNames) {
		return s, errors.Errorf("lex_filenum %q, want 00..%d", f[1], len(LexNames)-1)
	}
	if len(f[2]) != 1 || !strings.Contains(types, f[2]) {
		return s, errors.Errorf("ss_type %q, want one of %q in this file", f[2], types)
	}
	s.Type = f[2][0]
	wcnt, err := strconv.ParseUint(f[3], 16, 8)
	if err != nil || wcnt == 0 {
		return s, errors.Errorf("w_cnt %q is not a positive 2-digit hex number", f[3])
	}
	i := 4
	if len(f) < i+2*int(wcnt)+1 {
		return s, errors.Errorf("w_cnt=%d words announced, line too short", wcnt)
	}
	for range wcnt {
		s.Words = append(s.Words, cleanLemma(f[i]))
		i += 2 // word, lex_id
	}
	pcnt, err := strconv.Atoi(f[i])
	if err != nil || pcnt < 0 {
		return s, errors.Errorf("p_cnt %q is not a 3-digit number", f[i])
	}
	i++
	if len(f) < i+4*pcnt {
		return s, errors.Errorf("p_cnt=%d pointers announced, line too short", pcnt)
	}
	i += 4 * pcnt
	if s.Type == 'v' && i < len(f) { // frames: f_cnt (+ f_num w_num)…
		fcnt, err := strconv.Atoi(f[i])
		if err != nil {
			return s, errors.Errorf("f_cnt %q is not a number", f[i])
		}
		i += 1 + 3*fcnt
	}
	if i != len(f) {
		return s, errors.Errorf("%d fields before the gloss, the counts account for %d", len(f), i)
	}
	s.Definition, s.Examples = splitGloss(line[bar+1:])
	return s, nil
}

// cleanLemma turns "ready_to_hand(p)" into "ready to hand".
func cleanLemma(w string) string {
	if j := strings.IndexByte(w, '('); j > 0 && strings.HasSuffix(w, ")") {
		w = w[:j]
	}
	return strings.ReplaceAll(w, "_", " ")
}

// splitGloss separates a gloss into its definition (the text before the first quote) and its quoted examples;
// an unterminated final quote still yields an example.
func splitGloss(g string) (definition string, examples []string) {
	parts := strings.Split(g, "\"")
	definition = strings.TrimRight(strings.TrimSpace(parts[0]), "; ")
	for j := 1; j < len(parts); j += 2 {
		if ex := strings.TrimSpace(parts[j]); ex != "" {
			examples = append(examples, ex)
		}
	}
	return definition, examples
}

// Lookup returns the synsets containing word (case-insensitive; spaces or underscores), in load order.
func (db *DB) Lookup(word string) []*Synset {
	idx := db.byWord[normalize(word)]
	out := make([]*Synset, len(idx))
	for i, j := range idx {
		out[i] = &db.Synsets[j]
	}
	return out
}

// Synonyms returns the other words of every synset containing word, lower-cased, de-duplicated and sorted;
// nil when word is unknown or has no synonyms.
func (db *DB) Synonyms(word string) []string {
	key := normalize(word)
	seen := map[string]bool{key: true}
	var out []string
	for _, s := range db.Lookup(word) {
		for _, w := range s.Words {
			if k := normalize(w); !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Supersenses returns the distinct supersenses of word's synsets, in load order (nouns, verbs, adjectives,
// adverbs); nil when word is unknown.
func (db *DB) Supersenses(word string) []string {
	var out []string
	seen := map[int]bool{}
	for _, s := range db.Lookup(word) {
		if !seen[s.LexFile] {
			seen[s.LexFile] = true
			out = append(out, s.Supersense())
		}
	}
	return out
}

// Count returns the number of synsets of a part of speech: "noun", "verb", "adjective" (with satellites) or
// "adverb".
func (db *DB) Count(pos string) int {
	n := 0
	for i := range db.Synsets {
		if db.Synsets[i].POS() == pos {
			n++
		}
	}
	return n
}
