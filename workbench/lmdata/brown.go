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
	s := brownSplits{source: "brown(" + dir + ")", corpus: map[brown.Split]*data.Corpus{}}
	for _, split := range brown.Splits() {
		s.corpus[split] = &data.Corpus{Source: s.source + " [" + string(split) + "]", Concepts: wordnet.Concepts()}
	}
	for _, d := range docs {
		c := s.corpus[brown.SplitOf(d.ID)]
		c.Texts = append(c.Texts, d.Text)
		c.Labels = append(c.Labels, wordnet.WordLabels(d.Text, d.Sentences))
	}
	return s, nil
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
