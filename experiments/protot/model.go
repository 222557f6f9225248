package protot

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
	"github.com/protolab/protolab/workbench/tokenizer"
)

// Model is a trained (or loaded) language model of the study with its tokenizer.
type Model struct {
	Config    RunConfig
	Tokenizer *tokenizer.Tokenizer
	Ctx       *context.Context
	Backend   backends.Backend
}

func nextTokenLoss(cfg decoder.Config) fit.LossFn {
	return func(ctx *context.Context, inputs []*Node) *Node { return decoder.NextTokenLoss(ctx, cfg, inputs[0]) }
}

// Open loads a model from a run folder: config.json, tokenizer.json and weights.safetensors, or the newest
// checkpoint when the run did not finish.
func Open(dir string) (*Model, error) {
	var rc RunConfig
	if err := store.LoadJSON(filepath.Join(dir, ConfigFile), &rc); err != nil {
		return nil, errors.WithMessagef(err, "%s is not a protot run folder (no %s)", dir, ConfigFile)
	}
	tok, err := tokenizer.Load(filepath.Join(dir, TokenizerFile))
	if err != nil {
		return nil, err
	}
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	ctx := run.NewContext(rc.Seed)
	weights := filepath.Join(dir, WeightsFile)
	if _, err := os.Stat(weights); err == nil {
		if _, err := store.ImportContext(ctx, weights); err != nil {
			return nil, err
		}
	} else if _, err := fit.LoadLatest(filepath.Join(dir, CheckpointDir), ctx); err != nil {
		return nil, errors.WithMessagef(err, "%s has no %s and no usable checkpoint", dir, WeightsFile)
	}
	return &Model{Config: rc, Tokenizer: tok, Ctx: ctx, Backend: backend}, nil
}

// Fork returns a fresh context holding copies of the model's trainable weights (not its optimizer state), seeded
// with the run's seed, so that fine-tuning it leaves the model untouched.
func (m *Model) Fork() (*context.Context, error) {
	dst := run.NewContext(m.Config.Seed)
	for v := range m.Ctx.IterVariables() {
		if !v.Trainable || v.Scope() == fit.OptimizerScope || strings.HasPrefix(v.Scope(), fit.OptimizerScope+"/") {
			continue
		}
		value, err := v.Value()
		if err != nil {
			return nil, errors.Wrapf(err, "protot.Model.Fork: variable %s", v.ScopeAndName())
		}
		c, err := value.LocalClone()
		if err != nil {
			return nil, errors.Wrapf(err, "protot.Model.Fork: copying %s", v.ScopeAndName())
		}
		dst.InAbsPath(v.Scope()).Checked(false).VariableWithValue(v.Name(), c)
	}
	return dst, nil
}

// Perplexity evaluates the model on [B, T+1] token batches.
func (m *Model) Perplexity(batches []*tensors.Tensor) (eval.PerplexityResult, error) {
	cfg := m.Config.Model
	return eval.Perplexity(m.Backend, m.Ctx, func(ctx *context.Context, batch *Node) *Node {
		return decoder.TokenLosses(ctx, cfg, batch)
	}, batches)
}

// TokenLosses returns, for each row of ids (padded to one length with any valid token), the negative
// log-likelihoods of ids[r][t+1] given ids[r][:t+1]: [N, L] → [N, L−1] as float64. Rows must have equal length ≥ 2.
func (m *Model) TokenLosses(ids [][]int32) ([][]float64, error) {
	if len(ids) == 0 || len(ids[0]) < 2 {
		return nil, errors.New("protot.Model.TokenLosses: want at least one row of ≥ 2 tokens")
	}
	for r, row := range ids {
		if len(row) != len(ids[0]) {
			return nil, errors.Errorf("protot.Model.TokenLosses: row %d has %d tokens, row 0 has %d", r, len(row),
				len(ids[0]))
		}
	}
	cfg := m.Config.Model
	e, err := context.NewExec(m.Backend, m.Ctx.Reuse(), func(ctx *context.Context, batch *Node) *Node {
		return ConvertDType(decoder.TokenLosses(ctx, cfg, batch), dtypes.Float64)
	})
	if err != nil {
		return nil, errors.Wrap(err, "protot.Model.TokenLosses")
	}
	out, err := e.Exec(ids)
	if err != nil {
		return nil, errors.Wrap(err, "protot.Model.TokenLosses")
	}
	flat := tensors.MustCopyFlatData[float64](out[0])
	cols := len(ids[0]) - 1
	rows := make([][]float64, len(ids))
	for r := range rows {
		rows[r] = flat[r*cols : (r+1)*cols]
	}
	return rows, nil
}

// Generate continues each prompt (text) and returns the completions as text and as token ids (without the stop
// token). Each prompt is preceded by "<|eos|>", as a document is in the packed training stream. sc.StopToken −1
// never stops, so every completion has sc.MaxNewTokens tokens; a generated "<|eos|>" (a document end) decodes to
// its name.
func (m *Model) Generate(prompts []string, sc eval.SampleConfig) ([]string, [][]int32, eval.GenerateStats, error) {
	var stats eval.GenerateStats
	if len(prompts) == 0 {
		return nil, nil, stats, errors.New("protot.Model.Generate: no prompts")
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
			return nil, nil, stats, errors.Errorf("protot.Model.Generate: prompt %d (%q) has no tokens", i, p)
		}
		maxPrompt = max(maxPrompt, len(ids[i]))
	}
	capacity := maxPrompt + sc.MaxNewTokens
	cfg := m.Config.Model
	dec, err := eval.NewDecoder(m.Backend, m.Ctx, func(ctx *context.Context, token, pos *Node, state []*Node) (*Node, []*Node) {
		return decoder.Step(ctx, cfg, token, pos, state)
	}, decoder.StateShapes(cfg, len(prompts), capacity), len(prompts), capacity)
	if err != nil {
		return nil, nil, stats, err
	}
	out, stats, err := dec.Generate(ids, sc)
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

// Prompts returns the first `words` words of each of the first n texts with more than `words` words, the rest of
// each such text (its true continuation, with a leading space) and the text's index.
func Prompts(texts []string, n, words int) (prompts, rests []string, docs []int) {
	for i, t := range texts {
		if len(prompts) == n {
			break
		}
		f := strings.Fields(t)
		if len(f) <= words {
			continue
		}
		prompts = append(prompts, strings.Join(f[:words], " "))
		rests = append(rests, " "+strings.Join(f[words:], " "))
		docs = append(docs, i)
	}
	return prompts, rests, docs
}
