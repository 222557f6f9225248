package lmdata

import (
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/wordnet"
)

// brownSplits is the installed Brown corpus cut into its fixed splits.
type brownSplits struct {
	source string                       // "brown(<folder>)"
	corpus map[brown.Split]*data.Corpus // each split's documents in corpus order, Source "brown(<folder>) [split]"
	ids    map[brown.Split][]string     // each split's document ids, in the same order
}

// loadBrown loads the corpus brown.Dir finds and cuts it into its four splits. Every document carries its words and
// its sentences (Form C's sentence lines) as labels under WordNet's schema, with no value (wordnet.WordLabels): the
// text states no concept, and a study that names units on it labels each word from the WordNet database
// (naming.LabelsLexical); the sentences cut prompts.
func loadBrown() (brownSplits, error) {
	dir, err := brown.Dir()
	if err != nil {
		return brownSplits{}, errors.WithMessage(err, "data source \"brown\"")
	}
	docs, err := brown.Load(dir)
	if err != nil {
		return brownSplits{}, errors.WithMessage(err, "data source \"brown\"")
	}
	s := brownSplits{source: "brown(" + dir + ")", corpus: map[brown.Split]*data.Corpus{},
		ids: map[brown.Split][]string{}}
	for _, split := range brown.Splits() {
		s.corpus[split] = &data.Corpus{Source: s.source + " [" + string(split) + "]", Concepts: wordnet.Concepts()}
	}
	for _, d := range docs {
		split := brown.SplitOf(d.ID)
		c := s.corpus[split]
		c.Texts = append(c.Texts, d.Text)
		c.Labels = append(c.Labels, wordnet.WordLabels(d.Text, d.Sentences))
		s.ids[split] = append(s.ids[split], d.ID)
	}
	return s, nil
}

// limitTrain returns the training documents of s that data.read keeps when it sets a limit: the documents taken
// one genre at a time (the first of genre a, of b, …, of r, then the second of each, in corpus order within a
// genre), so that a small training set still spans the corpus's genres, up to read.max_docs documents, stopping
// after the document that reaches read.max_bytes (0: no limit). Without a limit it is the whole split in corpus
// order. The other splits are never limited.
func (s brownSplits) limitTrain(read data.ReadConfig) *data.Corpus {
	all := s.corpus[brown.Train]
	if read.MaxDocs == 0 && read.MaxBytes == 0 {
		return all
	}
	byGenre := map[byte][]int{}
	var genres []byte
	for i, id := range s.ids[brown.Train] {
		g := id[1] // ids are "c" + genre letter + two digits
		if byGenre[g] == nil {
			genres = append(genres, g)
		}
		byGenre[g] = append(byGenre[g], i)
	}
	var idx []int
	var bytes int64
	for round := 0; ; round++ {
		took := false
		for _, g := range genres {
			if round >= len(byGenre[g]) {
				continue
			}
			if (read.MaxDocs > 0 && len(idx) >= read.MaxDocs) || (read.MaxBytes > 0 && bytes >= read.MaxBytes) {
				return all.Subset(idx)
			}
			i := byGenre[g][round]
			idx = append(idx, i)
			bytes += int64(len(all.Texts[i]))
			took = true
		}
		if !took {
			return all.Subset(idx)
		}
	}
}

// EvalCorpus returns the documents of an evaluation split, brown.Test or brown.Heldout, of cfg.Source, a source with
// a fixed split (SourceBrown), in corpus order: documents that no training or validation split holds. It errors for
// another source or another split.
func EvalCorpus(cfg Config, split brown.Split) (*data.Corpus, error) {
	if strings.ToLower(cfg.Source) != SourceBrown {
		return nil, errors.Errorf("lmdata.EvalCorpus: data.source %q has no fixed split (only %q has)", cfg.Source,
			SourceBrown)
	}
	if split != brown.Test && split != brown.Heldout {
		return nil, errors.Errorf("lmdata.EvalCorpus: split %q is not an evaluation split (want %q or %q)", split,
			brown.Test, brown.Heldout)
	}
	s, err := loadBrown()
	if err != nil {
		return nil, err
	}
	return s.corpus[split], nil
}
