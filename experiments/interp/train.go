package interp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// Files of a cached training run (Config.Out/runs/<name>-<hash>/).
const (
	RunConfigFile = "config.json"         // RunConfig, written before training
	WeightsFile   = "weights.safetensors" // trained weights (workbench/store naming)
	SummaryFile   = "summary.json"        // TrainSummary, written last: its presence marks a finished run
	ResultFile    = "result.json"         // the study's Result, in Config.Out
)

// RunConfig is the complete configuration of one training run: equal RunConfigs give equal models, which is
// what lets a run be loaded instead of trained.
type RunConfig struct {
	Mixer string         `json:"mixer"`
	Seed  uint64         `json:"seed"`
	Data  lmdata.Config  `json:"data"`
	Model decoder.Config `json:"model"`
	Train fit.Config     `json:"train"`
}

// Name returns a readable folder name: "<mixer>-<source>-d<width>-s<steps>-seed<seed>".
func (r RunConfig) Name() string {
	src := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			return c
		}
		return '_'
	}, strings.TrimSuffix(filepath.Base(r.Data.Source), filepath.Ext(r.Data.Source)))
	return fmt.Sprintf("%s-%s-d%d-s%d-seed%d", r.Mixer, src, r.Model.Width, r.Train.Steps, r.Seed)
}

// Hash returns the first 10 hex digits of the SHA-256 of the JSON encoding: the cache key.
func (r RunConfig) Hash() string { return hashJSON(r) }

// TrainSummary describes one trained model.
type TrainSummary struct {
	Name               string                `json:"name"`
	Mixer              string                `json:"mixer"`
	NumParams          int                   `json:"num_params"`
	NonEmbeddingParams int                   `json:"non_embedding_params"`
	FFNWidth           int                   `json:"ffn_width"`
	FinalLoss          float64               `json:"final_loss"` // last recorded training loss
	Val                eval.PerplexityResult `json:"val"`        // validation perplexity on train.eval_batches batches
	TrainSeconds       float64               `json:"train_seconds"`
	Dir                string                `json:"dir,omitempty"`
	Cached             bool                  `json:"cached"` // loaded from Dir rather than trained by this run
}

// Model is a trained (or loaded) model of the study.
type Model struct {
	Config  RunConfig
	Ctx     *context.Context
	Backend backends.Backend
	Summary TrainSummary
}

// loadOrTrain returns the model of rc, loading it from root/runs/<name>-<hash>/ when that folder holds a finished
// run with the same config, else training it on prep (and saving it there when root is set).
func loadOrTrain(backend backends.Backend, rc RunConfig, prep *lmdata.Prepared, root string, o options) (*Model,
	error) {
	dir := ""
	if root != "" {
		dir = filepath.Join(root, "runs", rc.Name()+"-"+rc.Hash())
		m, err := loadRun(backend, dir, rc)
		if err == nil {
			o.logf("loaded %s (validation perplexity %.3f)", rc.Name(), m.Summary.Val.Perplexity)
			return m, nil
		}
		if !os.IsNotExist(errors.Cause(err)) {
			return nil, err
		}
	}
	o.logf("training %s (%d parameters, %d steps)", rc.Name(), rc.Model.NumParams(), rc.Train.Steps)
	ctx := run.NewContext(rc.Seed)
	trainB, err := prep.TrainBatches()
	if err != nil {
		return nil, err
	}
	valB, err := prep.ValBatches()
	if err != nil {
		return nil, err
	}
	cfg := rc.Model
	loss := func(ctx *context.Context, inputs []*graph.Node) *graph.Node {
		return decoder.NextTokenLoss(ctx, cfg, inputs[0])
	}
	opts := []fit.Option{fit.TokensPerBatch(rc.Data.BatchSize * rc.Data.SeqLen), fit.Progress(o.progress)}
	hist, err := fit.Train(backend, ctx, loss, trainB, valB, rc.Train, opts...)
	if err != nil {
		return nil, errors.WithMessagef(err, "training %s", rc.Name())
	}
	m := &Model{Config: rc, Ctx: ctx, Backend: backend}
	m.Summary = TrainSummary{Name: rc.Name(), Mixer: rc.Mixer, NumParams: cfg.NumParams(),
		NonEmbeddingParams: NonEmbeddingParams(cfg), FFNWidth: cfg.FFNWidth(), Dir: dir}
	if n := len(hist.Steps); n > 0 {
		m.Summary.FinalLoss = hist.Steps[n-1].Loss
		m.Summary.TrainSeconds = hist.Steps[n-1].Elapsed
	}
	vals, err := prep.ValTensors(rc.Train.EvalBatches)
	if err != nil {
		return nil, err
	}
	if m.Summary.Val, err = eval.Perplexity(backend, ctx, func(ctx *context.Context, batch *graph.Node) *graph.Node {
		return decoder.TokenLosses(ctx, cfg, batch)
	}, vals); err != nil {
		return nil, errors.WithMessagef(err, "evaluating %s", rc.Name())
	}
	if dir == "" {
		return m, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "creating the run folder %s", dir)
	}
	if err := store.SaveJSON(filepath.Join(dir, RunConfigFile), rc); err != nil {
		return nil, err
	}
	meta := map[string]string{"format": "protolab.interp/v1", "config": string(mustJSON(rc))}
	if err := store.ExportContext(ctx, filepath.Join(dir, WeightsFile), store.Trainable, meta); err != nil {
		return nil, err
	}
	return m, store.SaveJSON(filepath.Join(dir, SummaryFile), m.Summary)
}

// loadRun opens a finished run folder; an error whose cause satisfies os.IsNotExist means "not there".
func loadRun(backend backends.Backend, dir string, rc RunConfig) (*Model, error) {
	path := filepath.Join(dir, SummaryFile)
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	var stored RunConfig
	if err := store.LoadJSON(filepath.Join(dir, RunConfigFile), &stored); err != nil {
		return nil, err
	}
	if !bytes.Equal(mustJSON(stored), mustJSON(rc)) {
		return nil, errors.Errorf("%s records another run config than its folder name says; delete the folder", dir)
	}
	m := &Model{Config: rc, Ctx: run.NewContext(rc.Seed), Backend: backend}
	if err := store.LoadJSON(path, &m.Summary); err != nil {
		return nil, err
	}
	if _, err := store.ImportContext(m.Ctx, filepath.Join(dir, WeightsFile)); err != nil {
		return nil, err
	}
	m.Summary.Dir, m.Summary.Cached = dir, true
	return m, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// hashJSON returns the first 10 hex digits of the SHA-256 of v's JSON encoding.
func hashJSON(v any) string {
	sum := sha256.Sum256(mustJSON(v))
	return hex.EncodeToString(sum[:])[:10]
}
