package lm

import (
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/lmdata"
)

// FreshCorpus generates docs new documents of the synthetic concept corpus with the model's data.synthetic settings
// and another seed: labelled text the model never trained on, from which the steering and suppression studies draw
// their items and prompts. It errors when the model was not trained on the synthetic corpus, or when seed equals
// data.synthetic.seed (the documents would repeat the training ones).
func (m *Model) FreshCorpus(docs int, seed uint64) (*data.Corpus, error) {
	dc := m.Config.Data
	if dc.Source != lmdata.SourceSynthetic {
		return nil, errors.Errorf("lm.Model.FreshCorpus: fresh documents need the synthetic concept corpus, the "+
			"model was trained on %q", dc.Source)
	}
	if seed == dc.Synthetic.Seed {
		return nil, errors.Errorf("lm.Model.FreshCorpus: seed %d equals data.synthetic.seed: the documents would "+
			"repeat training documents", seed)
	}
	sc := dc.Synthetic
	sc.Seed, sc.NumDocs = seed, docs
	return data.Synthetic(sc)
}
