package lm

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
	"github.com/protolab/protolab/workbench/tokenizer"
)

// Open loads a run folder written by Train: config.json, tokenizer.json, result.json when the run finished, and the
// weights of weights.safetensors, or of the newest intact checkpoint when the run did not finish (a damaged newer
// checkpoint is skipped with a warning line on stderr naming it). It checks every file: weights.safetensors against
// the digest result.json recorded (a flipped byte is an error naming the file and the fix), a corrupt config.json
// or result.json is reported as corrupt with the JSON error, and the files must agree with each other: the
// tokenizer's vocabulary is the model's, and the stored weights are exactly the variables the config's model uses,
// with their shapes (a missing, extra or misshapen tensor is an error naming it).
func Open(dir string) (*Model, error) {
	cfgPath := filepath.Join(dir, ConfigFile)
	if _, err := os.Stat(cfgPath); err != nil {
		return nil, errors.Errorf("lm.Open: %s is not a run folder (no %s)", dir, ConfigFile)
	}
	var cfg Config
	if err := store.LoadJSON(cfgPath, &cfg); err != nil {
		return nil, errors.WithMessagef(err, "lm.Open: %s is corrupt (restore it, or retrain with `protolab train "+
			"--fresh --out %s`)", cfgPath, dir)
	}
	if err := cfg.Validate(); err != nil {
		return nil, errors.WithMessagef(err, "lm.Open: %s", cfgPath)
	}
	tok, err := tokenizer.Load(filepath.Join(dir, TokenizerFile))
	if err != nil {
		return nil, errors.WithMessage(err, "lm.Open")
	}
	if tok.VocabSize() != cfg.Model.VocabSize {
		return nil, errors.Errorf("lm.Open: %s has %d tokens but %s says model.vocab_size=%d; the folder mixes two "+
			"runs", filepath.Join(dir, TokenizerFile), tok.VocabSize(), cfgPath, cfg.Model.VocabSize)
	}
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	m := &Model{Config: cfg, Tokenizer: tok, Store: run.NewStore(cfg.Seed), Backend: backend, Dir: dir, Cached: true}
	if resPath := filepath.Join(dir, ResultFile); fileExists(resPath) {
		m.Result = &Result{}
		if err := store.LoadJSON(resPath, m.Result); err != nil {
			return nil, errors.WithMessagef(err, "lm.Open: %s is corrupt", resPath)
		}
	}
	weights := filepath.Join(dir, WeightsFile)
	if _, err := os.Stat(weights); err == nil {
		if m.Result != nil && m.Result.Weights != nil {
			fix := fmt.Sprintf("restore it, or retrain with `protolab train --fresh --out %s`", dir)
			if err := m.Result.Weights.Verify(weights, fix); err != nil {
				return nil, errors.WithMessage(err, "lm.Open")
			}
		}
		if _, err := store.ImportContext(m.Store, weights); err != nil {
			return nil, errors.WithMessage(err, "lm.Open")
		}
	} else {
		ck, err := fit.LoadLatest(filepath.Join(dir, CheckpointDir), m.Store)
		if err != nil {
			return nil, errors.WithMessagef(err, "lm.Open: %s has no %s and no usable checkpoint", dir, WeightsFile)
		}
		for _, skipped := range ck.Skipped {
			fmt.Fprintf(os.Stderr, "lm.Open: warning: skipped a damaged checkpoint, using step %d: %v\n", ck.Step,
				skipped)
		}
	}
	if err := m.checkWeights(); err != nil {
		return nil, errors.WithMessagef(err, "lm.Open: %s", dir)
	}
	return m, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// checkWeights builds the forward graph once on a one-token input: gomlx refuses a stored variable of another shape,
// a trainable variable the graph had to create is a weight the files lack, and a stored model weight the graph did
// not use is a tensor the config no longer reads (a layer of another depth, a head of another kind). Each is an
// error, not silently ignored. (ProtoT's intervention masks, not trainable, are created when absent.)
func (m *Model) checkWeights() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("the stored weights do not fit the config: %v", r)
		}
	}()
	stored := map[string]bool{}
	for v := range m.Store.IterVariables() {
		stored[v.Path()] = true
	}
	var g *graph.Graph
	e, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, tokens *graph.Node) *graph.Node {
		g = tokens.Graph()
		return m.Logits(scope, tokens)
	})
	if err != nil {
		return errors.Wrap(err, "the stored weights do not fit the config")
	}
	if _, err := e.Exec([][]int32{{0}}); err != nil {
		return errors.Wrap(err, "the stored weights do not fit the config")
	}
	var unused, missing []string
	for v := range m.Store.IterVariables() {
		switch {
		case !stored[v.Path()] && v.Trainable:
			missing = append(missing, v.Path())
		case v.Trainable && !inOptimizer(v) && !v.InUseByGraph(g):
			unused = append(unused, v.Path())
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return errors.Errorf("the stored weights do not fit the config: the config's model needs %d tensors the "+
			"files lack (%s); the folder holds another model's weights", len(missing), strings.Join(missing, ", "))
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		return errors.Errorf("the stored weights hold %d tensors the config's model does not use (%s); the folder "+
			"mixes two runs", len(unused), strings.Join(unused, ", "))
	}
	return nil
}
