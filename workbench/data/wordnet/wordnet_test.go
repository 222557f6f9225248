package wordnet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
)

// licenseHeader is the start of the Princeton license block that opens every data file: lines that begin with two
// spaces and the line number, with trailing spaces as in the real files.
var licenseHeader = []string{
	"1 This software and database is being provided to you, the LICENSEE, by  ",
	"2 Princeton University under the following license.  By obtaining, using  ",
	"3 and/or copying this software and database, you agree that you have  ",
	"4 read, understood, and will comply with these terms and conditions.:  ",
	"5   ",
	"6 WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.  ",
}

// fixtureSynsets holds, per data file, synset lines without their offset (the writer prepends the true byte offset).
var fixtureSynsets = map[string][]string{
	"data.noun": {
		`18 n 02 man 0 adult_male 0 002 @ 00000000 n 0000 ~ 00000000 n 0000 | an adult person who is male (as opposed to a woman); "there were two women and six men on the bus"`,
		`15 n 02 city 0 metropolis 0 000 | a large and densely populated urban area; "they drove through the city"; "the city 's parks`,
		`06 n 03 car 0 auto 0 automobile 0 001 @ 00000000 n 0000 | a motor vehicle with four wheels; usually propelled by an internal combustion engine; "he needs a car to get to work"`,
		`13 n 01 apple 0 000 | fruit with red or yellow or green skin and sweet to tart crisp whitish flesh`,
	},
	"data.verb": {
		`38 v 02 run 0 go_quickly 0 001 @ 00000000 v 0000 02 + 01 00 + 02 01 | move fast by using one's feet; "Don't run--you'll be out of breath"`,
		`34 v 01 eat 0 000 01 + 08 00 | take in solid food; "She was eating a banana"; "What did you eat for dinner last night?"`,
	},
	"data.adj": {
		`00 a 01 happy 0 001 & 00000000 a 0000 | enjoying or showing or marked by joy or pleasure; "a happy smile"`,
		`00 s 02 glad(p) 0 felicitous 0 001 & 00000000 a 0000 | eagerly disposed to act or to be of service; "glad to help"`,
	},
	"data.adv": {
		`02 r 02 quickly 0 rapidly 0 000 | with rapid movements; "he works quickly"`,
	},
}

// writeFixture writes a WordNet database folder in the exact wndb(5) format and returns its path. edit, if not
// nil, may change a file's content before it is written.
func writeFixture(t *testing.T, edit func(file string, content string) string) string {
	t.Helper()
	dir := t.TempDir()
	for file, lines := range fixtureSynsets {
		var b strings.Builder
		for _, h := range licenseHeader {
			b.WriteString("  " + h + "\n")
		}
		for _, l := range lines {
			fmt.Fprintf(&b, "%08d %s  \n", b.Len(), l)
		}
		content := b.String()
		if edit != nil {
			content = edit(file, content)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644))
	}
	return dir
}

func TestLoad_Fixture(t *testing.T) {
	db, err := Load(writeFixture(t, nil))
	require.NoError(t, err)
	require.Len(t, db.Synsets, 9)
	require.Equal(t, 4, db.Count("noun"))
	require.Equal(t, 2, db.Count("verb"))
	require.Equal(t, 2, db.Count("adjective"))
	require.Equal(t, 1, db.Count("adverb"))

	man := db.Synsets[0]
	require.Equal(t, []string{"man", "adult male"}, man.Words)
	require.Equal(t, "noun.person", man.Supersense())
	require.Equal(t, "an adult person who is male (as opposed to a woman)", man.Definition)
	require.Equal(t, []string{"there were two women and six men on the bus"}, man.Examples)
	headerBytes := 0
	for _, h := range licenseHeader {
		headerBytes += len("  " + h + "\n")
	}
	require.Equal(t, int64(headerBytes), man.Offset) // the first synset starts right after the license header

	city := db.Lookup("metropolis")[0]
	require.Equal(t, "noun.location", city.Supersense())
	require.Equal(t, []string{"they drove through the city", "the city 's parks"}, city.Examples) // unterminated quote

	car := db.Lookup("Car")[0]
	require.Equal(t, "a motor vehicle with four wheels; usually propelled by an internal combustion engine", car.Definition)

	run := db.Lookup("go_quickly")[0] // underscores or spaces
	require.Equal(t, "verb.motion", run.Supersense())
	require.Equal(t, "verb", run.POS())
	require.Equal(t, []string{"Don't run--you'll be out of breath"}, run.Examples)

	glad := db.Lookup("glad")[0]
	require.Equal(t, []string{"glad", "felicitous"}, glad.Words) // "(p)" marker removed
	require.Equal(t, byte('s'), glad.Type)
	require.Equal(t, "adjective", glad.POS())
	require.Equal(t, "adj.all", glad.Supersense())

	require.Equal(t, []string{"auto", "automobile"}, db.Synonyms("car"))
	require.Equal(t, []string{"automobile", "car"}, db.Synonyms("AUTO"))
	require.Equal(t, []string{"go quickly"}, db.Synonyms("run"))
	require.Nil(t, db.Synonyms("apple")) // a one-word synset
	require.Nil(t, db.Synonyms("zebra"))
	require.Equal(t, []string{"verb.motion"}, db.Supersenses("run"))
	require.Equal(t, []string{"adv.all"}, db.Supersenses("rapidly"))
	require.Nil(t, db.Supersenses("zebra"))
}

func TestCorpus_Fixture(t *testing.T) {
	db, err := Load(writeFixture(t, nil))
	require.NoError(t, err)
	c := db.Corpus()
	require.NoError(t, c.Validate())
	require.Len(t, c.Texts, 9)
	require.Equal(t, "man, adult male: an adult person who is male (as opposed to a woman). there were two women and six men on the bus.",
		c.Texts[0])
	require.Equal(t, "eat: take in solid food. She was eating a banana. What did you eat for dinner last night?", c.Texts[5])

	ssIdx, err := c.ConceptIndex("supersense")
	require.NoError(t, err)
	posIdx, err := c.ConceptIndex("pos")
	require.NoError(t, err)
	l := c.Labels[5]
	var words []string
	for w := range l.Starts {
		word := c.Texts[5][l.Starts[w]:l.Ends[w]]
		words = append(words, word)
		require.Equal(t, "verb.consumption", c.Concepts[ssIdx].Values[l.InForce[ssIdx][w]])
		require.Equal(t, "verb", c.Concepts[posIdx].Values[l.InForce[posIdx][w]])
		if word == "eat" {
			require.Equal(t, l.InForce[ssIdx][w], l.Marked[ssIdx][w])
		} else {
			require.Equal(t, int16(-1), l.Marked[ssIdx][w], "word %q", word)
		}
	}
	require.Equal(t, strings.Fields("eat : take in solid food . She was eating a banana . What did you eat for dinner last night ?"), words)
	require.Len(t, l.Sentences, 3)
	require.Equal(t, "She was eating a banana.", c.Texts[5][l.Sentences[1].Start:l.Sentences[1].End])
}

// TestWordLabels_HandCase: a text of other origin (a Brown sentence) gets the words Corpus would segment (runs of
// letters, digits, hyphens and apostrophes; any other mark alone), Corpus's schema with no value, and its sentence
// spans.
func TestWordLabels_HandCase(t *testing.T) {
	text := `It was won by Mayor-nominate Ivan Allen Jr. "Atlanta's", he said.`
	l := WordLabels(text, [][2]int32{{0, 43}, {44, 65}})
	c := &data.Corpus{Source: "hand", Concepts: Concepts(), Texts: []string{text}, Labels: []data.DocLabels{l}}
	require.NoError(t, c.Validate())
	var words []string
	for w := range l.Starts {
		words = append(words, text[l.Starts[w]:l.Ends[w]])
		for k := range Concepts() {
			require.Equal(t, int16(-1), l.InForce[k][w])
			require.Equal(t, int16(-1), l.Marked[k][w])
		}
	}
	require.Equal(t, []string{"It", "was", "won", "by", "Mayor-nominate", "Ivan", "Allen", "Jr", ".", `"`,
		"Atlanta's", `"`, ",", "he", "said", "."}, words)
	require.Len(t, l.Sentences, 2)
	require.Equal(t, `"Atlanta's", he said.`, text[l.Sentences[1].Start:l.Sentences[1].End])
	require.Equal(t, []int16{-1, -1}, l.Sentences[1].Values)
}

func TestLoad_Errors(t *testing.T) {
	_, err := Load(t.TempDir())
	require.ErrorContains(t, err, "data.noun")

	for name, tc := range map[string]struct {
		file string
		edit func(string) string
		want string
	}{
		"shifted offsets": {"data.verb", func(s string) string { return "  0 extra header line\n" + s }, "data.verb:8: synset_offset"},
		"wrong ss_type":   {"data.adv", func(s string) string { return strings.Replace(s, " r 02 ", " n 02 ", 1) }, `ss_type "n"`},
		"bad lex_filenum": {"data.adv", func(s string) string { return strings.Replace(s, " 02 r ", " 77 r ", 1) }, `lex_filenum "77"`},
		"pointer count": {"data.noun", func(s string) string {
			return strings.Replace(s, "man 0 adult_male 0 002", "man 0 adult_male 0 003", 1)
		}, "p_cnt=3"},
		"word count": {"data.noun", func(s string) string { return strings.Replace(s, "02 man", "05 man", 1) }, "data.noun:7"},
		"no gloss":   {"data.adj", func(s string) string { return strings.Replace(s, "| enjoying", "enjoying", 1) }, "no '|'"},
		"empty file": {"data.adj", func(s string) string { return "  1 header only\n" }, "holds no synsets"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeFixture(t, func(file, content string) string {
				if file == tc.file {
					return tc.edit(content)
				}
				return content
			})
			_, err := Load(dir)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, filepath.Join(dir, tc.file))
		})
	}
}

func TestDir(t *testing.T) {
	fixture := writeFixture(t, nil)
	t.Setenv(EnvDir, fixture)
	got, err := Dir()
	require.NoError(t, err)
	require.Equal(t, fixture, got)

	t.Setenv(EnvDir, t.TempDir())
	_, err = Dir()
	require.ErrorContains(t, err, "does not hold a WordNet database")

	// Default: DefaultSubdir under a parent directory, up to the module root.
	t.Setenv(EnvDir, "")
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	sub := filepath.Join(root, "workbench", "data")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	t.Chdir(sub)
	_, err = Dir()
	require.ErrorContains(t, err, "run `make wordnet`")

	dict := filepath.Join(root, DefaultSubdir)
	require.NoError(t, os.MkdirAll(dict, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dict, "data.noun"), []byte("  1 x\n"), 0o644))
	got, err = Dir()
	require.NoError(t, err)
	require.Equal(t, dict, got)
}

// TestRealWordNet parses the real database when `make wordnet` (or $PROTOLAB_WORDNET) provides it.
func TestRealWordNet(t *testing.T) {
	dir, err := Dir()
	if err != nil {
		t.Skipf("WordNet 3.0 database not installed, run `make wordnet` to enable this test: %v", err)
	}
	db, err := Load(dir)
	require.NoError(t, err)
	// WordNet 3.0 synset counts (wnstats(7WN)).
	require.Equal(t, 82115, db.Count("noun"))
	require.Equal(t, 13767, db.Count("verb"))
	require.Equal(t, 18156, db.Count("adjective"))
	require.Equal(t, 3621, db.Count("adverb"))
	require.Contains(t, db.Synonyms("car"), "automobile")
	require.Contains(t, db.Supersenses("dog"), "noun.animal")
	require.Contains(t, db.Supersenses("woman"), "noun.person")
	if testing.Short() {
		return
	}
	c := db.Corpus()
	require.NoError(t, c.Validate())
	require.Greater(t, len(c.Texts), 110000)
}
