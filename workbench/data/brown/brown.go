package brown

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pkg/errors"
	"github.com/protolab/protolab/workbench/data"
)

// NumDocs is the number of samples (files) of the corpus.
const NumDocs = 500

// Genre is one of the corpus's 15 genres, as its CONTENTS file lists them.
type Genre struct {
	Letter string // "a" … "r": the second letter of its files' names
	Name   string // e.g. "Press: reportage"
	Files  int    // how many samples it has
}

// genres lists the genres in file order; their Files sum to NumDocs.
var genres = [...]Genre{
	{"a", "Press: reportage", 44}, {"b", "Press: editorial", 27}, {"c", "Press: reviews", 17},
	{"d", "Religion", 17}, {"e", "Skill and hobbies", 36}, {"f", "Popular lore", 48},
	{"g", "Belles-lettres", 75}, {"h", "Miscellaneous: government & house organs", 30}, {"j", "Learned", 80},
	{"k", "Fiction: general", 29}, {"l", "Fiction: mystery", 24}, {"m", "Fiction: science", 6},
	{"n", "Fiction: adventure", 29}, {"p", "Fiction: romance", 29}, {"r", "Humor", 9},
}

// Genres returns the 15 genres in file order.
func Genres() []Genre { return append([]Genre(nil), genres[:]...) }

// GenreOf returns the genre of a document id ("ca01" → Press: reportage); ok is false when id is not one of IDs.
func GenreOf(id string) (g Genre, ok bool) {
	if len(id) != 4 || id[0] != 'c' || id[2] < '0' || id[2] > '9' || id[3] < '0' || id[3] > '9' {
		return Genre{}, false
	}
	n := int(id[2]-'0')*10 + int(id[3]-'0')
	for _, g := range genres {
		if g.Letter[0] == id[1] {
			return g, n >= 1 && n <= g.Files
		}
	}
	return Genre{}, false
}

// IDs returns the NumDocs document ids (file names) in corpus order: ca01 … ca44, cb01 … cr09.
func IDs() []string {
	ids := make([]string, 0, NumDocs)
	for _, g := range genres {
		for n := 1; n <= g.Files; n++ {
			ids = append(ids, fmt.Sprintf("c%s%02d", g.Letter, n))
		}
	}
	return ids
}

// Document is one sample of the corpus, kept whole.
type Document struct {
	ID    string `json:"id"`    // the file name, e.g. "ca01"
	Genre string `json:"genre"` // the genre letter, "a" … "r" (Genres)
	Text  string `json:"text"`  // the plain text (package doc, "Plain text")
	Words int    `json:"words"` // tokens holding a letter or a digit (punctuation not counted)
	// Sentences are the byte spans [start, end) in Text of its sentences, one per sentence line of Form C (a
	// headline is one), in order: from the first character written of the sentence's first token to the end of its
	// last (package doc, "Plain text").
	Sentences [][2]int32 `json:"sentences"`
}

// GenreName returns the name of the document's genre ("Press: reportage").
func (d Document) GenreName() string {
	g, _ := GenreOf(d.ID)
	return g.Name
}

// Load reads the NumDocs corpus files of dir (Dir) in corpus order (IDs). A missing folder, a missing file, or a
// file that is empty or holds a token not of the form word/tag is an error naming the file and the fix (`make
// brown` reinstalls the corpus).
func Load(dir string) ([]Document, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, errors.Errorf("brown: the corpus folder %s does not exist; run `make brown` (or set $%s)",
			dir, EnvDir)
	}
	var missing []string
	for _, id := range IDs() {
		if !data.IsFile(filepath.Join(dir, id)) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, errors.Errorf("brown: %s holds %d of the %d corpus files (missing: %s); run `make brown` to "+
			"reinstall the corpus", dir, NumDocs-len(missing), NumDocs, abbreviate(missing, 5))
	}
	docs := make([]Document, 0, NumDocs)
	for _, id := range IDs() {
		d, err := ReadFile(filepath.Join(dir, id))
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// ReadFile reads one corpus file; its base name is the document id.
func ReadFile(path string) (Document, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return Document{}, errors.Wrapf(err, "brown: reading %s; run `make brown` to reinstall the corpus", path)
	}
	return parse(path, filepath.Base(path), src)
}

func abbreviate(s []string, n int) string {
	if len(s) <= n {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:n], ", ") + fmt.Sprintf(", … (%d more)", len(s)-n)
}
