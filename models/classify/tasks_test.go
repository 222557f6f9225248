package classify

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

func TestReadTSV_GLUEFormat(t *testing.T) {
	dir := t.TempDir()
	// SST-2 layout, with a quote (GLUE files are unquoted), Windows line ends and a blank line.
	p := writeFile(t, dir, "train.tsv", "sentence\tlabel\r\nit 's a \"charming\" film\t1\r\n\r\nawful , awful\t0\r\n")
	rows, err := ReadTSV(p, []string{"sentence"}, "label")
	require.NoError(t, err)
	require.Equal(t, []TSVRow{{Line: 2, Text: `it 's a "charming" film`, Label: "1"},
		{Line: 4, Text: "awful , awful", Label: "0"}}, rows)

	// Sentence pairs (RTE/MNLI layout): columns picked by name, joined with PairSeparator.
	p = writeFile(t, dir, "pairs.tsv",
		"index\tsentence1\tsentence2\tlabel\n0\tA man sleeps.\tA man rests.\tentailment\n")
	rows, err = ReadTSV(p, []string{"sentence1", "sentence2"}, "label")
	require.NoError(t, err)
	require.Equal(t, "A man sleeps."+PairSeparator+"A man rests.", rows[0].Text)
	require.Equal(t, "entailment", rows[0].Label)
}

func TestReadTSV_ErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		mention    []string
	}{
		{"empty.tsv", "", []string{"empty.tsv", "empty file"}},
		{"nocol.tsv", "text\tlabel\nhello\t1\n", []string{"nocol.tsv:1", `no column "sentence"`}},
		{"nolabel.tsv", "sentence\tgold\nhello\t1\n", []string{"nolabel.tsv:1", `no label column "label"`}},
		{"fields.tsv", "sentence\tlabel\nfine\t1\nbroken row without a tab\n", []string{"fields.tsv:3",
			"1 fields, but the header has 2"}},
		{"blank.tsv", "sentence\tlabel\nok\t0\n\nno label\t \n", []string{"blank.tsv:4", "empty label"}},
		{"header.tsv", "sentence\tlabel\n\n", []string{"header.tsv", "no examples"}},
	} {
		_, err := ReadTSV(writeFile(t, dir, tc.name, tc.text), []string{"sentence"}, "label")
		require.Error(t, err, tc.name)
		for _, m := range tc.mention {
			require.Contains(t, err.Error(), m, tc.name)
		}
	}
	_, err := ReadTSV(filepath.Join(dir, "missing.tsv"), []string{"sentence"}, "label")
	require.ErrorContains(t, err, "missing.tsv")
}

func TestTSVTask_ClassesAndUnknownTestLabel(t *testing.T) {
	dir := t.TempDir()
	cfg := TSVConfig{
		Train:       writeFile(t, dir, "train.tsv", "sentence\tlabel\nb\tpos\na\tneg\nc\tpos\n"),
		Test:        writeFile(t, dir, "dev.tsv", "sentence\tlabel\nd\tneg\ne\tpos\n"),
		TextColumns: []string{"sentence"}, LabelColumn: "label",
	}
	task, err := TSVTask("sst", cfg)
	require.NoError(t, err)
	require.Equal(t, []string{"neg", "pos"}, task.Classes)
	require.Equal(t, []Example{{"b", 1}, {"a", 0}, {"c", 1}}, task.Train)
	require.Equal(t, []Example{{"d", 0}, {"e", 1}}, task.Test)
	class, acc := task.Majority()
	require.Equal(t, 1, class, "a tie on the test set goes to the training set's majority")
	require.Equal(t, 0.5, acc)

	cfg.Test = writeFile(t, dir, "dev2.tsv", "sentence\tlabel\nd\tneg\ne\tneutral\n")
	_, err = TSVTask("sst", cfg)
	require.ErrorContains(t, err, "dev2.tsv:3")
	require.ErrorContains(t, err, `label "neutral" does not occur`)
}

func TestSentenceTasks_FromSyntheticLabels(t *testing.T) {
	sc := data.DefaultSyntheticConfig()
	sc.NumDocs, sc.Seed = 40, 5
	corpus, err := data.Synthetic(sc)
	require.NoError(t, err)
	tasks, err := SentenceTasks(corpus, []string{"topic", "number"}, 0.25, 3)
	require.NoError(t, err)
	require.Len(t, tasks, 2)
	ci, err := corpus.ConceptIndex("number")
	require.NoError(t, err)
	labelled := 0
	for _, l := range corpus.Labels {
		for _, s := range l.Sentences {
			if s.Values[ci] >= 0 {
				labelled++
			}
		}
	}
	num := tasks[1]
	require.Equal(t, corpus.Concepts[ci].Values, num.Classes)
	require.Equal(t, labelled, len(num.Train)+len(num.Test), "every labelled sentence is an example once")
	for _, e := range append(num.Train, num.Test...) {
		require.True(t, strings.HasSuffix(e.Text, "."), e.Text)
		require.GreaterOrEqual(t, e.Label, 0)
		require.Less(t, e.Label, len(num.Classes))
	}
	_, err = SentenceTasks(corpus, []string{"colour"}, 0.25, 3)
	require.ErrorContains(t, err, "colour")
	_, err = SentenceTasks(&data.Corpus{Source: "plain", Texts: []string{"a", "b"}}, []string{"topic"}, 0.5, 1)
	require.ErrorContains(t, err, "no labels")
}

// The majority-class baseline is the test set's majority share, never below 1/K: here the training majority
// (class 0, 3 of 4) is the test minority, and predicting it would score 0.4 on a two-class task.
func TestTask_MajorityIsAtLeastOneOverK(t *testing.T) {
	task := &Task{Classes: []string{"a", "b"},
		Train: []Example{{"1", 0}, {"2", 0}, {"3", 0}, {"4", 1}},
		Test:  []Example{{"5", 0}, {"6", 0}, {"7", 1}, {"8", 1}, {"9", 1}}}
	class, acc := task.Majority()
	require.Equal(t, 1, class)
	require.Equal(t, 3.0/5, acc)
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		k := 2 + rng.IntN(4)
		task := &Task{Classes: make([]string, k)}
		for range 1 + rng.IntN(30) {
			task.Test = append(task.Test, Example{Label: rng.IntN(k)})
			task.Train = append(task.Train, Example{Label: rng.IntN(k)})
		}
		_, acc := task.Majority()
		require.GreaterOrEqual(t, acc, 1/float64(k), "seed %d, %d classes", seed, k)
	}
}
