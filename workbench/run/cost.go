package run

import (
	"fmt"
	"strings"
)

// TrainPerForward is the convention of every Cost: one training step (forward and backward) costs 3× the
// forward pass's matrix-product FLOPs, because the backward pass computes two products per forward product.
// Optimizer updates, elementwise work and data preparation are not counted.
const TrainPerForward = 3

// Cost is the estimated compute of one study at one preset, counted from its configuration as the study's
// protocol loops (experiments/<study>/cost.go), not measured. FLOPs are matrix-product FLOPs (a multiply-add
// is 2), the convention of layers/decoder.FLOPsPerToken and theory/cost.
type Cost struct {
	// Runs is the number of models trained from scratch (each seed, learning rate and sweep point counts once;
	// a model two loops of the study share counts once).
	Runs int `json:"runs"`
	// TrainTokens is the number of tokens of every optimizer step of every run, fine-tuning included: steps·B·T
	// summed over the runs.
	TrainTokens int64 `json:"train_tokens"`
	// Params is the trainable parameter count of the largest model trained.
	Params int `json:"params"`
	// TrainFLOPs is TrainPerForward × the forward FLOPs per token × the tokens, summed over the runs.
	TrainFLOPs float64 `json:"train_flops"`
	// EvalFLOPs is the forward FLOPs of the main evaluation passes (validation during training, test sets,
	// benchmarks); the study's Notes say what is left out.
	EvalFLOPs float64 `json:"eval_flops"`
	// Notes says what was counted and what was assumed or left out.
	Notes string `json:"notes"`
}

// Training returns the cost of one run of tokens training tokens, of a model with params parameters whose forward
// pass costs forwardPerToken FLOPs per token.
func Training(tokens int64, params int, forwardPerToken float64) Cost {
	return Cost{Runs: 1, TrainTokens: tokens, Params: params,
		TrainFLOPs: TrainPerForward * forwardPerToken * float64(tokens)}
}

// Eval returns the cost of a forward pass over tokens tokens at forwardPerToken FLOPs per token.
func Eval(tokens int64, forwardPerToken float64) Cost {
	return Cost{EvalFLOPs: forwardPerToken * float64(tokens)}
}

// Add returns the sum of c and o: runs, tokens and FLOPs add, Params is the larger and the notes are joined.
func (c Cost) Add(o Cost) Cost {
	c.Runs += o.Runs
	c.TrainTokens += o.TrainTokens
	c.Params = max(c.Params, o.Params)
	c.TrainFLOPs += o.TrainFLOPs
	c.EvalFLOPs += o.EvalFLOPs
	c.Notes = joinNotes(c.Notes, o.Notes)
	return c
}

// Times returns c repeated n times (n identical runs); notes are kept once.
func (c Cost) Times(n int) Cost {
	c.Runs *= n
	c.TrainTokens *= int64(n)
	c.TrainFLOPs *= float64(n)
	c.EvalFLOPs *= float64(n)
	return c
}

// Note returns c with a note appended ("; " between notes); an empty note changes nothing.
func (c Cost) Note(format string, args ...any) Cost {
	n := format
	if len(args) > 0 {
		n = fmt.Sprintf(format, args...)
	}
	c.Notes = joinNotes(c.Notes, n)
	return c
}

// joinNotes returns a and b joined by "; ", or the non-empty one.
func joinNotes(a, b string) string {
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + "; " + b
}

// FLOPs returns TrainFLOPs + EvalFLOPs.
func (c Cost) FLOPs() float64 { return c.TrainFLOPs + c.EvalFLOPs }

// Seconds returns the time FLOPs take at a sustained rate of flopsPerSecond.
func (c Cost) Seconds(flopsPerSecond float64) float64 { return c.FLOPs() / flopsPerSecond }

// Schedule is the training loop of one language-model run, as workbench/fit runs it: Steps optimizer steps of
// Batch sequences of SeqLen tokens, with EvalBatches validation batches of EvalBatchSize sequences every
// EvalEvery steps and at the end (0: at the end only).
type Schedule struct {
	Steps, Batch, SeqLen              int
	EvalEvery, EvalBatches, EvalBatch int
}

// Tokens returns the training tokens, Steps·Batch·SeqLen.
func (s Schedule) Tokens() int64 { return int64(s.Steps) * int64(s.Batch) * int64(s.SeqLen) }

// Evaluations returns the number of validation passes: one every EvalEvery steps, and one at the end when the
// last step is not a multiple of EvalEvery.
func (s Schedule) Evaluations() int {
	if s.EvalEvery <= 0 {
		return 1
	}
	n := s.Steps / s.EvalEvery
	if s.Steps%s.EvalEvery != 0 {
		n++
	}
	return n
}

// Cost returns the cost of one run of the schedule: Training of its tokens plus Eval of its validation passes.
func (s Schedule) Cost(params int, forwardPerToken float64) Cost {
	evalTokens := int64(s.Evaluations()) * int64(s.EvalBatches) * int64(s.EvalBatch) * int64(s.SeqLen)
	return Training(s.Tokens(), params, forwardPerToken).Add(Eval(evalTokens, forwardPerToken))
}

// String formats the cost on one line.
func (c Cost) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs, %d training tokens, %d parameters (largest), %.3g training FLOPs, %.3g evaluation "+
		"FLOPs", c.Runs, c.TrainTokens, c.Params, c.TrainFLOPs, c.EvalFLOPs)
	if c.Notes != "" {
		fmt.Fprintf(&b, " (%s)", c.Notes)
	}
	return b.String()
}
