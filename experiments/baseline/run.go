package lm

import (
	stdctx "context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
	"github.com/protolab/protolab/workbench/tokenizer"
)

// Files written under Config.Out.
const (
	ConfigFile    = "config.json"         // the final configuration, written before training starts
	TokenizerFile = "tokenizer.json"      // the BPE tokenizer (workbench/tokenizer JSON format)
	WeightsFile   = "weights.safetensors" // trained model weights (workbench/store naming)
	ResultFile    = "result.json"         // Result
	CheckpointDir = "checkpoints"         // fit checkpoints (weights, optimizer state, data cursor)
)

// Result is what Run returns and writes to result.json.
type Result struct {
	Provenance *run.Provenance       `json:"provenance"`
	NumParams  int                   `json:"num_params"`
	Tokens     TokenCounts           `json:"tokens"`
	History    *fit.History          `json:"history"`
	Val        eval.PerplexityResult `json:"val"`        // final validation perplexity
	Samples    []Sample              `json:"samples"`    // generations from validation prompts
	Generation eval.GenerateStats    `json:"generation"` // cost of generating Samples
	Dir        string                `json:"dir,omitempty"`
}

// TokenCounts sizes the data of a run.
type TokenCounts struct {
	Vocab       int `json:"vocab"`
	Train       int `json:"train"`         // tokens in the packed training stream
	Val         int `json:"val"`           // tokens in the packed validation stream
	SeenInTrain int `json:"seen_in_train"` // steps · B · T
}

// Sample is one generation.
type Sample struct {
	Prompt     string `json:"prompt"`
	Completion string `json:"completion"`
}

// Option changes how Run runs.
type Option func(*options)

type options struct {
	overrides string
	onStep    func(step int, m fit.Metrics)
	onEval    func(step int, e fit.EvalMetrics)
	progress  io.Writer
	ctx       stdctx.Context
}

// WithOverrides records the override string applied to the preset, for provenance.
func WithOverrides(s string) Option { return func(o *options) { o.overrides = s } }

// OnStep calls fn after every logged training step (live plots).
func OnStep(fn func(step int, m fit.Metrics)) Option { return func(o *options) { o.onStep = fn } }

// OnEval calls fn after every validation.
func OnEval(fn func(step int, e fit.EvalMetrics)) Option { return func(o *options) { o.onEval = fn } }

// Progress sends the progress line to w (default stderr; nil silences it).
func Progress(w io.Writer) Option { return func(o *options) { o.progress = w } }

// WithContext lets a caller interrupt training; the run checkpoints and returns the context's error.
func WithContext(c stdctx.Context) Option { return func(o *options) { o.ctx = c } }

// Run trains and evaluates the baseline LM. With cfg.Out set, it writes config.json first, then checkpoints during
// training (an interrupted run resumes from them when Run is called again with the same config and folder), and
// finally tokenizer.json, weights.safetensors and result.json.
func Run(cfg Config, opts ...Option) (*Result, error) {
	o := options{progress: os.Stderr}
	for _, opt := range opts {
		opt(&o)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	prov := run.NewProvenance(&cfg, o.overrides, cfg.Seed)
	res := &Result{Provenance: prov, Dir: cfg.Out}

	var tokPath, ckptDir string
	if cfg.Out != "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return nil, errors.Wrapf(err, "creating the output folder %s", cfg.Out)
		}
		tokPath = filepath.Join(cfg.Out, TokenizerFile)
		ckptDir = filepath.Join(cfg.Out, CheckpointDir)
	}
	cfg.Data.Seed = cfg.Seed
	cfg.Train.Seed = cfg.Seed
	var prep *lmdata.Prepared
	if err := prov.Time("data", func() error {
		prep, err = lmdata.Prepare(cfg.Data, tokPath)
		return err
	}); err != nil {
		return nil, err
	}
	if cfg.Model.VocabSize == 0 {
		cfg.Model.VocabSize = prep.Tokenizer.VocabSize()
	}
	if cfg.Out != "" {
		if err := store.SaveJSON(filepath.Join(cfg.Out, ConfigFile), cfg); err != nil {
			return nil, err
		}
	}
	res.NumParams = cfg.Model.NumParams()
	res.Tokens = TokenCounts{Vocab: prep.Tokenizer.VocabSize(), Train: len(prep.TrainSeqs.Stream),
		Val: len(prep.ValSeqs.Stream), SeenInTrain: cfg.Train.Steps * cfg.Data.BatchSize * cfg.Data.SeqLen}

	trainB, err := prep.TrainBatches()
	if err != nil {
		return nil, err
	}
	valB, err := prep.ValBatches()
	if err != nil {
		return nil, err
	}
	ctx := run.NewContext(cfg.Seed)
	model := cfg.Model
	lossFn := func(ctx *context.Context, inputs []*Node) *Node { return decoder.NextTokenLoss(ctx, model, inputs[0]) }
	fitOpts := []fit.Option{fit.TokensPerBatch(cfg.Data.BatchSize * cfg.Data.SeqLen), fit.Progress(o.progress)}
	if ckptDir != "" {
		fitOpts = append(fitOpts, fit.CheckpointDir(ckptDir))
	}
	if o.onStep != nil {
		fitOpts = append(fitOpts, fit.OnStep(o.onStep))
	}
	if o.onEval != nil {
		fitOpts = append(fitOpts, fit.OnEval(o.onEval))
	}
	if o.ctx != nil {
		fitOpts = append(fitOpts, fit.WithContext(o.ctx))
	}
	if err := prov.Time("train", func() error {
		res.History, err = fit.Train(backend, ctx, lossFn, trainB, valB, cfg.Train, fitOpts...)
		return err
	}); err != nil {
		return nil, err
	}

	m := &Model{Config: cfg, Tokenizer: prep.Tokenizer, Ctx: ctx, Backend: backend}
	if err := prov.Time("eval", func() error {
		vals, err := prep.ValTensors(cfg.EvalBatches)
		if err != nil {
			return err
		}
		res.Val, err = m.Perplexity(vals)
		return err
	}); err != nil {
		return nil, err
	}
	if cfg.NumSamples > 0 {
		if err := prov.Time("generate", func() error {
			prompts := Prompts(prep.Val.Texts, cfg.NumSamples, cfg.PromptWords)
			completions, stats, err := m.Generate(prompts, cfg.Sample)
			if err != nil {
				return err
			}
			res.Generation = stats
			for i := range prompts {
				res.Samples = append(res.Samples, Sample{Prompt: prompts[i], Completion: completions[i]})
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	prov.Finish()
	if cfg.Out != "" {
		meta := map[string]string{"format": "protolab.lm/v1", "config": string(mustJSON(cfg)), "git": prov.GitCommit}
		if err := store.ExportContext(ctx, filepath.Join(cfg.Out, WeightsFile), store.Trainable, meta); err != nil {
			return nil, err
		}
		if err := store.SaveJSON(filepath.Join(cfg.Out, ResultFile), res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Prompts returns the first `words` words of each of the first n texts (fewer when there are fewer texts).
func Prompts(texts []string, n, words int) []string {
	var out []string
	for _, t := range texts {
		if len(out) == n {
			break
		}
		f := strings.Fields(t)
		if len(f) == 0 {
			continue
		}
		out = append(out, strings.Join(f[:min(words, len(f))], " "))
	}
	return out
}

// Model is a trained (or loaded) baseline LM with its tokenizer.
type Model struct {
	Config    Config
	Tokenizer *tokenizer.Tokenizer
	Ctx       *context.Context
	Backend   backends.Backend
}

// Open loads a model written by Run from its output folder: config.json, tokenizer.json, and the weights of
// weights.safetensors, or of the newest checkpoint when the run did not finish.
func Open(dir string) (*Model, error) {
	var cfg Config
	if err := store.LoadJSON(filepath.Join(dir, ConfigFile), &cfg); err != nil {
		return nil, errors.WithMessagef(err, "%s is not a finished or started lm run (no %s)", dir, ConfigFile)
	}
	tok, err := tokenizer.Load(filepath.Join(dir, TokenizerFile))
	if err != nil {
		return nil, err
	}
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	ctx := run.NewContext(cfg.Seed)
	weights := filepath.Join(dir, WeightsFile)
	if _, err := os.Stat(weights); err == nil {
		if _, err := store.ImportContext(ctx, weights); err != nil {
			return nil, err
		}
	} else if _, err := fit.LoadLatest(filepath.Join(dir, CheckpointDir), ctx); err != nil {
		return nil, errors.WithMessagef(err, "%s has no %s and no usable checkpoint", dir, WeightsFile)
	}
	m := &Model{Config: cfg, Tokenizer: tok, Ctx: ctx, Backend: backend}
	if err := m.checkWeights(); err != nil {
		return nil, err
	}
	return m, nil
}

// checkWeights verifies that every variable the model needs is present with the right shape, by building the
// forward graph once on a one-token input with a context in reuse mode (gomlx then refuses to create variables).
func (m *Model) checkWeights() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("weights do not match the model config: %v", r)
		}
	}()
	cfg := m.Config.Model
	e, err := context.NewExec(m.Backend, m.Ctx.Reuse(), func(ctx *context.Context, tokens *Node) *Node {
		return decoder.Logits(ctx, cfg, tokens)
	})
	if err != nil {
		return err
	}
	_, err = e.Exec([][]int32{{0}})
	return err
}

// Perplexity evaluates the model on [B, T+1] token batches.
func (m *Model) Perplexity(batches []*tensors.Tensor) (eval.PerplexityResult, error) {
	cfg := m.Config.Model
	return eval.Perplexity(m.Backend, m.Ctx, func(ctx *context.Context, batch *Node) *Node {
		return decoder.TokenLosses(ctx, cfg, batch)
	}, batches)
}

// Generate continues each prompt (text) and returns the completions as text.
func (m *Model) Generate(prompts []string, sc eval.SampleConfig) ([]string, eval.GenerateStats, error) {
	var stats eval.GenerateStats
	if len(prompts) == 0 {
		return nil, stats, errors.New("lm.Generate: no prompts")
	}
	ids := make([][]int32, len(prompts))
	maxPrompt := 0
	for i, p := range prompts {
		ids[i] = m.Tokenizer.Encode(p)
		maxPrompt = max(maxPrompt, len(ids[i]))
	}
	capacity := m.Config.Model.MaxLen
	if maxPrompt+sc.MaxNewTokens > capacity {
		return nil, stats, errors.Errorf("lm.Generate: prompt of %d tokens + %d new tokens exceeds model.max_len=%d",
			maxPrompt, sc.MaxNewTokens, capacity)
	}
	if eos, ok := m.Tokenizer.SpecialID("<|eos|>"); ok && sc.StopToken < 0 {
		sc.StopToken = eos
	}
	cfg := m.Config.Model
	dec, err := eval.NewDecoder(m.Backend, m.Ctx, func(ctx *context.Context, token, pos *Node, state []*Node) (*Node, []*Node) {
		return decoder.Step(ctx, cfg, token, pos, state)
	}, decoder.StateShapes(cfg, len(prompts), capacity), len(prompts), capacity)
	if err != nil {
		return nil, stats, err
	}
	out, stats, err := dec.Generate(ids, sc)
	if err != nil {
		return nil, stats, err
	}
	texts := make([]string, len(out))
	for i, o := range out {
		if n := len(o); n > 0 && o[n-1] == sc.StopToken {
			o = o[:n-1]
		}
		texts[i] = m.Tokenizer.DecodeString(o)
	}
	return texts, stats, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// LoadResult reads the result.json a finished run wrote into dir.
func LoadResult(dir string) (*Result, error) {
	var res Result
	if err := store.LoadJSON(filepath.Join(dir, ResultFile), &res); err != nil {
		return nil, errors.WithMessagef(err, "%s holds no finished lm run", dir)
	}
	return &res, nil
}
