package brown_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/brown/browntest"
)

// TestParse_Samples renders each hand-written Form C sample and compares it with its hand-written plain text.
func TestParse_Samples(t *testing.T) {
	ids := map[string]string{"fiction": "ck01", "learned": "cj72", "news": "ca01"}
	for _, s := range browntest.Samples() {
		d, err := brown.Parse(ids[s.Name], []byte(s.FormC))
		require.NoError(t, err, s.Name)
		require.Equal(t, s.Text, d.Text, s.Name)
		require.Equal(t, ids[s.Name], d.ID)
		require.Equal(t, ids[s.Name][1:2], d.Genre)
		if s.Name == "news" {
			// Counted by hand: 22 + 8 + 3 (the headline) + 16 words; punctuation and quotes are not words.
			require.Equal(t, 49, d.Words)
			require.Equal(t, "Press: reportage", d.GenreName())
		}
	}
}

// TestParse_Sentences: each Form C sentence line (a headline included) is one span of the plain text, written by
// hand from the samples: a doubled mark dropped stays out, a closing quote written after the period stays in.
func TestParse_Sentences(t *testing.T) {
	want := map[string][]string{
		"fiction": {"Thirty-three", "Scotty did not go back to school.", "His father tried to make the food a topic.",
			`"The blueberry pie is good, Scotty.`, `I recommend it".`, `Scotty murmured, "No, thanks", so softly.`,
			"Since his seizure, Scotty had had little appetite;", "yet his face was fuller.", `"Is he ill?`,
			"Not at all!", `It's 'See Joe, see Jim'", he says.`},
		"learned": {`With a "special award" to William A. (Bill) Shea, the list was completed.`,
			"During World War 2, he was a lieutenant.", "Two metabolites (1, and 2) of the acid (reference (8)) act.",
			`Drill a hole 1-1/4" from one end, counts / minute and/or 1/2 of the bar.`},
		"news": {"The Fulton County Grand Jury said Friday an investigation of Atlanta's recent primary election " +
			`produced "no evidence" that any irregularities took place.`,
			"It was won by Mayor-nominate Ivan Allen Jr.", "Voters reject plan",
			`"Only a relative handful of such reports was received", the jury said, "considering the widespread ` +
				`interest".`},
	}
	for _, s := range browntest.Samples() {
		d, err := brown.Parse("ca01", []byte(s.FormC))
		require.NoError(t, err, s.Name)
		var got []string
		for _, sp := range d.Sentences {
			got = append(got, d.Text[sp[0]:sp[1]])
		}
		require.Equal(t, want[s.Name], got, s.Name)
	}
}

func TestParse_Errors(t *testing.T) {
	for name, tc := range map[string]struct{ id, src, want string }{
		"no slash":      {"ca01", "\tThe/at jury/nn said ./.\n", `line 1: token "said" is not word/tag`},
		"empty word":    {"ca01", "\n\n\tThe/at /nn\n", `line 3: token "/nn"`},
		"empty tag":     {"ca01", "\tThe/at jury/\n", `token "jury/"`},
		"empty file":    {"ca01", "", "holds no word/tag token"},
		"only blanks":   {"ca01", "\n\n\t \n", "holds no word/tag token"},
		"not an id":     {"cz01", "\tThe/at\n", `"cz01" is not a corpus file name`},
		"number too hi": {"ca45", "\tThe/at\n", `"ca45" is not a corpus file name`},
	} {
		_, err := brown.Parse(tc.id, []byte(tc.src))
		require.ErrorContains(t, err, tc.want, name)
		if !strings.Contains(name, "id") && !strings.Contains(name, "number") {
			require.ErrorContains(t, err, "make brown", name)
		}
	}
}

func TestIDs_Genres(t *testing.T) {
	ids := brown.IDs()
	require.Len(t, ids, brown.NumDocs)
	require.Equal(t, "ca01", ids[0])
	require.Equal(t, "ca44", ids[43])
	require.Equal(t, "cr09", ids[len(ids)-1])
	require.True(t, slices.IsSorted(ids))
	require.Len(t, slices.Compact(slices.Clone(ids)), brown.NumDocs)
	total := 0
	for _, g := range brown.Genres() {
		total += g.Files
	}
	require.Equal(t, brown.NumDocs, total)
	g, ok := brown.GenreOf("cj80")
	require.True(t, ok)
	require.Equal(t, "Learned", g.Name)
	for _, bad := range []string{"cj81", "ca00", "ci01", "xa01", "ca1", "ca011"} {
		_, ok := brown.GenreOf(bad)
		require.False(t, ok, bad)
	}
}

func TestLoad_Fixture(t *testing.T) {
	dir := browntest.Dir(t)
	docs, err := brown.Load(dir)
	require.NoError(t, err)
	require.Len(t, docs, brown.NumDocs)
	for i, d := range docs {
		require.Equal(t, brown.IDs()[i], d.ID)
		require.Equal(t, browntest.DocText(i), d.Text, d.ID)
		require.Equal(t, d.ID[1:2], d.Genre)
	}
}

func TestLoad_Errors(t *testing.T) {
	_, err := brown.Load(filepath.Join(t.TempDir(), "nope"))
	require.ErrorContains(t, err, "does not exist; run `make brown`")

	dir := browntest.Dir(t)
	require.NoError(t, os.Remove(filepath.Join(dir, "cr09")))
	require.NoError(t, os.Remove(filepath.Join(dir, "cb07")))
	_, err = brown.Load(dir)
	require.ErrorContains(t, err, "holds 498 of the 500 corpus files (missing: cb07, cr09); run `make brown`")

	dir = browntest.Dir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cg12"), []byte("\n\n\tThe/at jury/nn\n\tsaid\n"), 0o644))
	_, err = brown.Load(dir)
	require.ErrorContains(t, err, filepath.Join(dir, "cg12")+` line 4: token "said" is not word/tag`)
	require.ErrorContains(t, err, "make brown")

	dir = browntest.Dir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cp03"), nil, 0o644))
	_, err = brown.Load(dir)
	require.ErrorContains(t, err, filepath.Join(dir, "cp03")+" holds no word/tag token")
}

func TestDir(t *testing.T) {
	fixture := browntest.Dir(t)
	t.Setenv(brown.EnvDir, fixture)
	got, err := brown.Dir()
	require.NoError(t, err)
	require.Equal(t, fixture, got)

	t.Setenv(brown.EnvDir, t.TempDir())
	_, err = brown.Dir()
	require.ErrorContains(t, err, "does not hold the Brown corpus")
	require.ErrorContains(t, err, "make brown")

	// Default: DefaultSubdir under a parent directory, up to the module root.
	t.Setenv(brown.EnvDir, "")
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	sub := filepath.Join(root, "workbench", "data")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	t.Chdir(sub)
	_, err = brown.Dir()
	require.ErrorContains(t, err, "run `make brown`")

	corpus := filepath.Join(root, brown.DefaultSubdir)
	require.NoError(t, os.MkdirAll(corpus, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(corpus, "ca01"), []byte("\tThe/at\n"), 0o644))
	got, err = brown.Dir()
	require.NoError(t, err)
	require.Equal(t, corpus, got)
}
