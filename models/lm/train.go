package lm

import (
	"bytes"
	stdctx "context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// Files of a run folder.
const (
	ConfigFile    = "config.json"         // the resolved Config, written before training starts
	TokenizerFile = "tokenizer.json"      // the BPE tokenizer, written once the data is prepared
	CheckpointDir = "checkpoints"         // fit checkpoints (weights, optimizer state, data cursor)
	WeightsFile   = "weights.safetensors" // the trained weights (workbench/store naming)
	ResultFile    = "result.json"         // Result, written last: its presence marks a finished run
	ModelsDir     = "models"              // the folder under a run.Out root holding the run folders
	// WeightsFormat is the "format" metadata of WeightsFile.
	WeightsFormat = "protolab.lm/v2"
)

// Result is the record of one training run, written to result.json.
type Result struct {
	Config     Config                `json:"config"` // resolved
	Provenance *run.Provenance       `json:"provenance"`
	NumParams  int                   `json:"num_params"`
	Tokens     TokenCounts           `json:"tokens"`
	History    *fit.History          `json:"history"`
	Val        eval.PerplexityResult `json:"val"` // final validation perplexity over EvalBatches batches
	// TrainTokensPerSec is the mean training throughput of the logged steps after the first (which compiles).
	TrainTokensPerSec float64 `json:"train_tokens_per_sec"`
	// Weights is the size and SHA-256 of weights.safetensors as written; Open checks the file against it (runs
	// of older versions lack it).
	Weights *store.Digest `json:"weights,omitempty"`
}

// TokenCounts sizes the data of a run.
type TokenCounts struct {
	Vocab       int `json:"vocab"`
	Train       int `json:"train"`         // tokens in the packed training stream
	Val         int `json:"val"`           // tokens in the packed validation stream
	SeenInTrain int `json:"seen_in_train"` // steps · B · T
}

// TrainSeconds returns the wall time of training as the run recorded it (0 when unknown).
func (r *Result) TrainSeconds() float64 {
	if r == nil || r.Provenance == nil {
		return 0
	}
	return r.Provenance.Timings["train"]
}

// RunDir returns the run folder of cfg under a run.Out root: out/models/<name>-<hash>.
func RunDir(out string, cfg Config) string {
	return filepath.Join(out, ModelsDir, cfg.Name()+"-"+cfg.Hash())
}

// LoadOrTrain returns the model of cfg. With run.Out set, a finished run in RunDir(out, cfg) is opened
// (Model.Cached) instead of trained, and an unfinished one resumes from its checkpoints; without it the model is
// trained in memory. run.Progress gets one line saying which.
func LoadOrTrain(cfg Config, opts ...run.Option) (*Model, error) {
	o := run.NewOptions(opts...)
	cfg = cfg.Resolved()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dir := ""
	if o.Out != "" {
		dir = RunDir(o.Out, cfg)
		if _, err := os.Stat(filepath.Join(dir, ResultFile)); err == nil {
			m, err := openStored(dir, cfg, o)
			if err != nil {
				return nil, err
			}
			o.Logf("lm", "loaded %s (validation perplexity %.3f)", cfg.Name(), m.Result.Val.Perplexity)
			return m, nil
		}
	}
	o.Logf("lm", "training %s (%d parameters, %d steps)", cfg.Name(), cfg.NumParams(), cfg.Train.Steps)
	return Train(cfg, dir, run.With(o))
}

// sameConfig returns an error naming the differing keys when the config stored in dir is not want.
func sameConfig(dir string, stored, want Config) error {
	a, _ := json.Marshal(stored)
	b, _ := json.Marshal(want)
	if bytes.Equal(a, b) {
		return nil
	}
	diff, err := run.DiffKeys(stored, want)
	if err != nil {
		return err
	}
	return errors.Errorf("%s holds another model than the one asked for (%s); %s", dir, strings.Join(diff, "; "),
		freshHint)
}

// Train trains cfg and evaluates its validation perplexity. With dir set, before writing anything, it refuses a
// folder that holds another config (naming the differing keys), a corrupt config.json, run files without one, or the
// user's files, and opens (Model.Cached) rather than retrains a finished run of cfg. It then locks the folder (a
// second process training there fails at once, naming this one) and writes config.json, tokenizer.json, checkpoints
// during training (a run interrupted by run.Context or a crash resumes from them when Train is called again with the
// same config and folder), weights.safetensors and, last, result.json recording the weights' digest. A run that
// fails (not one interrupted by run.Context) in a folder this call created, before its first checkpoint, leaves no
// folder behind. With dir empty everything stays in
// memory. RemoveRun clears a run folder for a fresh start.
func Train(cfg Config, dir string, opts ...run.Option) (*Model, error) {
	return train(cfg, dir, nil, run.NewOptions(opts...))
}

// TrainOn trains cfg's model, in memory, on the given training batches ([B, T+1] token tensors, used in order once)
// instead of cfg's training split: the same recipe (initialisation from the seed, schedule, PRISM warm-up and bank
// seeding from the first batches given), the same validation data and final perplexity. Counterfactual retraining
// (the linear datamodeling score of training-data attribution) trains on subsets this way. train.steps must not
// exceed the number of batches.
func TrainOn(cfg Config, batches [][]*tensors.Tensor, opts ...run.Option) (*Model, error) {
	if len(batches) < cfg.Train.Steps {
		return nil, errors.Errorf("lm.TrainOn: %d batches for train.steps=%d", len(batches), cfg.Train.Steps)
	}
	return train(cfg, "", batches, run.NewOptions(opts...))
}

func train(cfg Config, dir string, batches [][]*tensors.Tensor, o run.Options) (_ *Model, retErr error) {
	cfg = cfg.Resolved()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	tokPath := ""
	if dir != "" {
		rf, finished, err := claimDir(dir, cfg)
		if err != nil {
			return nil, err
		}
		if finished {
			return openFinished(dir, cfg, o)
		}
		// An interrupted run keeps its folder (it resumes there); a failed one removes a folder it created.
		defer func() { rf.release(retErr != nil && o.Context.Err() == nil) }()
		tokPath = filepath.Join(dir, TokenizerFile)
	}
	prov := run.NewProvenance(&cfg, o.Overrides, cfg.Seed)
	res := &Result{Config: cfg, Provenance: prov, NumParams: cfg.NumParams()}
	var prep *lmdata.Prepared
	if err := prov.Time("data", func() (err error) {
		prep, err = prepare(o, cfg.Data, tokPath)
		return err
	}); err != nil {
		return nil, err
	}
	if v := prep.Tokenizer.VocabSize(); v != cfg.Model.VocabSize {
		return nil, errors.Errorf("lm: run %s: the tokenizer has %d tokens, the model %d", cfg.Name(), v,
			cfg.Model.VocabSize)
	}
	res.Tokens = TokenCounts{Vocab: prep.Tokenizer.VocabSize(), Train: len(prep.TrainSeqs.Stream),
		Val: len(prep.ValSeqs.Stream), SeenInTrain: cfg.Train.Steps * cfg.Data.BatchSize * cfg.Data.SeqLen}
	var trainB fit.Batches
	if batches == nil {
		trainB, err = prep.TrainBatches()
	} else {
		trainB, err = fit.NewSliceBatches(batches)
	}
	if err != nil {
		return nil, err
	}
	valB, err := prep.ValBatches()
	if err != nil {
		return nil, err
	}
	m := &Model{Config: cfg, Tokenizer: prep.Tokenizer, Store: run.NewStore(cfg.Seed), Backend: backend, Dir: dir,
		Result: res, data: prep, Interrupt: o.Context}
	goCtx, cancel := stdctx.WithCancel(o.Context)
	defer cancel()
	fitOpts := []fit.Option{fit.TokensPerBatch(cfg.Data.BatchSize * cfg.Data.SeqLen), fit.Progress(o.Progress),
		fit.WithContext(goCtx), fit.NoDecay(cfg.Model.NoDecay()...),
		fit.OnStep(func(step int, x fit.Metrics) { o.Metric(step, run.MetricTrainLoss, x.Loss) }),
		fit.OnEval(func(step int, e fit.EvalMetrics) { o.Metric(step, run.MetricValLoss, e.Loss) })}
	if dir != "" {
		fitOpts = append(fitOpts, fit.CheckpointDir(filepath.Join(dir, CheckpointDir)), fit.RunConfig(cfg))
	}
	var seedErr error
	if p := cfg.Prism; cfg.Head == HeadPrism && p.ProtoWarmup > 0 {
		// Seed the bank right after update ProtoWarmup, before that step's checkpoint (fit calls OnStep first),
		// from the first SeedBatches batches of the training order.
		fitOpts = append(fitOpts, fit.OnStep(func(step int, _ fit.Metrics) {
			if step != p.ProtoWarmup {
				return
			}
			var seeds []*tensors.Tensor
			if batches == nil {
				seeds, seedErr = m.TrainTensors(p.SeedBatches)
			} else {
				for _, b := range batches[:min(p.SeedBatches, len(batches))] {
					seeds = append(seeds, b[0])
				}
			}
			if seedErr == nil {
				seedErr = m.seedBank(seeds)
			}
			if seedErr != nil {
				cancel()
			}
		}))
	}
	if err := prov.Time("train", func() (err error) {
		res.History, err = fit.Train(backend, m.Store, m.loss(), trainB, valB, cfg.Train, fitOpts...)
		return err
	}); err != nil {
		if seedErr != nil {
			return nil, errors.WithMessagef(seedErr, "lm: run %s: seeding the bank", cfg.Name())
		}
		return nil, errors.WithMessagef(err, "lm: run %s", cfg.Name())
	}
	res.TrainTokensPerSec = meanThroughput(res.History)
	if err := prov.Time("eval", func() error {
		if err := o.Err(); err != nil {
			return err
		}
		vals, err := prep.ValTensors(cfg.EvalBatches)
		if err != nil {
			return err
		}
		res.Val, err = m.Perplexity(vals)
		return err
	}); err != nil {
		return nil, errors.WithMessagef(err, "lm: run %s", cfg.Name())
	}
	prov.Finish()
	if dir != "" {
		cfgJSON, _ := json.Marshal(cfg)
		meta := map[string]string{"format": WeightsFormat, "config": string(cfgJSON), "git": prov.GitCommit}
		weights := filepath.Join(dir, WeightsFile)
		if err := store.ExportContext(m.Store, weights, store.Trainable, meta); err != nil {
			return nil, err
		}
		d, err := store.FileDigest(weights)
		if err != nil {
			return nil, errors.WithMessage(err, "lm: recording the weights' digest")
		}
		res.Weights = &d
		if err := store.SaveJSON(filepath.Join(dir, ResultFile), res); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// openFinished opens the finished run of cfg in dir instead of training it again.
func openFinished(dir string, cfg Config, o run.Options) (*Model, error) {
	m, err := openStored(dir, cfg, o)
	if err != nil {
		return nil, err
	}
	o.Logf("lm", "%s already holds this finished run; loaded it (to train it again, %s)", dir, freshHint)
	return m, nil
}

// openStored opens the finished run in dir, checks that it holds cfg, and lets o's context interrupt its later work.
func openStored(dir string, cfg Config, o run.Options) (*Model, error) {
	m, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if err := sameConfig(dir, m.Config, cfg); err != nil {
		return nil, err
	}
	m.Interrupt = o.Context
	return m, nil
}

// loss returns the training loss of the model: next-token cross-entropy for the dense head, prismLoss for PRISM.
func (m *Model) loss() fit.LossFn {
	if m.Config.Head == HeadPrism {
		return prismLoss(m.Config)
	}
	mc := m.Config.Model
	return func(scope *model.Scope, in []*Node) *Node { return decoder.NextTokenLoss(scope, mc, in[0]) }
}

// meanThroughput is the mean tokens/s of the recorded steps after the first (which includes compilation).
func meanThroughput(h *fit.History) float64 {
	if h == nil || len(h.Steps) < 2 {
		return 0
	}
	sum := 0.0
	for _, s := range h.Steps[1:] {
		sum += s.TokensPerSec
	}
	return sum / float64(len(h.Steps)-1)
}
