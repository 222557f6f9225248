package lm

import (
	"encoding/json"
	"os"
	"sync"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
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
func PrepareData(d lmdata.Config) (*lmdata.Prepared, error) {
	return prepare(run.NewOptions(run.Progress(nil)), d, "")
}

// prepare returns lmdata.PrepareContext(o.Context, d, tokPath), memoised by d (the tokenizer is a function of d);
// with tokPath set, a memoised tokenizer is saved there when the file is missing. It logs to o.Progress when it
// prepares (rather than reuses) the data; an interrupted preparation returns o.Context's error and is not memoised.
func prepare(o run.Options, d lmdata.Config, tokPath string) (*lmdata.Prepared, error) {
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
	o.Logf("lm", "preparing the data: source %q, %d-token vocabulary", d.Source, d.Tokenizer.VocabSize)
	start := time.Now()
	p, err := lmdata.PrepareContext(o.Context, d, tokPath)
	if err != nil {
		return nil, err
	}
	o.Logf("lm", "data ready in %.1f s: %d documents, %d training and %d validation tokens", time.Since(start).Seconds(),
		len(p.Corpus.Texts), len(p.TrainSeqs.Stream), len(p.ValSeqs.Stream))
	prepared.keys = append(prepared.keys, key)
	prepared.vals = append(prepared.vals, p)
	if len(prepared.keys) > 2 {
		prepared.keys, prepared.vals = prepared.keys[1:], prepared.vals[1:]
	}
	return p, nil
}
