package lm

import (
	"encoding/json"
	"os"
	"sync"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/lmdata"
)

// prepared memoises lmdata.Prepare within a process: the runs of a comparison or sweep, and the analyses of a
// study, share their data (the WordNet corpus takes seconds to load). It keeps the two most recent data configs.
var prepared struct {
	sync.Mutex
	keys []string
	vals []*lmdata.Prepared
}

// PrepareData returns lmdata.Prepare(d, ""), memoised by d within the process: the corpus, split, tokenizer and
// packed sequences every model trained on d sees. Studies use it for the data they analyse a model on.
func PrepareData(d lmdata.Config) (*lmdata.Prepared, error) { return prepare(d, "") }

// prepare returns lmdata.Prepare(d, tokPath), memoised by d (the tokenizer is a function of d); with tokPath set,
// a memoised tokenizer is saved there when the file is missing.
func prepare(d lmdata.Config, tokPath string) (*lmdata.Prepared, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, errors.Wrap(err, "lm: encoding the data config")
	}
	key := string(b)
	prepared.Lock()
	defer prepared.Unlock()
	for i, k := range prepared.keys {
		if k == key {
			p := prepared.vals[i]
			if tokPath != "" {
				if _, err := os.Stat(tokPath); os.IsNotExist(err) {
					if err := p.Tokenizer.Save(tokPath); err != nil {
						return nil, err
					}
				}
			}
			return p, nil
		}
	}
	p, err := lmdata.Prepare(d, tokPath)
	if err != nil {
		return nil, err
	}
	prepared.keys = append(prepared.keys, key)
	prepared.vals = append(prepared.vals, p)
	if len(prepared.keys) > 2 {
		prepared.keys, prepared.vals = prepared.keys[1:], prepared.vals[1:]
	}
	return p, nil
}
