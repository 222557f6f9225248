package classify

import (
	"bufio"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data"
)

// PairSeparator joins the text columns of a multi-column (sentence-pair) example into one text.
const PairSeparator = " | "

// Example is one classification example.
type Example struct {
	Text  string `json:"text"`
	Label int    `json:"label"` // index into Task.Classes
}

// Task is a classification task with a train/test split.
type Task struct {
	Name    string    `json:"name"`
	Classes []string  `json:"classes"`
	Train   []Example `json:"train"`
	Test    []Example `json:"test"`
}

// Majority returns the majority-class baseline: the most frequent class of the test set and its share, the best
// accuracy any constant prediction reaches there (so at least 1/len(Classes)). Ties go to the class more frequent
// in the training set, then to the lowest index. The training set's majority class is not the baseline: when
// the document split leaves the classes in other proportions on the two sides it scores below 1/len(Classes)
// (0.47 on a two-class task), and a model that only learned the test proportions would seem to beat it.
func (t *Task) Majority() (class int, accuracy float64) {
	train, test := make([]int, len(t.Classes)), make([]int, len(t.Classes))
	for _, e := range t.Train {
		train[e.Label]++
	}
	for _, e := range t.Test {
		test[e.Label]++
	}
	for k := range test {
		if test[k] > test[class] || (test[k] == test[class] && train[k] > train[class]) {
			class = k
		}
	}
	if len(t.Test) == 0 {
		return class, 0
	}
	return class, float64(test[class]) / float64(len(t.Test))
}

// SentenceTasks derives one task per concept from a labelled corpus's sentence labels: every sentence whose
// label for the concept is set (≥ 0) is an example of class Concepts[c].Values[label]. Documents, not sentences,
// are split (corpus.Split with testFraction and seed), so no test sentence shares a document with a training one.
// It returns an error for an unlabelled corpus, an unknown concept, or a split without examples on either side.
func SentenceTasks(c *data.Corpus, concepts []string, testFraction float64, seed uint64) ([]*Task, error) {
	if c.Labels == nil {
		return nil, errors.Errorf("classify.SentenceTasks: corpus %q has no labels", c.Source)
	}
	train, test, err := c.Split(testFraction, seed)
	if err != nil {
		return nil, errors.WithMessage(err, "classify.SentenceTasks")
	}
	var tasks []*Task
	for _, name := range concepts {
		ci, err := c.ConceptIndex(name)
		if err != nil {
			return nil, errors.WithMessage(err, "classify.SentenceTasks")
		}
		t := &Task{Name: name, Classes: slices.Clone(c.Concepts[ci].Values)}
		collect := func(part *data.Corpus) []Example {
			var out []Example
			for d, l := range part.Labels {
				for _, s := range l.Sentences {
					if v := s.Values[ci]; v >= 0 {
						out = append(out, Example{Text: part.Texts[d][s.Start:s.End], Label: int(v)})
					}
				}
			}
			return out
		}
		t.Train, t.Test = collect(train), collect(test)
		if len(t.Train) == 0 || len(t.Test) == 0 {
			return nil, errors.Errorf("classify.SentenceTasks: concept %q has %d training and %d test sentences; "+
				"want both > 0 (more documents or another test fraction)", name, len(t.Train), len(t.Test))
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// TSVConfig names a GLUE-format task: tab-separated files with a header row (GLUE's train.tsv and dev.tsv; its
// test.tsv has no labels).
type TSVConfig struct {
	Train       string   `json:"train"`        // path of the training file
	Test        string   `json:"test"`         // path of the evaluation file (GLUE's dev.tsv)
	TextColumns []string `json:"text_columns"` // header names of the text column(s), e.g. ["sentence"]
	LabelColumn string   `json:"label_column"` // header name of the label column, e.g. "label"
}

// TSVRow is one example read from a TSV file.
type TSVRow struct {
	Line  int    `json:"line"`  // 1-based line number in the file
	Text  string `json:"text"`  // the text columns joined with PairSeparator
	Label string `json:"label"` // the label column, verbatim
}

// ReadTSV reads a GLUE-format file: a header row naming the columns, then one example per line with the same
// number of tab-separated fields (no quoting: quotes are text). Blank lines are skipped and a trailing "\r" is
// removed. Errors name the file and, for a bad row, the line: a missing column, a row with the wrong number of
// fields, an empty label, or a file without examples.
func ReadTSV(path string, textColumns []string, labelColumn string) ([]TSVRow, error) {
	if len(textColumns) == 0 || labelColumn == "" {
		return nil, errors.Errorf("classify.ReadTSV %s: want at least one text column and a label column", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "classify.ReadTSV")
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var header []string
	var textIdx []int
	labelIdx := -1
	var rows []TSVRow
	for line := 1; ; line++ {
		s, err := r.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, errors.Wrapf(err, "classify.ReadTSV %s:%d", path, line)
		}
		done := err == io.EOF
		s = strings.TrimRight(s, "\r\n")
		switch {
		case strings.TrimSpace(s) == "":
		case header == nil:
			header = strings.Split(s, "\t")
			for _, col := range textColumns {
				i := slices.Index(header, col)
				if i < 0 {
					return nil, errors.Errorf("classify.ReadTSV %s:%d: no column %q in the header %q", path, line, col,
						header)
				}
				textIdx = append(textIdx, i)
			}
			if labelIdx = slices.Index(header, labelColumn); labelIdx < 0 {
				return nil, errors.Errorf("classify.ReadTSV %s:%d: no label column %q in the header %q", path, line,
					labelColumn, header)
			}
		default:
			fields := strings.Split(s, "\t")
			if len(fields) != len(header) {
				return nil, errors.Errorf("classify.ReadTSV %s:%d: %d fields, but the header has %d", path, line,
					len(fields), len(header))
			}
			label := strings.TrimSpace(fields[labelIdx])
			if label == "" {
				return nil, errors.Errorf("classify.ReadTSV %s:%d: empty label in column %q", path, line, labelColumn)
			}
			texts := make([]string, len(textIdx))
			for i, j := range textIdx {
				texts[i] = strings.TrimSpace(fields[j])
			}
			rows = append(rows, TSVRow{Line: line, Text: strings.Join(texts, PairSeparator), Label: label})
		}
		if done {
			break
		}
	}
	if header == nil {
		return nil, errors.Errorf("classify.ReadTSV %s: empty file, want a header row", path)
	}
	if len(rows) == 0 {
		return nil, errors.Errorf("classify.ReadTSV %s: no examples after the header", path)
	}
	return rows, nil
}

// TSVTask reads a GLUE-format task. The classes are the training file's distinct labels, sorted; a test label
// that does not occur in the training file is an error naming the file and line.
func TSVTask(name string, cfg TSVConfig) (*Task, error) {
	train, err := ReadTSV(cfg.Train, cfg.TextColumns, cfg.LabelColumn)
	if err != nil {
		return nil, err
	}
	test, err := ReadTSV(cfg.Test, cfg.TextColumns, cfg.LabelColumn)
	if err != nil {
		return nil, err
	}
	t := &Task{Name: name}
	for _, r := range train {
		if !slices.Contains(t.Classes, r.Label) {
			t.Classes = append(t.Classes, r.Label)
		}
	}
	slices.Sort(t.Classes)
	convert := func(rows []TSVRow, path string) ([]Example, error) {
		out := make([]Example, len(rows))
		for i, r := range rows {
			k := slices.Index(t.Classes, r.Label)
			if k < 0 {
				return nil, errors.Errorf("classify.TSVTask %s:%d: label %q does not occur in the training file %s "+
					"(classes %q)", path, r.Line, r.Label, cfg.Train, t.Classes)
			}
			out[i] = Example{Text: r.Text, Label: k}
		}
		return out, nil
	}
	if t.Train, err = convert(train, cfg.Train); err != nil {
		return nil, err
	}
	if t.Test, err = convert(test, cfg.Test); err != nil {
		return nil, err
	}
	return t, nil
}
