// Package browntest gives tests a Brown corpus without the real one: a few hand-written samples in Form C (the
// format of the installed corpus, testdata/*.formc) with their expected plain text (testdata/*.txt, written by hand
// from the rules of package brown), and Dir, a folder shaped like assets/brown built from them.
package browntest

import (
	"embed"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/protolab/protolab/workbench/data/brown"
)

//go:embed testdata
var files embed.FS

// Sample is one hand-written Form C file and the plain text brown.Parse must render it as.
type Sample struct {
	Name  string // "news", "fiction", "learned"
	FormC string // the file's content
	Text  string // the expected Document.Text
}

// Samples returns the hand-written samples, in name order.
func Samples() []Sample {
	var out []Sample
	for _, name := range []string{"fiction", "learned", "news"} {
		formc, err1 := files.ReadFile("testdata/" + name + ".formc")
		text, err2 := files.ReadFile("testdata/" + name + ".txt")
		if err1 != nil || err2 != nil {
			panic("browntest: testdata lacks " + name + ".formc or " + name + ".txt")
		}
		out = append(out, Sample{Name: name, FormC: string(formc), Text: strings.TrimSuffix(string(text), "\n")})
	}
	return out
}

// Dir writes, under t.TempDir(), a folder shaped like the installed corpus (README, CONTENTS, VERSION and the
// brown.NumDocs files ca01 … cr09) and returns its path. File i (in brown.IDs order) holds sample i mod 3 followed by
// a paragraph naming the file, "This is document <id>.", so that every text is distinct and names its document.
func Dir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	samples := Samples()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README", "BROWN CORPUS (browntest fixture)\n")
	write("CONTENTS", "browntest fixture\n")
	write("VERSION", "browntest\n")
	for i, id := range brown.IDs() {
		write(id, samples[i%len(samples)].FormC+"\n\n\tThis/dt is/bez document/nn "+id+"/np ./.\n")
	}
	return dir
}

// DocText is the plain text brown.Load gives document i (in brown.IDs order) of a Dir folder.
func DocText(i int) string {
	s := Samples()
	return s[i%len(s)].Text + "\nThis is document " + brown.IDs()[i] + "."
}
