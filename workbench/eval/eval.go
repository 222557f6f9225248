package eval

import (
	stdctx "context"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"
	"github.com/protolab/protolab/workbench/host"
)

// TokenLossFn builds the per-token negative log-likelihood: batch [B,T+1] int32 → nll [B,T].
type TokenLossFn func(scope *model.Scope, batch *Node) *Node

// StepFn builds one decoding step: token [B,1] int32 at position pos (int32 scalar) with state → logits [B,V] and the
// new state, whose shapes equal the old one's.
type StepFn func(scope *model.Scope, token, pos *Node, state []*Node) (logits *Node, newState []*Node)

// PerplexityResult is the token-weighted evaluation of a model on a set of batches.
type PerplexityResult struct {
	Loss       float64 `json:"loss"`       // mean negative log-likelihood per token (nats)
	Perplexity float64 `json:"perplexity"` // exp(Loss)
	Tokens     int     `json:"tokens"`     // number of predicted tokens
	Seconds    float64 `json:"seconds"`    // wall time
	TokensPerS float64 `json:"tokens_per_s"`
}

// Perplexity evaluates lossFn on every batch ([B,T+1] int32 tensors, all the same shape so one graph serves them) with
// the model variables in store. It returns an error for no batches or a non-finite loss.
func Perplexity(backend compute.Backend, store *model.Store, lossFn TokenLossFn, batches []*tensors.Tensor) (
	PerplexityResult, error) {
	return PerplexityContext(stdctx.Background(), backend, store, lossFn, batches)
}

// PerplexityContext is Perplexity that stops before the next batch once interrupt is done, returning its error.
func PerplexityContext(interrupt stdctx.Context, backend compute.Backend, store *model.Store, lossFn TokenLossFn,
	batches []*tensors.Tensor) (res PerplexityResult, err error) {
	if len(batches) == 0 {
		return res, errors.New("eval.Perplexity: no batches to evaluate")
	}
	start := time.Now()
	exec, err := model.NewExec(backend, store, func(scope *model.Scope, batch *Node) []*Node {
		nll := lossFn(scope, batch)
		return []*Node{ReduceAllSum(ConvertDType(nll, dtypes.Float64)), Const(batch.Graph(), int64(nll.Shape().Size()))}
	})
	if err != nil {
		return res, errors.Wrap(err, "eval.Perplexity: building the loss graph")
	}
	sum, count := 0.0, 0
	for i, b := range batches {
		if err := interrupt.Err(); err != nil {
			return res, errors.WithMessagef(err, "eval.Perplexity: before batch %d of %d", i, len(batches))
		}
		out, err := exec.Exec(b)
		if err != nil {
			return res, errors.Wrapf(err, "eval.Perplexity: batch %d", i)
		}
		s := tensors.ToScalar[float64](out[0])
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return res, errors.Errorf("eval.Perplexity: batch %d has a non-finite loss (%g)", i, s)
		}
		sum += s
		count += int(tensors.ToScalar[int64](out[1]))
	}
	res.Loss = sum / float64(count)
	res.Perplexity = math.Exp(res.Loss)
	res.Tokens = count
	res.Seconds = time.Since(start).Seconds()
	res.TokensPerS = float64(count) / res.Seconds
	return res, nil
}

// SampleConfig sets how Generate picks tokens.
type SampleConfig struct {
	MaxNewTokens int     `json:"max_new_tokens"` // tokens generated after the prompt; > 0
	Temperature  float64 `json:"temperature"`    // 0 means greedy (argmax)
	TopKTokens   int     `json:"top_k_tokens"`   // sample among the k most likely tokens; 0 means all
	StopToken    int32   `json:"stop_token"`     // generation of a row stops after this token; -1 means never
	Seed         uint64  `json:"seed"`           // sampling seed
}

// DefaultSampleConfig returns 64 new tokens at temperature 0.8 with top-k 40 and no stop token.
func DefaultSampleConfig() SampleConfig {
	return SampleConfig{MaxNewTokens: 64, Temperature: 0.8, TopKTokens: 40, StopToken: -1, Seed: 1}
}

// Validate checks the sampling settings.
func (c SampleConfig) Validate() error {
	switch {
	case c.MaxNewTokens <= 0:
		return errors.Errorf("max_new_tokens=%d, want > 0", c.MaxNewTokens)
	case c.Temperature < 0 || math.IsNaN(c.Temperature):
		return errors.Errorf("temperature=%g, want ≥ 0", c.Temperature)
	case c.TopKTokens < 0:
		return errors.Errorf("top_k_tokens=%d, want ≥ 0", c.TopKTokens)
	}
	return nil
}

// GenerateStats reports the cost of a Generate call.
type GenerateStats struct {
	PromptTokens    int     `json:"prompt_tokens"`    // prompt tokens fed through the step function (all rows)
	GeneratedTokens int     `json:"generated_tokens"` // new tokens (all rows)
	Seconds         float64 `json:"seconds"`          // wall time, including the one-time graph compilation
	TokensPerS      float64 `json:"tokens_per_s"`     // (prompt + generated tokens) / Seconds
	MsPerStep       float64 `json:"ms_per_step"`      // mean wall time of one step for the whole batch
}

// Decoder runs a StepFn repeatedly with a compiled step executable; build it once per (model, batch, capacity).
type Decoder struct {
	exec        *model.Exec
	stateShapes []shapes.Shape
	batch       int
	capacity    int
}

// NewDecoder compiles step for a batch of `batch` rows, with a state of the given shapes (their leading dimension must
// be batch) and room for `capacity` positions. Variables are read from store (shared, never created).
func NewDecoder(backend compute.Backend, store *model.Store, step StepFn, stateShapes []shapes.Shape, batch, capacity int) (*Decoder, error) {
	if batch <= 0 || capacity <= 0 {
		return nil, errors.Errorf("eval.NewDecoder: batch=%d capacity=%d, want > 0", batch, capacity)
	}
	exec, err := model.NewExec(backend, store, func(scope *model.Scope, in []*Node) []*Node {
		logits, state := step(scope, in[0], in[1], in[2:])
		if len(state) != len(in)-2 {
			panic(errors.Errorf("eval: step returned %d state tensors, want %d", len(state), len(in)-2))
		}
		return append([]*Node{logits}, state...)
	})
	if err != nil {
		return nil, errors.Wrap(err, "eval.NewDecoder")
	}
	return &Decoder{exec: exec, stateShapes: stateShapes, batch: batch, capacity: capacity}, nil
}

// Generate continues each prompt (one per row; len(prompts) must equal the decoder's batch, each non-empty) and
// returns the generated tokens per row (without the prompt). Prompts are fed one token per step through the same
// executable (no separate prefill graph), so its cost is one step per prompt token.
func (d *Decoder) Generate(prompts [][]int32, cfg SampleConfig) ([][]int32, GenerateStats, error) {
	return d.GenerateContext(stdctx.Background(), prompts, cfg)
}

// GenerateContext is Generate that stops before the next step once interrupt is done, returning its error.
func (d *Decoder) GenerateContext(interrupt stdctx.Context, prompts [][]int32, cfg SampleConfig) ([][]int32,
	GenerateStats, error) {
	var stats GenerateStats
	if err := cfg.Validate(); err != nil {
		return nil, stats, errors.Wrap(err, "eval.Generate")
	}
	if len(prompts) != d.batch {
		return nil, stats, errors.Errorf("eval.Generate: %d prompts for a decoder of batch %d", len(prompts), d.batch)
	}
	maxPrompt := 0
	for i, p := range prompts {
		if len(p) == 0 {
			return nil, stats, errors.Errorf("eval.Generate: prompt %d is empty", i)
		}
		maxPrompt = max(maxPrompt, len(p))
	}
	if total := maxPrompt + cfg.MaxNewTokens; total > d.capacity {
		return nil, stats, errors.Errorf("eval.Generate: longest prompt %d + max_new_tokens %d = %d exceeds the decoding capacity %d",
			maxPrompt, cfg.MaxNewTokens, total, d.capacity)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	state := make([]any, len(d.stateShapes))
	for i, s := range d.stateShapes {
		state[i] = tensors.FromShape(s) // zeros
	}
	start := time.Now()
	out := make([][]int32, d.batch)
	done := make([]bool, d.batch)
	cur := make([]int32, d.batch)
	steps := 0
	// Rows with shorter prompts start generating at their own length; until then they keep reading their prompt.
	for pos := 0; pos < maxPrompt+cfg.MaxNewTokens-1; pos++ {
		for r, p := range prompts {
			switch {
			case pos < len(p):
				cur[r] = p[pos]
			case len(out[r]) > 0:
				cur[r] = out[r][len(out[r])-1]
			}
		}
		if err := interrupt.Err(); err != nil {
			return nil, stats, errors.WithMessagef(err, "eval.Generate: at position %d", pos)
		}
		args := append([]any{tensors.FromFlatDataAndDimensions(cur, d.batch, 1), int32(pos)}, state...)
		res, err := d.exec.Exec(args...)
		if err != nil {
			return nil, stats, errors.Wrapf(err, "eval.Generate: step at position %d", pos)
		}
		steps++
		for i := range state {
			state[i] = res[1+i]
		}
		logits, err := host.Rows(res[0])
		if err != nil {
			return nil, stats, err
		}
		finished := func(r int) bool { return done[r] || len(out[r]) >= cfg.MaxNewTokens }
		allFinished := true
		for r, p := range prompts {
			if pos+1 >= len(p) && !finished(r) { // row r has read its whole prompt: sample its next token
				tok := Sample(logits[r], cfg.Temperature, cfg.TopKTokens, rng)
				out[r] = append(out[r], tok)
				stats.GeneratedTokens++
				done[r] = tok == cfg.StopToken
			}
			allFinished = allFinished && finished(r)
		}
		if allFinished {
			break
		}
	}
	for _, p := range prompts {
		stats.PromptTokens += len(p)
	}
	stats.Seconds = time.Since(start).Seconds()
	stats.TokensPerS = float64(stats.PromptTokens+stats.GeneratedTokens) / stats.Seconds
	stats.MsPerStep = 1000 * stats.Seconds / float64(steps)
	return out, stats, nil
}

// Sample draws a token from logits: argmax when temperature is 0, else from softmax(logits/temperature) restricted to
// the topK most likely tokens (topK 0: all). Ties in argmax go to the lowest id.
func Sample(logits []float64, temperature float64, topK int, rng *rand.Rand) int32 {
	if temperature == 0 {
		best := 0
		for i, l := range logits {
			if l > logits[best] {
				best = i
			}
		}
		return int32(best)
	}
	idx := make([]int, len(logits))
	for i := range idx {
		idx[i] = i
	}
	if topK > 0 && topK < len(logits) {
		sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
		idx = idx[:topK]
	}
	maxL := math.Inf(-1)
	for _, i := range idx {
		maxL = math.Max(maxL, logits[i])
	}
	w := make([]float64, len(idx))
	total := 0.0
	for j, i := range idx {
		w[j] = math.Exp((logits[i] - maxL) / temperature)
		total += w[j]
	}
	u := rng.Float64() * total
	for j, i := range idx {
		u -= w[j]
		if u < 0 {
			return int32(i)
		}
	}
	return int32(idx[len(idx)-1])
}
