package protot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// Files of a run folder (Config.Out/runs/<name>-<hash>/).
const (
	ConfigFile    = "config.json"         // RunConfig, written before training starts
	TokenizerFile = "tokenizer.json"      // the BPE tokenizer
	WeightsFile   = "weights.safetensors" // trained weights (workbench/store naming)
	ResultFile    = "result.json"         // RunResult, written last: its presence marks a finished run
	CheckpointDir = "checkpoints"         // fit checkpoints, so an interrupted run resumes
	RunsDir       = "runs"                // the folder under Config.Out holding the run folders
)

// RunConfig is the complete configuration of one training run; two runs with equal RunConfigs give the same
// result, which is what lets LoadOrTrain load instead of training.
type RunConfig struct {
	Mixer       string         `json:"mixer"`
	Seed        uint64         `json:"seed"` // weights, data split and batch order
	Data        lmdata.Config  `json:"data"`
	Model       decoder.Config `json:"model"`
	Train       fit.Config     `json:"train"`
	EvalBatches int            `json:"eval_batches"` // validation batches of the final perplexity; 0 = all
}

// RunConfig returns the configuration of the run of mixer on source at width w for `steps` steps with seed:
// the study's data, model (matched by the equal-parameter rule when MatchParams is set) and training settings,
// with the warmup scaled by steps/train.steps.
func (c Config) RunConfig(mixer, source string, w, steps int, seed uint64) (RunConfig, ParamMatch, error) {
	m, match, err := c.modelFor(mixer, w)
	if err != nil {
		return RunConfig{}, match, err
	}
	d := c.Data
	d.Source = source
	d.Seed = seed
	t := c.Train
	t.Steps = steps
	t.WarmupSteps = min(steps, (c.Train.WarmupSteps*steps+c.Train.Steps/2)/c.Train.Steps)
	t.Seed = seed
	return RunConfig{Mixer: mixer, Seed: seed, Data: d, Model: m, Train: t, EvalBatches: c.EvalBatches}, match, nil
}

// Name returns a readable folder name: "<mixer>-<source>-d<width>-s<steps>-seed<seed>".
func (r RunConfig) Name() string {
	src := strings.TrimSuffix(filepath.Base(r.Data.Source), filepath.Ext(r.Data.Source))
	src = strings.Map(func(c rune) rune {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			return c
		}
		return '_'
	}, src)
	return fmt.Sprintf("%s-%s-d%d-s%d-seed%d", r.Mixer, src, r.Model.Width, r.Train.Steps, r.Seed)
}

// Hash returns the first 10 hex digits of the SHA-256 of the JSON encoding: the cache key.
func (r RunConfig) Hash() string {
	sum := sha256.Sum256(mustJSON(r))
	return hex.EncodeToString(sum[:])[:10]
}

// RunResult is what LoadOrTrain returns and writes to result.json.
type RunResult struct {
	Config     RunConfig             `json:"config"`
	Match      ParamMatch            `json:"match"`
	Provenance *run.Provenance       `json:"provenance"`
	NumParams  int                   `json:"num_params"`
	Tokens     TokenCounts           `json:"tokens"`
	History    *fit.History          `json:"history"`
	Val        eval.PerplexityResult `json:"val"` // final validation perplexity
	Dir        string                `json:"dir,omitempty"`
	// Cached is true when the result was loaded from Dir rather than trained by this call.
	Cached bool `json:"-"`
	model  *Model
}

// TokenCounts sizes the data of a run.
type TokenCounts struct {
	Vocab       int `json:"vocab"`
	Train       int `json:"train"`         // tokens in the packed training stream
	Val         int `json:"val"`           // tokens in the packed validation stream
	SeenInTrain int `json:"seen_in_train"` // steps · B · T
}

// TrainSeconds returns the wall time of training (0 when unknown).
func (r *RunResult) TrainSeconds() float64 {
	if r.Provenance == nil {
		return 0
	}
	return r.Provenance.Timings["train"]
}

// Model returns the trained model: the one in memory when this process trained it, else opened from Dir.
func (r *RunResult) Model() (*Model, error) {
	if r.model != nil {
		return r.model, nil
	}
	if r.Dir == "" {
		return nil, errors.Errorf("run %s: no model in memory and no folder to open", r.Config.Name())
	}
	m, err := Open(r.Dir)
	if err != nil {
		return nil, err
	}
	r.model = m
	return m, nil
}

// Option changes how the study's functions run.
type Option func(*options)

type options struct {
	overrides string
	progress  io.Writer
	log       io.Writer
}

func newOptions(opts []Option) options {
	o := options{progress: os.Stderr, log: os.Stderr}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithOverrides records the override string applied to the preset, for provenance.
func WithOverrides(s string) Option { return func(o *options) { o.overrides = s } }

// Progress sends training progress lines and the one-line log of each run (trained or loaded) to w (default
// stderr); nil silences both.
func Progress(w io.Writer) Option { return func(o *options) { o.progress, o.log = w, w } }

func (o options) logf(format string, args ...any) {
	if o.log != nil {
		fmt.Fprintf(o.log, format+"\n", args...)
	}
}

// RunDir returns the folder of a run under root: root/runs/<name>-<hash>.
func RunDir(root string, rc RunConfig) string {
	return filepath.Join(root, RunsDir, rc.Name()+"-"+rc.Hash())
}

// LoadOrTrain returns the result of the run rc. With root set, a finished run in RunDir(root, rc) whose recorded
// config equals rc is loaded (Cached) instead of trained; an unfinished one resumes from its checkpoints.
// Otherwise the model is trained, evaluated on rc.EvalBatches validation batches, and (with root set) its config,
// tokenizer, weights and result are written to the folder. match is stored in the result as given.
func LoadOrTrain(rc RunConfig, match ParamMatch, root string, opts ...Option) (*RunResult, error) {
	o := newOptions(opts)
	dir := ""
	if root != "" {
		dir = RunDir(root, rc)
		if res, err := loadRun(dir, rc); err == nil {
			o.logf("protot: loaded %s (validation perplexity %.3f)", rc.Name(), res.Val.Perplexity)
			return res, nil
		} else if !os.IsNotExist(errors.Cause(err)) {
			return nil, err
		}
	}
	o.logf("protot: training %s (%d non-embedding parameters, %d steps)", rc.Name(), match.Achieved, rc.Train.Steps)
	return trainRun(rc, match, dir, o)
}

// loadRun loads dir's result.json; an error whose cause satisfies os.IsNotExist means "not finished".
func loadRun(dir string, rc RunConfig) (*RunResult, error) {
	path := filepath.Join(dir, ResultFile)
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	var res RunResult
	if err := store.LoadJSON(path, &res); err != nil {
		return nil, err
	}
	if !bytes.Equal(mustJSON(res.Config), mustJSON(rc)) {
		return nil, errors.Errorf("%s records a different run config than its folder name says; delete the folder",
			path)
	}
	res.Dir, res.Cached = dir, true
	return &res, nil
}

func trainRun(rc RunConfig, match ParamMatch, dir string, o options) (*RunResult, error) {
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	prov := run.NewProvenance(&rc, o.overrides, rc.Seed)
	res := &RunResult{Config: rc, Match: match, Provenance: prov, Dir: dir}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, errors.Wrapf(err, "creating the run folder %s", dir)
		}
		if err := store.SaveJSON(filepath.Join(dir, ConfigFile), rc); err != nil {
			return nil, err
		}
	}
	var prep *lmdata.Prepared
	if err := prov.Time("data", func() error {
		prep, err = prepare(rc.Data)
		return err
	}); err != nil {
		return nil, err
	}
	if v := prep.Tokenizer.VocabSize(); v != rc.Model.VocabSize {
		return nil, errors.Errorf("run %s: the tokenizer has %d tokens, the model %d", rc.Name(), v, rc.Model.VocabSize)
	}
	res.NumParams = rc.Model.NumParams()
	res.Tokens = TokenCounts{Vocab: prep.Tokenizer.VocabSize(), Train: len(prep.TrainSeqs.Stream),
		Val: len(prep.ValSeqs.Stream), SeenInTrain: rc.Train.Steps * rc.Data.BatchSize * rc.Data.SeqLen}
	trainB, err := prep.TrainBatches()
	if err != nil {
		return nil, err
	}
	valB, err := prep.ValBatches()
	if err != nil {
		return nil, err
	}
	ctx := run.NewContext(rc.Seed)
	model := rc.Model
	fitOpts := []fit.Option{fit.TokensPerBatch(rc.Data.BatchSize * rc.Data.SeqLen), fit.Progress(o.progress)}
	if dir != "" {
		fitOpts = append(fitOpts, fit.CheckpointDir(filepath.Join(dir, CheckpointDir)))
	}
	if err := prov.Time("train", func() error {
		res.History, err = fit.Train(backend, ctx, nextTokenLoss(model), trainB, valB, rc.Train, fitOpts...)
		return err
	}); err != nil {
		return nil, errors.WithMessagef(err, "run %s", rc.Name())
	}
	m := &Model{Config: rc, Tokenizer: prep.Tokenizer, Ctx: ctx, Backend: backend}
	if err := prov.Time("eval", func() error {
		vals, err := prep.ValTensors(rc.EvalBatches)
		if err != nil {
			return err
		}
		res.Val, err = m.Perplexity(vals)
		return err
	}); err != nil {
		return nil, errors.WithMessagef(err, "run %s", rc.Name())
	}
	prov.Finish()
	res.model = m
	if dir != "" {
		if err := prep.Tokenizer.Save(filepath.Join(dir, TokenizerFile)); err != nil {
			return nil, err
		}
		meta := map[string]string{"format": "protolab.protot/v1", "config": string(mustJSON(rc)),
			"git": prov.GitCommit}
		if err := store.ExportContext(ctx, filepath.Join(dir, WeightsFile), store.Trainable, meta); err != nil {
			return nil, err
		}
		if err := store.SaveJSON(filepath.Join(dir, ResultFile), res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// prepared memoises lmdata.Prepare within a process: the runs of a comparison or sweep share their data (the
// WordNet corpus takes seconds to load). It keeps the two most recent data configurations.
var prepared struct {
	sync.Mutex
	keys []string
	vals []*lmdata.Prepared
}

func prepare(d lmdata.Config) (*lmdata.Prepared, error) {
	key := string(mustJSON(d))
	prepared.Lock()
	defer prepared.Unlock()
	for i, k := range prepared.keys {
		if k == key {
			return prepared.vals[i], nil
		}
	}
	p, err := lmdata.Prepare(d, "")
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

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
