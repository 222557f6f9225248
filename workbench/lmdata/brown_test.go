package lmdata

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/brown/browntest"
	"github.com/protolab/protolab/workbench/data/wordnet"
)

// docID is the id a browntest document names in its last line.
var docID = regexp.MustCompile(`This is document (c[a-r]\d\d)\.$`)

// idsOf returns the document ids of browntest texts, in order.
func idsOf(t *testing.T, texts []string) []string {
	ids := make([]string, len(texts))
	for i, text := range texts {
		m := docID.FindStringSubmatch(text)
		require.NotNil(t, m, text)
		ids[i] = m[1]
	}
	return ids
}

// wantIDs returns the ids of split s in corpus order.
func wantIDs(s brown.Split) []string {
	var out []string
	for _, id := range brown.IDs() {
		if brown.SplitOf(id) == s {
			out = append(out, id)
		}
	}
	return out
}

// TestPrepare_BrownFixedSplit: source "brown" trains on the train split and validates on the validation split
// whatever data.val_fraction and data.seed say; EvalCorpus gives the test and heldout splits; the four are disjoint
// and cover the corpus.
func TestPrepare_BrownFixedSplit(t *testing.T) {
	dir := browntest.Dir(t)
	t.Setenv(brown.EnvDir, dir)
	cfg := tinyConfig()
	cfg.Source = SourceBrown
	p, err := Prepare(cfg, "")
	require.NoError(t, err)
	require.Equal(t, wantIDs(brown.Train), idsOf(t, p.Train.Texts))
	require.Equal(t, wantIDs(brown.Validation), idsOf(t, p.Val.Texts))
	first := slices.Index(brown.IDs(), wantIDs(brown.Train)[0])
	require.Equal(t, browntest.DocText(first), p.Train.Texts[0])
	require.Len(t, p.Corpus.Texts, len(p.Train.Texts)+len(p.Val.Texts))
	require.Positive(t, p.TrainSeqs.NumSequences())
	require.Positive(t, p.ValSeqs.NumSequences())

	other := cfg
	other.ValFraction, other.Seed = 0.5, 77
	p2, err := Prepare(other, "")
	require.NoError(t, err)
	require.Equal(t, p.Train.Texts, p2.Train.Texts)
	require.Equal(t, p.Val.Texts, p2.Val.Texts)

	seen := map[string]brown.Split{}
	add := func(s brown.Split, texts []string) {
		for _, id := range idsOf(t, texts) {
			prev, dup := seen[id]
			require.False(t, dup, "%s is in %s and %s", id, prev, s)
			seen[id] = s
		}
	}
	add(brown.Train, p.Train.Texts)
	add(brown.Validation, p.Val.Texts)
	for _, s := range []brown.Split{brown.Test, brown.Heldout} {
		c, err := EvalCorpus(cfg, s)
		require.NoError(t, err)
		require.Equal(t, wantIDs(s), idsOf(t, c.Texts))
		add(s, c.Texts)
	}
	require.Len(t, seen, brown.NumDocs)

	// Every split carries each document's words and sentences under WordNet's schema, with no value (the text
	// states none; a study labels the words from the database).
	for _, c := range []*data.Corpus{p.Train, p.Val, p.Corpus} {
		require.NoError(t, c.Validate())
		require.Equal(t, wordnet.Concepts(), c.Concepts)
		require.Len(t, c.Labels, len(c.Texts))
	}
	d := slices.IndexFunc(p.Val.Texts, func(s string) bool { return strings.HasPrefix(s, "Thirty-three") })
	require.GreaterOrEqual(t, d, 0, "a validation document holds the fiction sample")
	l, text := p.Val.Labels[d], p.Val.Texts[d]
	require.Equal(t, "Scotty", text[l.Starts[1]:l.Ends[1]], "the second word of the fiction sample")
	require.Equal(t, "His father tried to make the food a topic.", text[l.Sentences[2].Start:l.Sentences[2].End])
	require.Equal(t, "This is document "+idsOf(t, p.Val.Texts[d:d+1])[0]+".",
		text[l.Sentences[len(l.Sentences)-1].Start:])
	require.Equal(t, int16(-1), l.Marked[wordnet.ConceptSupersense][1])

	_, err = EvalCorpus(cfg, brown.Train)
	require.ErrorContains(t, err, "not an evaluation split")
	_, err = EvalCorpus(tinyConfig(), brown.Test)
	require.ErrorContains(t, err, `data.source "synthetic" has no fixed split`)
}

func TestPrepare_BrownErrors(t *testing.T) {
	cfg := tinyConfig()
	cfg.Source = SourceBrown

	// Not installed: the error says how to install it.
	t.Setenv(brown.EnvDir, "")
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	t.Chdir(root)
	_, err := Prepare(cfg, "")
	require.ErrorContains(t, err, `data source "brown"`)
	require.ErrorContains(t, err, "make brown")

	// An incomplete corpus is refused, naming the missing file.
	dir := browntest.Dir(t)
	require.NoError(t, os.Remove(filepath.Join(dir, "ch30")))
	t.Setenv(brown.EnvDir, dir)
	_, err = Prepare(cfg, "")
	require.ErrorContains(t, err, "missing: ch30")
	_, err = EvalCorpus(cfg, brown.Test)
	require.ErrorContains(t, err, "missing: ch30")
}

// TestPrepare_BrownReadLimitsTheTrainSplit: data.read.max_docs and max_bytes keep the first training documents in
// corpus order (max_bytes stops after the document that reaches it); the validation split stays whole.
func TestPrepare_BrownReadLimitsTheTrainSplit(t *testing.T) {
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	cfg := tinyConfig()
	cfg.Source = SourceBrown
	whole, err := Prepare(cfg, "")
	require.NoError(t, err)
	cfg.Read.MaxDocs = 5
	p, err := Prepare(cfg, "")
	require.NoError(t, err)
	// Five documents, one genre at a time: the first training document of each of the first five genres.
	firstOf := map[byte]string{}
	var genres []byte
	for _, id := range wantIDs(brown.Train) {
		if _, ok := firstOf[id[1]]; !ok {
			firstOf[id[1]] = id
			genres = append(genres, id[1])
		}
	}
	require.Equal(t, []byte("abcde"), genres[:5], "the fixture's training split starts with genres a to e")
	want := []string{firstOf['a'], firstOf['b'], firstOf['c'], firstOf['d'], firstOf['e']}
	require.Equal(t, want, idsOf(t, p.Train.Texts))
	require.Equal(t, wantIDs(brown.Validation), idsOf(t, p.Val.Texts))
	require.Less(t, p.TrainSeqs.NumSequences(), whole.TrainSeqs.NumSequences())
	c, err := LoadCorpus(cfg)
	require.NoError(t, err)
	require.Len(t, c.Texts, 5+len(whole.Val.Texts))

	cfg.Read = data.ReadConfig{MaxBytes: int64(len(whole.Train.Texts[0])) + 1}
	p, err = Prepare(cfg, "")
	require.NoError(t, err)
	require.Equal(t, want[:2], idsOf(t, p.Train.Texts))
}
