package decoder

import (
	"fmt"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

// The decoder-level checks of the conformance suite (conformance_test.go): the decoder built on each mixer.

// The decoder on each mixer is causal: changing the tokens at positions > t leaves the logits at t unchanged.
func TestDecoders_Causal(t *testing.T) {
	forEachCase(t, func(t *testing.T, _ mixerSpec, c mixerCase) {
		_, exec, _ := newTinyModel(t, c.cfg, 480)
		V := c.cfg.VocabSize
		tokens := randomTokens(481, testB, confT, V)
		run := func(tokens [][]int32) []float64 { return wbtest.Flat64(exec.MustExec(tensors.FromValue(tokens))[0]) }
		base := run(tokens)
		for tc := 0; tc < confT-1; tc++ {
			changed := make([][]int32, testB)
			for b := range tokens {
				changed[b] = slices.Clone(tokens[b])
				for s := tc + 1; s < confT; s++ {
					changed[b][s] = (changed[b][s] + 1 + int32(s)) % int32(V) // always a different token
				}
			}
			requireCausal(t, "logits", base, run(changed), confT, V, tc)
		}
	})
}

// The decoder on each mixer decodes with Step to Logits' values (checkStepMatchesLogits).
func TestDecoders_StepMatchesLogits(t *testing.T) {
	forEachCase(t, func(t *testing.T, _ mixerSpec, c mixerCase) {
		checkStepMatchesLogits(t, c.cfg, 490, confT)
	})
}

// checkStepMatchesLogits builds cfg's variables, randomizes them, and checks that decoding T tokens one by one with
// Step from NewState gives Logits' values at every position (1e-10), and that the variables hold cfg.NumParams()
// values.
func checkStepMatchesLogits(t *testing.T, cfg Config, seed uint64, T int) {
	t.Helper()
	vars := model.NewStore()
	vars.SetParam(model.ParamInitialSeed, int64(seed))
	backend := wbtest.Backend(t)
	full := model.MustNewExec(backend, vars, func(scope *model.Scope, tokens *Node) *Node {
		return Logits(scope, cfg, tokens)
	})
	tokens := randomTokens(seed, testB, T, cfg.VocabSize)
	full.MustExec(tensors.FromValue(tokens))
	randomizeVariables(t, vars, seed+1)
	want := wbtest.Flat64(full.MustExec(tensors.FromValue(tokens))[0])

	total := 0
	for v := range vars.IterVariables() {
		if v.Trainable {
			total += v.Shape().Size()
		}
	}
	if count := cfg.NumParams(); count != total {
		t.Fatalf("parameter count %d, the variables hold %d values", count, total)
	}

	step := model.MustNewExec(backend, vars, func(scope *model.Scope, in []*Node) []*Node {
		logits, state := Step(scope, cfg, in[0], in[1], in[2:])
		return append([]*Node{logits}, state...)
	})
	state := NewState(cfg, testB, 0) // capacity cfg.MaxLen ≥ T
	V := cfg.VocabSize
	for pos := 0; pos < T; pos++ {
		col := make([][]int32, testB)
		for b := range col {
			col[b] = []int32{tokens[b][pos]}
		}
		args := []any{tensors.FromValue(col), int32(pos)}
		for _, s := range state {
			args = append(args, s)
		}
		outs := step.MustExec(args...)
		state = outs[1:]
		wbtest.RequireClose(t, fmt.Sprintf("step logits at position %d", pos), sliceT(want, []int{testB, T, V}, pos),
			wbtest.Flat64(outs[0]), tolParity)
	}
}
