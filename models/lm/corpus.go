package lm

import (
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/lmdata"
)

// FreshCorpus returns docs documents the model never trained or validated on, for its test perplexity and for the
// items and prompts of the steering, suppression, interp and prismhead studies; seed chooses which:
//
//   - data.source "synthetic": docs new documents of the synthetic concept corpus, generated with the model's
//     data.synthetic settings and this seed (labelled text). seed must differ from data.synthetic.seed (the documents
//     would repeat the training ones).
//   - data.source "brown": the first docs documents, in corpus order, of an evaluation split of the Brown corpus's
//     fixed split (lmdata.EvalCorpus): an odd seed reads the test split, an even seed the heldout split. Every
//     preset's evaluation seed is odd and its held-back seed even (architecture test.seed 9003 and test.holdout_seed
//     9004, interp eval.data_seed 1001 and HeldBackEvalSeed 1002), so the two read disjoint documents; two seeds of
//     one parity read the same ones. docs beyond the split's size is an error naming the size. Each document carries
//     its words and sentences under WordNet's schema, with no value (lmdata: a study labels the words from the
//     WordNet database).
//
// Any other source is an error.
func (m *Model) FreshCorpus(docs int, seed uint64) (*data.Corpus, error) {
	dc := m.Config.Data
	switch strings.ToLower(dc.Source) {
	case lmdata.SourceSynthetic:
	case lmdata.SourceBrown:
		return brownEvalDocs(dc, docs, seed)
	default:
		return nil, errors.Errorf("lm.Model.FreshCorpus: fresh documents need the synthetic concept corpus or the "+
			"Brown corpus's evaluation splits, the model was trained on %q", dc.Source)
	}
	if seed == dc.Synthetic.Seed {
		return nil, errors.Errorf("lm.Model.FreshCorpus: seed %d equals data.synthetic.seed: the documents would "+
			"repeat training documents", seed)
	}
	sc := dc.Synthetic
	sc.Seed, sc.NumDocs = seed, docs
	return data.Synthetic(sc)
}

// EvalSplitOf is the Brown corpus split FreshCorpus reads for seed: brown.Test for an odd seed, brown.Heldout for an
// even one.
func EvalSplitOf(seed uint64) brown.Split {
	if seed%2 == 1 {
		return brown.Test
	}
	return brown.Heldout
}

// brownEvalDocs is FreshCorpus for data.source "brown".
func brownEvalDocs(dc lmdata.Config, docs int, seed uint64) (*data.Corpus, error) {
	split := EvalSplitOf(seed)
	c, err := lmdata.EvalCorpus(dc, split)
	if err != nil {
		return nil, errors.WithMessage(err, "lm.Model.FreshCorpus")
	}
	if docs < 1 || docs > len(c.Texts) {
		return nil, errors.Errorf("lm.Model.FreshCorpus: %d documents asked of the Brown corpus's %s split (seed %d), "+
			"which has %d; ask for 1 to %d", docs, split, seed, len(c.Texts), len(c.Texts))
	}
	idx := make([]int, docs)
	for i := range idx {
		idx[i] = i
	}
	return c.Subset(idx), nil
}
