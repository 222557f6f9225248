package pair

import (
	"fmt"

	"github.com/pkg/errors"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// Corpus is the pair trained on one corpus, with the corpus's prepared data (split, tokenizer, packed sequences, as
// the models were trained on it) and, when asked for, the WordNet database.
type Corpus struct {
	Source       string
	Proto, Llama *lm.Model
	Models       []Summary // the two models' summaries, ProtoT first
	Data         *lmdata.Prepared
	WordNet      *wordnet.DB // loaded when Prepare was asked for it (synonyms, lexical labels); nil otherwise
}

// Prepare trains (or loads) the pair on corpus source and prepares its data, timing "train_<source>" and
// "data_<source>" in prov. A WordNet corpus, or needWordNet, requires the WordNet database, and the Brown corpus its
// files: when they are not installed an optional corpus returns a non-empty note (the corpus is skipped) and a
// required one an error naming the fix; needWordNet also loads the database into Corpus.WordNet.
func (c Config) Prepare(source string, optional, needWordNet bool, prov *run.Provenance, o run.Options) (*Corpus,
	string, error) {
	cr := &Corpus{Source: source}
	if source == lmdata.SourceBrown {
		if _, err := brown.Dir(); err != nil {
			if optional {
				return nil, fmt.Sprintf("skipped corpus %s: %v", source, err), nil
			}
			return nil, "", err
		}
	}
	if source == lmdata.SourceWordNet || needWordNet {
		dir, err := wordnet.Dir()
		if err != nil {
			if optional {
				return nil, fmt.Sprintf("skipped corpus %s: %v", source, err), nil
			}
			return nil, "", err
		}
		if needWordNet {
			if cr.WordNet, err = wordnet.Load(dir); err != nil {
				return nil, "", err
			}
		}
	}
	if err := prov.Time("train_"+source, func() (err error) {
		cr.Proto, cr.Llama, err = c.LoadOrTrain(source, run.With(o))
		return err
	}); err != nil {
		return nil, "", err
	}
	cr.Models = []Summary{NewSummary(cr.Proto), NewSummary(cr.Llama)}
	if err := prov.Time("data_"+source, func() (err error) {
		cr.Data, err = cr.Proto.Data()
		return err
	}); err != nil {
		return nil, "", err
	}
	return cr, "", nil
}

// CheckCorpora reports the first problem of a study's list of n corpora, at(i) giving corpus i's source and whether
// it is optional: the list must not be empty, the first corpus must be required (the claims read it), and every
// source must be named. The keys are named as the studies spell them (corpora[i].source).
func CheckCorpora(n int, at func(i int) (source string, optional bool)) error {
	if n == 0 {
		return errors.New("corpora is empty; want at least one corpus")
	}
	if source, optional := at(0); optional {
		return errors.Errorf("corpora[0] (%s) is optional; the first corpus must be required", source)
	}
	for i := range n {
		if source, _ := at(i); source == "" {
			return errors.Errorf("corpora[%d].source is empty", i)
		}
	}
	return nil
}
