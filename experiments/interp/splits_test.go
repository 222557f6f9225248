package interp

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/brown/browntest"
	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
)

// evalDocsOf returns what lm.Model.FreshCorpus gives a model trained on dc (it reads only the model's data
// settings): the evaluation documents buildSplits asks for.
func evalDocsOf(dc lmdata.Config) *lm.Model { return &lm.Model{Config: lm.Config{Data: dc}} }

// TestBuildSplits: the selection and calibration splits come from the first half of the validation stream; with
// eval.data_seed the evaluation and held-out sequences from fresh documents (none of them a document of the
// training corpus), without it from the second half of the validation stream.
func TestBuildSplits(t *testing.T) {
	dc := Tiny().Data
	dc.Source = lmdata.SourceSynthetic
	prep, err := lmdata.Prepare(dc, "")
	require.NoError(t, err)
	cfg := Tiny()
	m := evalDocsOf(dc)
	sp, err := buildSplits(prep, m.FreshCorpus, Synthetic(), cfg, nil)
	require.NoError(t, err)
	T := prep.Config.SeqLen
	half := prep.ValSeqs.NumSequences() / 2 * T
	for _, set := range []*naming.Text{sp.sel, sp.cal} {
		for _, o := range set.Offset {
			require.Less(t, o, half)
		}
	}
	require.Equal(t, cfg.Intervene.Sequences*T, sp.cal.N())
	require.Equal(t, cfg.Intervene.HeldOut*T, sp.held.N())
	require.Equal(t, cfg.Eval.Sequences*T, sp.eval.N())
	require.Len(t, sp.train, cfg.SAE.TrainSequences)
	docs, err := m.FreshCorpus(cfg.Eval.Docs, cfg.Eval.DataSeed)
	require.NoError(t, err)
	fresh, err := freshSource(prep, docs)
	require.NoError(t, err)
	require.Equal(t, fresh.Packed.Stream, sp.eval.Stream, "evaluated on the fresh documents")
	require.Equal(t, fresh.Packed.Stream, sp.held.Stream)
	seen := map[string]bool{}
	for _, d := range prep.Corpus.Texts {
		seen[d] = true
	}
	for _, d := range fresh.Corpus.Texts {
		require.False(t, seen[d], "a fresh evaluation document is a document of the training corpus: %q", d)
	}
	cfg.Eval.DataSeed = 0
	sp, err = buildSplits(prep, m.FreshCorpus, Synthetic(), cfg, nil)
	require.NoError(t, err)
	for _, set := range []*naming.Text{sp.eval, sp.held} {
		require.Equal(t, prep.ValSeqs.Stream, set.Stream)
		for _, o := range set.Offset {
			require.GreaterOrEqual(t, o, half)
		}
	}
	cfg = Tiny()
	cfg.Eval.Docs = 2
	_, err = buildSplits(prep, m.FreshCorpus, Synthetic(), cfg, nil)
	require.ErrorContains(t, err, "eval.docs")
}

// handLexicon is a lexicon written by hand for the Brown fixture's words (WordNet's Supersenses looks words up
// case-insensitively, and so does this).
func handLexicon(word string) []string {
	return map[string][]string{"school": {"noun.group", "noun.artifact"}, "food": {"noun.food", "noun.cognition"},
		"father": {"noun.person"}, "topic": {"noun.cognition"}, "jury": {"noun.group"}}[strings.ToLower(word)]
}

// labelledWords returns, for each label of es, the runs of consecutive input tokens carrying it, decoded and
// trimmed: the words that label was given to.
func labelledWords(es *naming.Text) map[string][]string {
	out := map[string][]string{}
	for l, name := range es.Tokens.Names {
		run := ""
		for n := range es.N() {
			if slices.Contains(es.Tokens.Of[n], int32(l)) {
				run += es.Context(n, 0, 0).Token
				continue
			}
			if run != "" {
				out[name] = append(out[name], strings.TrimSpace(run))
			}
			run = ""
		}
		if run != "" {
			out[name] = append(out[name], strings.TrimSpace(run))
		}
	}
	return out
}

// TestBrownLabels_HandCase is the Brown corpus's labelling rule (doc.go, "Labels and metrics") on the fixture's
// fiction sample, word by word: each token carries every supersense the lexicon lists for the word it belongs to
// (looked up whole, case-insensitively), and "none" when there is none. With the WordNet database installed, its
// lexicon gives those words the supersenses read by hand from its data files (lex_filenum of each synset).
func TestBrownLabels_HandCase(t *testing.T) {
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	dc := Tiny().Data
	dc.Source = lmdata.SourceBrown
	prep, err := lmdata.Prepare(dc, "")
	require.NoError(t, err)
	d := slices.IndexFunc(prep.Val.Texts, func(s string) bool { return strings.HasPrefix(s, "Thirty-three") })
	require.GreaterOrEqual(t, d, 0, "a validation document holds the fiction sample")
	src, err := freshSource(prep, prep.Val.Subset([]int{d}))
	require.NoError(t, err)
	n := src.Packed.NumSequences()
	lab := naming.Labelling{Kind: naming.LabelsLexical, Concepts: []string{"supersense"}, MinCount: 1, None: true,
		Lexicon: handLexicon}
	es, err := naming.LabelText(src, lab, 0, n, n)
	require.NoError(t, err)
	got := labelledWords(es)
	// "Scotty did not go back to school. His father tried to make the food a topic." and the rest of the sample.
	want := map[string][]string{"supersense=noun.group": {"school"}, "supersense=noun.artifact": {"school"},
		"supersense=noun.food": {"food"}, "supersense=noun.cognition": {"food", "topic"},
		"supersense=noun.person": {"father"}}
	for name, words := range want {
		require.Equal(t, words, got[name], name)
	}
	require.Len(t, got, len(want)+1, "no other label but none: %v", got)
	for _, run := range got[naming.NoneLabel] {
		for _, w := range strings.Fields(run) {
			require.Empty(t, handLexicon(strings.Trim(w, `.,;:!?"'`)), "%q is labelled none", w)
		}
	}

	dir, err := wordnet.Dir()
	if err != nil {
		t.Skipf("WordNet is not installed (make wordnet): %v", err)
	}
	db, err := wordnet.Load(dir)
	require.NoError(t, err)
	for word, lex := range map[string][]string{
		"food":   {"noun.Tops", "noun.cognition", "noun.food"},
		"father": {"noun.person", "verb.body"},
		"school": {"noun.artifact", "noun.cognition", "noun.group", "noun.time", "verb.motion", "verb.social"},
		"topic":  {"noun.cognition", "noun.communication"},
		"Jury":   {"noun.group"},
		"Scotty": nil,
	} {
		got := db.Supersenses(word)
		slices.Sort(got)
		require.Equal(t, lex, got, word)
	}
}

// brownID is the id a browntest document names in its last line.
var brownID = regexp.MustCompile(`This is document (c[a-r]\d\d)\.$`)

// TestBuildSplits_Brown: on the Brown corpus (a fixture shaped like the installed one) the selection and
// calibration sequences come from the first half of the validation split; with eval.data_seed odd the evaluation
// and held-out sequences come from the first eval.brown_docs documents of the test split, packed as the models'
// data, and with the held-back seed (even) from the held-out split; the interventions' targets are the words'
// supersenses.
func TestBuildSplits_Brown(t *testing.T) {
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	dc := Tiny().Data
	dc.Source = lmdata.SourceBrown
	prep, err := lmdata.Prepare(dc, "")
	require.NoError(t, err)
	cfg := Tiny()
	cfg.Eval.BrownDocs = 20
	cfg.Intervene.Sequences = 64
	m := evalDocsOf(dc)
	sp, err := buildSplits(prep, m.FreshCorpus, Brown(), cfg, handLexicon)
	require.NoError(t, err)
	half := prep.ValSeqs.NumSequences() / 2 * prep.Config.SeqLen
	for _, set := range []*naming.Text{sp.sel, sp.cal} {
		require.Equal(t, prep.ValSeqs.Stream, set.Stream)
		for _, o := range set.Offset {
			require.Less(t, o, half)
		}
	}
	test, err := lmdata.EvalCorpus(dc, brown.Test)
	require.NoError(t, err)
	first := make([]int, 20)
	for i := range first {
		first[i] = i
	}
	want, err := freshSource(prep, test.Subset(first))
	require.NoError(t, err)
	require.Equal(t, want.Packed.Stream, sp.eval.Stream, "evaluated on the test split's first 20 documents")
	require.Equal(t, want.Packed.Stream, sp.held.Stream)
	require.Contains(t, sp.evalText, "the first 20 documents of the Brown test split (seed 1001)")
	for _, text := range want.Corpus.Texts {
		id := brownID.FindStringSubmatch(text)
		require.NotNil(t, id)
		require.Equal(t, brown.Test, brown.SplitOf(id[1]), "no choice saw it")
	}
	for _, name := range sp.cal.Tokens.Names {
		require.True(t, name == naming.NoneLabel || strings.HasPrefix(name, "supersense=noun."), name)
	}
	require.Contains(t, sp.cal.Tokens.Names, "supersense=noun.group", "the targets are the lexicon's labels")

	cfg.Eval.DataSeed = HeldBackEvalSeed
	sp, err = buildSplits(prep, m.FreshCorpus, Brown(), cfg, handLexicon)
	require.NoError(t, err)
	require.Contains(t, sp.evalText, "Brown heldout split")
	cfg.Eval.BrownDocs = 40
	_, err = buildSplits(prep, m.FreshCorpus, Brown(), cfg, handLexicon)
	require.ErrorContains(t, err, "eval.brown_docs")
	require.ErrorContains(t, err, "which has 33")
}
