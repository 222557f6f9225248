package lm

import (
	stdctx "context"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/tokenizer"
)

// Model is a trained (or opened) language model: its resolved Config, tokenizer and weights.
type Model struct {
	Config    Config
	Tokenizer *tokenizer.Tokenizer
	Store     *model.Store // the weights (and, opened from a checkpoint, the optimizer state)
	Backend   compute.Backend
	// Dir is the run folder ("" for a model trained in memory).
	Dir string
	// Result is the training record; nil for a run opened before it finished (from a checkpoint).
	Result *Result
	// Cached is true when the model was opened from Dir rather than trained by this call.
	Cached bool
	// Interrupt, when set, stops the model's long calls once it is done: Data's preparation between documents,
	// Perplexity between batches and Generate between decoding steps; they then return its error. Train and
	// LoadOrTrain set it to their run.Context; the CLI sets it on a model it opens.
	Interrupt stdctx.Context
	data      *lmdata.Prepared
}

// interrupt is Interrupt, or a context that is never done.
func (m *Model) interrupt() stdctx.Context {
	if m.Interrupt == nil {
		return stdctx.Background()
	}
	return m.Interrupt
}

// Data returns the model's prepared corpus (split, tokenized and packed as in training), preparing it on first use;
// within a process it is shared by every model with the same data config.
func (m *Model) Data() (*lmdata.Prepared, error) {
	if m.data == nil {
		tokPath := ""
		if m.Dir != "" {
			tokPath = m.Dir + "/" + TokenizerFile
		}
		p, err := prepare(run.NewOptions(run.Context(m.Interrupt), run.Progress(nil)), m.Config.Data, tokPath)
		if err != nil {
			return nil, err
		}
		m.data = p
	}
	return m.data, nil
}

// Dense reports whether the model has the dense LM head (no PRISM head).
func (m *Model) Dense() bool { return m.Config.Head != HeadPrism }

// Logits returns the model's next-token logits as a graph function: tokens [B, T] → [B, T, V]. For a PRISM model
// they are its head's l = W(r + ẑ).
func (m *Model) Logits(scope *model.Scope, tokens *Node) *Node {
	if !m.Dense() {
		return decoder.PrismLogits(scope, m.Config.Model, m.Config.Prism.Config, tokens)
	}
	return decoder.Logits(scope, m.Config.Model, tokens)
}

// TokenLossesGraph returns the per-token negative log-likelihoods of batch [B, T+1] (predicting column t+1 from
// columns ≤ t): → [B, T].
func (m *Model) TokenLossesGraph(scope *model.Scope, batch *Node) *Node {
	if m.Dense() {
		return decoder.TokenLosses(scope, m.Config.Model, batch)
	}
	T1 := batch.Shape().Dim(1)
	in := Slice(batch, AxisRange(), AxisRange(0, T1-1))
	tg := Slice(batch, AxisRange(), AxisRange(1, T1))
	return decoder.CrossEntropy(m.Logits(scope, in), tg)
}

// Perplexity evaluates the model's next-token cross-entropy on [B, T+1] token batches.
func (m *Model) Perplexity(batches []*tensors.Tensor) (eval.PerplexityResult, error) {
	return eval.PerplexityContext(m.interrupt(), m.Backend, m.Store, m.TokenLossesGraph, batches)
}

// TokenLosses returns, for each row of ids (padded to one length with any valid token), the negative
// log-likelihoods of ids[r][t+1] given ids[r][:t+1]: [N, L] → [N, L−1] as float64. Rows must have equal length ≥ 2.
func (m *Model) TokenLosses(ids [][]int32) ([][]float64, error) {
	if len(ids) == 0 || len(ids[0]) < 2 {
		return nil, errors.New("lm.Model.TokenLosses: want at least one row of ≥ 2 tokens")
	}
	for r, row := range ids {
		if len(row) != len(ids[0]) {
			return nil, errors.Errorf("lm.Model.TokenLosses: row %d has %d tokens, row 0 has %d", r, len(row),
				len(ids[0]))
		}
	}
	e, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch *Node) *Node {
		return ConvertDType(m.TokenLossesGraph(scope, batch), dtypes.Float64)
	})
	if err != nil {
		return nil, errors.Wrap(err, "lm.Model.TokenLosses")
	}
	out, err := e.Exec(ids)
	if err != nil {
		return nil, errors.Wrap(err, "lm.Model.TokenLosses")
	}
	flat := tensors.MustCopyFlatData[float64](out[0])
	cols := len(ids[0]) - 1
	rows := make([][]float64, len(ids))
	for r := range rows {
		rows[r] = flat[r*cols : (r+1)*cols]
	}
	return rows, nil
}

// Fork returns a fresh store holding copies of the model's trainable weights (not its optimizer state), seeded
// with the run's seed, so that fine-tuning it leaves the model untouched.
func (m *Model) Fork() (*model.Store, error) {
	dst := run.NewStore(m.Config.Seed)
	for v := range m.Store.IterVariables() {
		if !v.Trainable || inOptimizer(v) {
			continue
		}
		value, err := v.Value()
		if err != nil {
			return nil, errors.Wrapf(err, "lm.Model.Fork: variable %s", v.Path())
		}
		c, err := value.LocalClone()
		if err != nil {
			return nil, errors.Wrapf(err, "lm.Model.Fork: copying %s", v.Path())
		}
		if _, err := dst.CreateVariable(v.Path(), c); err != nil {
			return nil, errors.Wrapf(err, "lm.Model.Fork: creating %s", v.Path())
		}
	}
	return dst, nil
}

// inOptimizer reports whether v is optimizer state (fit's slots and step counter) rather than a model weight.
func inOptimizer(v *model.Variable) bool {
	return v.Scope() == fit.OptimizerScope || strings.HasPrefix(v.Scope(), fit.OptimizerScope+"/")
}

// Step returns the model's decoding step (eval.StepFn): decoder.Step for the dense head; for the PRISM head the step
// of SuppressedStep with no prototype suppressed, whose logits are the head's own.
func (m *Model) Step() eval.StepFn {
	cfg := m.Config.Model
	if !m.Dense() {
		return SuppressedStep(cfg, m.Config.Prism.Config, make([]float64, m.Config.Prism.NumPrototypes),
			prism.SuppressZero)
	}
	return func(scope *model.Scope, token, pos *Node, state []*Node) (*Node, []*Node) {
		return decoder.Step(scope, cfg, token, pos, state)
	}
}

// Generate continues each prompt (text) and returns the completions as text and as token ids (without the stop
// token). Each prompt is preceded by "<|eos|>", as a document is in the packed training stream. sc.StopToken −1
// never stops, so every completion has sc.MaxNewTokens tokens, and a generated "<|eos|>" (a document end) decodes to
// its name; give the tokenizer's "<|eos|>" id to stop at document ends. Prompt plus new tokens must fit
// model.max_len.
func (m *Model) Generate(prompts []string, sc eval.SampleConfig) ([]string, [][]int32, eval.GenerateStats, error) {
	var stats eval.GenerateStats
	if len(prompts) == 0 {
		return nil, nil, stats, errors.New("lm.Model.Generate: no prompts")
	}
	eos, hasEOS := m.Tokenizer.SpecialID("<|eos|>")
	ids := make([][]int32, len(prompts))
	maxPrompt := 0
	for i, p := range prompts {
		if hasEOS {
			ids[i] = []int32{eos}
		}
		ids[i] = append(ids[i], m.Tokenizer.Encode(p)...)
		if len(ids[i]) == 0 {
			return nil, nil, stats, errors.Errorf("lm.Model.Generate: prompt %d (%q) has no tokens", i, p)
		}
		maxPrompt = max(maxPrompt, len(ids[i]))
	}
	capacity := maxPrompt + sc.MaxNewTokens
	if capacity > m.Config.Model.MaxLen {
		return nil, nil, stats, errors.Errorf("lm.Model.Generate: a prompt of %d tokens + %d new tokens exceeds "+
			"model.max_len=%d", maxPrompt, sc.MaxNewTokens, m.Config.Model.MaxLen)
	}
	cfg := m.Config.Model
	dec, err := eval.NewDecoder(m.Backend, m.Store, m.Step(), decoder.StateShapes(cfg, len(prompts), capacity),
		len(prompts), capacity)
	if err != nil {
		return nil, nil, stats, err
	}
	out, stats, err := dec.GenerateContext(m.interrupt(), ids, sc)
	if err != nil {
		return nil, nil, stats, err
	}
	texts := make([]string, len(out))
	for i, o := range out {
		if n := len(o); n > 0 && o[n-1] == sc.StopToken {
			out[i] = o[:n-1]
		}
		texts[i] = m.Tokenizer.DecodeString(out[i])
	}
	return texts, out, stats, nil
}
