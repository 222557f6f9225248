package lm

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"
	"time"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/tokenizer"
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
// with tokPath set, a memoised tokenizer is saved there when the file is missing, and the memoised data is used only
// when the file holds the same tokenizer (the folder's own tokenizer wins otherwise). It logs to o.Progress when it
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
		if k != key {
			continue
		}
		p := prepared.vals[i]
		if tokPath == "" {
			return p, nil
		}
		same, err := sameTokenizer(p.Tokenizer, tokPath)
		if err != nil {
			return nil, err
		}
		if same {
			return p, nil
		}
		// The folder's own tokenizer (e.g. trained by an older version) differs from the memoised one: the run
		// was trained on the folder's, so prepare the data with it, without memoising.
		return lmdata.PrepareContext(o.Context, d, tokPath)
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

// sameTokenizer reports whether the tokenizer file at path is tok, saving tok there when the file is missing. It
// reads the file once and compares its parsed content, so a file another process replaces meanwhile is never half
// trusted.
func sameTokenizer(tok *tokenizer.Tokenizer, path string) (bool, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return true, tok.Save(path)
	}
	if err != nil {
		return false, errors.Wrapf(err, "lm: reading the tokenizer %s", path)
	}
	onDisk, err := tokenizer.FromJSON(b)
	if err != nil {
		return false, errors.WithMessagef(err, "lm: the tokenizer %s is corrupt; delete it to retrain it", path)
	}
	want, err := tok.MarshalJSON()
	if err != nil {
		return false, errors.Wrap(err, "lm: encoding the tokenizer")
	}
	got, err := onDisk.MarshalJSON()
	if err != nil {
		return false, errors.Wrapf(err, "lm: encoding the tokenizer of %s", path)
	}
	return bytes.Equal(got, want), nil
}
