package prism

import (
	"bytes"
	stdctx "context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
	"github.com/protolab/protolab/workbench/tokenizer"
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
// result, which is what lets LoadOrTrain load instead of training. The dense run has no Prism section, so every
// PRISM variant of a study shares one dense baseline.
type RunConfig struct {
	Dense       bool           `json:"dense"`
	Seed        uint64         `json:"seed"`
	Data        lmdata.Config  `json:"data"`
	Model       decoder.Config `json:"model"`
	Prism       *prism.Config  `json:"prism,omitempty"` // nil for the dense model
	Train       fit.Config     `json:"train"`
	ProtoWarmup int            `json:"proto_warmup,omitempty"`
	SeedBatches int            `json:"seed_batches,omitempty"`
	RescaleSeed bool           `json:"rescale_seed,omitempty"`
	EvalBatches int            `json:"eval_batches"`
}

// RunConfig returns the configuration of the PRISM run (dense false) or of the dense-head run (dense true): the
// study's data, backbone and schedule with every seed set to c.Seed.
func (c Config) RunConfig(dense bool) RunConfig {
	d := c.Data
	d.Seed = c.Seed
	t := c.Train
	t.Seed = c.Seed
	rc := RunConfig{Dense: dense, Seed: c.Seed, Data: d, Model: c.model(), Train: t, EvalBatches: c.EvalBatches}
	if !dense {
		p := c.Prism
		rc.Prism = &p
		rc.ProtoWarmup = c.ProtoWarmup
		rc.SeedBatches = c.SeedBatches
		rc.RescaleSeed = c.RescaleSeed
	}
	return rc
}

// Name returns a readable folder name: "dense-d<width>-s<steps>-seed<seed>" or
// "prism-d<width>-K<K>-k<k>-s<steps>-seed<seed>".
func (r RunConfig) Name() string {
	if r.Dense || r.Prism == nil {
		return fmt.Sprintf("dense-d%d-s%d-seed%d", r.Model.Width, r.Train.Steps, r.Seed)
	}
	return fmt.Sprintf("prism-d%d-K%d-k%d-s%d-seed%d", r.Model.Width, r.Prism.NumPrototypes, r.Prism.TopK,
		r.Train.Steps, r.Seed)
}

// Hash returns the first 10 hex digits of the SHA-256 of the JSON encoding: the cache key.
func (r RunConfig) Hash() string {
	sum := sha256.Sum256(mustJSON(r))
	return hex.EncodeToString(sum[:])[:10]
}

// RunResult is what a run writes to result.json.
type RunResult struct {
	Config     RunConfig             `json:"config"`
	Provenance *run.Provenance       `json:"provenance"`
	NumParams  int                   `json:"num_params"`
	History    *fit.History          `json:"history"`
	Val        eval.PerplexityResult `json:"val"` // final validation perplexity (EvalBatches batches)
	// TrainTokensPerSec is the mean training throughput, leaving out the first (compiling) step.
	TrainTokensPerSec float64 `json:"train_tokens_per_sec"`
}

// TrainSeconds returns the wall time of training (0 when unknown).
func (r *RunResult) TrainSeconds() float64 {
	if r.Provenance == nil {
		return 0
	}
	return r.Provenance.Timings["train"]
}

// Model is a trained (or loaded) model of the study: a PRISM decoder or the dense-head decoder with the same
// backbone.
type Model struct {
	Cfg     decoder.Config   // the backbone (vocab_size set)
	Prism   prism.Config     // the head; the zero value for the dense model
	Dense   bool             // true for the dense-head baseline
	Ctx     *context.Context // trained variables
	Backend backends.Backend
	Data    *lmdata.Prepared // tokenizer, train/validation sequences (the training sequences attribution ranks)
	Dir     string           // run folder (checkpoints, cached results); "" for an in-memory run
	Run     *RunResult       // configuration, history, validation perplexity, provenance
	// Cached is true when the model was loaded from Dir rather than trained by this call.
	Cached bool
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

// LoadOrTrain returns the PRISM model of cfg (dense false) or its dense-head baseline (dense true). With cfg.Out
// set, a finished run in RunDir(cfg.Out, rc) is loaded (Model.Cached) instead of trained, and an unfinished one
// resumes from its checkpoints; otherwise the model is trained, evaluated on cfg.EvalBatches validation batches and
// (with cfg.Out set) written to the folder.
func LoadOrTrain(cfg Config, dense bool, opts ...Option) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return loadOrTrainRun(cfg.RunConfig(dense), cfg.Out, newOptions(opts))
}

func loadOrTrainRun(rc RunConfig, root string, o options) (*Model, error) {
	dir := ""
	if root != "" {
		dir = RunDir(root, rc)
		if _, err := os.Stat(filepath.Join(dir, ResultFile)); err == nil {
			m, err := Open(dir)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(mustJSON(m.Run.Config), mustJSON(rc)) {
				return nil, errors.Errorf("%s records a different run config than its folder name says; delete the "+
					"folder", filepath.Join(dir, ResultFile))
			}
			o.logf("prism: loaded %s (validation perplexity %.3f)", rc.Name(), m.Run.Val.Perplexity)
			return m, nil
		}
	}
	o.logf("prism: training %s (%d steps)", rc.Name(), rc.Train.Steps)
	return trainRun(rc, dir, o)
}

// Open loads a finished run folder: config.json, tokenizer.json, weights.safetensors and result.json, and prepares
// its data again (memoised within the process).
func Open(dir string) (*Model, error) {
	var res RunResult
	if err := store.LoadJSON(filepath.Join(dir, ResultFile), &res); err != nil {
		return nil, errors.WithMessagef(err, "%s is not a finished prism run folder", dir)
	}
	rc := res.Config
	prep, err := prepare(rc.Data, filepath.Join(dir, TokenizerFile))
	if err != nil {
		return nil, err
	}
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	ctx := run.NewContext(rc.Seed)
	if _, err := store.ImportContext(ctx, filepath.Join(dir, WeightsFile)); err != nil {
		return nil, err
	}
	return newModel(rc, ctx, backend, prep, dir, &res, true), nil
}

func newModel(rc RunConfig, ctx *context.Context, backend backends.Backend, prep *lmdata.Prepared, dir string,
	res *RunResult, cached bool) *Model {
	m := &Model{Cfg: rc.Model, Dense: rc.Dense || rc.Prism == nil, Ctx: ctx, Backend: backend, Data: prep, Dir: dir,
		Run: res, Cached: cached}
	if !m.Dense {
		m.Prism = *rc.Prism
	}
	return m
}

func trainRun(rc RunConfig, dir string, o options) (*Model, error) {
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	prov := run.NewProvenance(&rc, o.overrides, rc.Seed)
	res := &RunResult{Config: rc, Provenance: prov}
	tokPath := ""
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, errors.Wrapf(err, "creating the run folder %s", dir)
		}
		if err := store.SaveJSON(filepath.Join(dir, ConfigFile), rc); err != nil {
			return nil, err
		}
		tokPath = filepath.Join(dir, TokenizerFile)
	}
	var prep *lmdata.Prepared
	if err := prov.Time("data", func() error {
		prep, err = prepare(rc.Data, tokPath)
		return err
	}); err != nil {
		return nil, err
	}
	if v := prep.Tokenizer.VocabSize(); v != rc.Model.VocabSize {
		return nil, errors.Errorf("run %s: the tokenizer has %d tokens, the model %d", rc.Name(), v, rc.Model.VocabSize)
	}
	trainB, err := prep.TrainBatches()
	if err != nil {
		return nil, err
	}
	valB, err := prep.ValBatches()
	if err != nil {
		return nil, err
	}
	ctx := run.NewContext(rc.Seed)
	m := newModel(rc, ctx, backend, prep, dir, res, false)
	res.NumParams = rc.Model.NumParams()
	loss := denseLoss(rc.Model)
	if !m.Dense {
		res.NumParams = decoder.PrismNumParams(rc.Model, *rc.Prism)
		loss = prismLoss(rc)
	}
	goCtx, cancel := stdctx.WithCancel(stdctx.Background())
	defer cancel()
	fitOpts := []fit.Option{fit.TokensPerBatch(rc.Data.BatchSize * rc.Data.SeqLen), fit.Progress(o.progress),
		fit.WithContext(goCtx)}
	if dir != "" {
		fitOpts = append(fitOpts, fit.CheckpointDir(filepath.Join(dir, CheckpointDir)))
	}
	var seedErr error
	if !m.Dense && rc.ProtoWarmup > 0 {
		// Seed the bank right after update ProtoWarmup, before that step's checkpoint (fit calls OnStep first).
		fitOpts = append(fitOpts, fit.OnStep(func(step int, _ fit.Metrics) {
			if step == rc.ProtoWarmup {
				if seedErr = m.seedBank(rc); seedErr != nil {
					cancel()
				}
			}
		}))
		if rc.ProtoWarmup%rc.Train.LogEvery != 0 {
			return nil, errors.Errorf("run %s: proto_warmup=%d is not a multiple of train.log_every=%d, so the bank "+
				"would never be seeded", rc.Name(), rc.ProtoWarmup, rc.Train.LogEvery)
		}
	}
	if err := prov.Time("train", func() error {
		res.History, err = fit.Train(backend, ctx, loss, trainB, valB, rc.Train, fitOpts...)
		return err
	}); err != nil {
		if seedErr != nil {
			return nil, errors.WithMessagef(seedErr, "run %s: seeding the bank", rc.Name())
		}
		return nil, errors.WithMessagef(err, "run %s", rc.Name())
	}
	res.TrainTokensPerSec = meanThroughput(res.History)
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
	if dir != "" {
		if err := prep.Tokenizer.Save(filepath.Join(dir, TokenizerFile)); err != nil {
			return nil, err
		}
		meta := map[string]string{"format": "protolab.prism/v1", "config": string(mustJSON(rc)), "git": prov.GitCommit}
		if err := store.ExportContext(ctx, filepath.Join(dir, WeightsFile), store.Trainable, meta); err != nil {
			return nil, err
		}
		if err := store.SaveJSON(filepath.Join(dir, ResultFile), res); err != nil {
			return nil, err
		}
	}
	return m, nil
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

func denseLoss(cfg decoder.Config) fit.LossFn {
	return func(ctx *context.Context, in []*Node) *Node { return decoder.NextTokenLoss(ctx, cfg, in[0]) }
}

// prismLoss is L_CE + on·(λ_rec·L_REC + λ_1·L_R1 + λ_2·L_R2) with on = [optimizer step ≥ ProtoWarmup], read from
// fit's step counter so that one compiled step graph serves the warm-up and the rest of training.
func prismLoss(rc RunConfig) fit.LossFn {
	pc := *rc.Prism
	return func(ctx *context.Context, in []*Node) *Node {
		_, terms := decoder.PrismLoss(ctx, rc.Model, pc, in[0])
		var rest *Node
		for _, wt := range []struct {
			lambda float64
			term   *Node
		}{{pc.RecWeight, terms.Rec}, {pc.R1Weight, terms.R1}, {pc.R2Weight, terms.R2}} {
			if wt.lambda == 0 {
				continue
			}
			if x := MulScalar(wt.term, wt.lambda); rest == nil {
				rest = x
			} else {
				rest = Add(rest, x)
			}
		}
		if rest == nil {
			return terms.CE
		}
		if rc.ProtoWarmup > 0 {
			g := terms.CE.Graph()
			step := ctx.InAbsPath(fit.OptimizerScope).Checked(false).
				VariableWithValue(fit.StepVariable, int64(0)).SetTrainable(false).ValueGraph(g)
			on := ConvertDType(GreaterOrEqual(step, Const(g, int64(rc.ProtoWarmup))), terms.CE.DType())
			rest = Mul(on, rest)
		}
		return Add(terms.CE, rest)
	}
}

// seedBank overwrites the bank with K distinct hidden states drawn uniformly from the first SeedBatches training
// batches (spec §2.3), then, with RescaleSeed, multiplies it by s = Σ⟨z_t, ẑ_t⟩/Σ‖ẑ_t‖² over those tokens.
func (m *Model) seedBank(rc RunConfig) error {
	batches, err := m.trainTensors(rc.SeedBatches)
	if err != nil {
		return err
	}
	D, K := rc.Model.Width, rc.Prism.NumPrototypes
	st, err := m.HeadStats(batches)
	if err != nil {
		return err
	}
	if st.N < K {
		return errors.Errorf("prism: %d tokens cannot seed %d prototypes", st.N, K)
	}
	perm := run.RNG(rc.Seed, "prism/seed-bank").Perm(st.N)[:K]
	bank := make([]float64, K*D)
	for j, t := range perm {
		copy(bank[j*D:(j+1)*D], st.Z[t*D:(t+1)*D])
	}
	v := prism.BankVariable(m.Ctx)
	if v == nil {
		return errors.New("prism: the bank variable does not exist yet")
	}
	if err := v.SetValue(floatTensor(bank, v.DType(), K, D)); err != nil {
		return errors.Wrap(err, "prism: setting the seeded bank")
	}
	if !rc.RescaleSeed {
		return nil
	}
	// The routing of the seeded bank, then the least-squares scale of its reconstructions.
	if st, err = m.HeadStats(batches); err != nil {
		return err
	}
	k := st.TopK
	num, den := 0.0, 0.0
	zhat := make([]float64, D)
	for t := 0; t < st.N; t++ {
		clear(zhat)
		for x := 0; x < k; x++ {
			a, j := st.Acts[t*k+x], int(st.Indices[t*k+x])
			for d := 0; d < D; d++ {
				zhat[d] += a * bank[j*D+d]
			}
		}
		for d := 0; d < D; d++ {
			num += st.Z[t*D+d] * zhat[d]
			den += zhat[d] * zhat[d]
		}
	}
	if !(den > 0) || !(num > 0) {
		return errors.Errorf("prism: cannot rescale the seeded bank (Σ⟨z, ẑ⟩ = %g, Σ‖ẑ‖² = %g)", num, den)
	}
	for i := range bank {
		bank[i] *= num / den
	}
	return errors.Wrap(v.SetValue(floatTensor(bank, v.DType(), K, D)), "prism: setting the rescaled bank")
}

// trainTensors returns the first n training batches [B, T+1] in the training order.
func (m *Model) trainTensors(n int) ([]*tensors.Tensor, error) {
	b, err := m.Data.TrainBatches()
	if err != nil {
		return nil, err
	}
	out := make([]*tensors.Tensor, n)
	for i := range out {
		ts, err := b.Next()
		if err != nil {
			return nil, errors.Wrapf(err, "prism: training batch %d", i)
		}
		out[i] = ts[0]
	}
	return out, nil
}

// ValTensors returns up to n validation batches [B, T+1] (all when n ≤ 0), in stream order.
func (m *Model) ValTensors(n int) ([]*tensors.Tensor, error) { return m.Data.ValTensors(n) }

// Perplexity evaluates the model's next-token cross-entropy on [B, T+1] token batches; the PRISM model's logits are
// its head's l = W(r + ẑ).
func (m *Model) Perplexity(batches []*tensors.Tensor) (eval.PerplexityResult, error) {
	cfg, pc := m.Cfg, m.Prism
	if m.Dense {
		return eval.Perplexity(m.Backend, m.Ctx, func(ctx *context.Context, batch *Node) *Node {
			return decoder.TokenLosses(ctx, cfg, batch)
		}, batches)
	}
	return eval.Perplexity(m.Backend, m.Ctx, func(ctx *context.Context, batch *Node) *Node {
		T1 := batch.Shape().Dim(1)
		in := Slice(batch, AxisRange(), AxisRange(0, T1-1))
		tg := Slice(batch, AxisRange(), AxisRange(1, T1))
		return decoder.CrossEntropy(decoder.PrismLogits(ctx, cfg, pc, in), tg)
	}, batches)
}

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *tokenizer.Tokenizer { return m.Data.Tokenizer }

// HeadStats holds the PRISM head's per-token outputs over a set of [B, T+1] batches, flattened in batch, row,
// position order, as float64 (N tokens, D width, K bank, k = TopK). Token n predicts Targets[n] from the inputs up
// to its position; Seq[n] = batch·B + row numbers the sequences in the order given.
type HeadStats struct {
	N, D, K, TopK int
	Z             []float64 // [N, D] final-normalised hidden states z_t
	Indices       []int32   // [N, k] selected prototypes K_t, by decreasing cosine
	Acts          []float64 // [N, k] activations a_{t,i} (0 where the cosine is not positive)
	Targets       []int32   // [N] gold next tokens y_t
	Seq           []int32   // [N] sequence number of each token
	Pos           []int32   // [N] position of each token in its sequence
}

// HeadStats runs the PRISM head on batches ([B, T+1] int32, one shape) and returns its per-token outputs. For the
// dense model only Z, Targets, Seq and Pos are filled.
func (m *Model) HeadStats(batches []*tensors.Tensor) (*HeadStats, error) {
	if len(batches) == 0 {
		return nil, errors.New("prism.Model.HeadStats: no batches")
	}
	cfg, pc, dense := m.Cfg, m.Prism, m.Dense
	exec, err := context.NewExec(m.Backend, m.Ctx.Reuse(), func(ctx *context.Context, batch *Node) []*Node {
		T1 := batch.Shape().Dim(1)
		in := Slice(batch, AxisRange(), AxisRange(0, T1-1))
		if dense {
			return []*Node{ConvertDType(decoder.Hidden(ctx, cfg, in), dtypes.Float64)}
		}
		d := decoder.PrismHead(ctx, cfg, pc, in)
		return []*Node{ConvertDType(d.Hidden, dtypes.Float64), ConvertDType(d.Indices, dtypes.Int32),
			ConvertDType(d.Activations, dtypes.Float64)}
	})
	if err != nil {
		return nil, errors.Wrap(err, "prism.Model.HeadStats")
	}
	st := &HeadStats{D: cfg.Width}
	if !dense {
		st.K, st.TopK = pc.NumPrototypes, pc.TopK
	}
	seq := 0
	for i, b := range batches {
		B, T := b.Shape().Dim(0), b.Shape().Dim(1)-1
		outs, err := exec.Exec(b)
		if err != nil {
			return nil, errors.Wrapf(err, "prism.Model.HeadStats: batch %d", i)
		}
		st.Z = append(st.Z, tensors.MustCopyFlatData[float64](outs[0])...)
		if !dense {
			st.Indices = append(st.Indices, tensors.MustCopyFlatData[int32](outs[1])...)
			st.Acts = append(st.Acts, tensors.MustCopyFlatData[float64](outs[2])...)
		}
		toks := tensors.MustCopyFlatData[int32](b)
		for r := 0; r < B; r++ {
			for t := 0; t < T; t++ {
				st.Targets = append(st.Targets, toks[r*(T+1)+t+1])
				st.Seq = append(st.Seq, int32(seq))
				st.Pos = append(st.Pos, int32(t))
			}
			seq++
		}
	}
	st.N = len(st.Targets)
	return st, nil
}

// Bank returns the prototype bank P [K, D] (row j = p_j) as float64, row-major. Errors for the dense model.
func (m *Model) Bank() ([]float64, error) {
	if m.Dense {
		return nil, errors.New("prism.Model.Bank: the dense model has no prototype bank")
	}
	v := prism.BankVariable(m.Ctx)
	if v == nil {
		return nil, errors.New("prism.Model.Bank: no bank variable in the context")
	}
	return variableFloats(v)
}

// Unembed returns the LM head W [V, D] (the token embedding when tied) as float64, row-major.
func (m *Model) Unembed() ([]float64, error) {
	name := decoder.VarLMHead
	scope := m.Ctx.In(decoder.ScopeLMHead)
	if m.Cfg.TieEmbeddings {
		scope, name = m.Ctx.In(decoder.ScopeEmbed), decoder.VarEmbeddings
	}
	v := scope.GetVariable(name)
	if v == nil {
		return nil, errors.Errorf("prism.Model.Unembed: no variable %s/%s", scope.Scope(), name)
	}
	return variableFloats(v)
}

func variableFloats(v *context.Variable) ([]float64, error) {
	t, err := v.Value()
	if err != nil {
		return nil, errors.Wrapf(err, "reading %s", v.ScopeAndName())
	}
	switch t.DType() {
	case dtypes.Float32:
		f := tensors.MustCopyFlatData[float32](t)
		out := make([]float64, len(f))
		for i, x := range f {
			out[i] = float64(x)
		}
		return out, nil
	case dtypes.Float64:
		return tensors.MustCopyFlatData[float64](t), nil
	}
	return nil, errors.Errorf("%s has dtype %s, want float32 or float64", v.ScopeAndName(), t.DType())
}

// floatTensor returns values as a tensor of dtype (float32 or float64) and the given dims.
func floatTensor(values []float64, dt dtypes.DType, dims ...int) *tensors.Tensor {
	if dt == dtypes.Float64 {
		t := tensors.FromFlatDataAndDimensions(append([]float64(nil), values...), dims...)
		return t
	}
	f := make([]float32, len(values))
	for i, x := range values {
		f[i] = float32(x)
	}
	return tensors.FromFlatDataAndDimensions(f, dims...)
}

// prepared memoises lmdata.Prepare within a process: the runs of a comparison or sweep share their data. It keeps
// the two most recent data configurations.
var prepared struct {
	sync.Mutex
	keys []string
	vals []*lmdata.Prepared
}

// prepare returns lmdata.Prepare(d, tokPath), memoised by d (the tokenizer is a function of d).
func prepare(d lmdata.Config, tokPath string) (*lmdata.Prepared, error) {
	key := string(mustJSON(d))
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

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
