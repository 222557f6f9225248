package lm

import (
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/wbtest"
)

// TestSuppressedStep_MatchesFullForward decodes a random float64 model token by token with SuppressedStep and
// compares every step's logits with prism.SuppressedLogits of the full forward pass, in both modes; with Ω = ∅ the
// step gives the model's own logits (decoder.PrismLogits).
func TestSuppressedStep_MatchesFullForward(t *testing.T) {
	backend := wbtest.Backend(t)
	cfg := decoder.DefaultConfig()
	cfg.VocabSize, cfg.Width, cfg.NumLayers, cfg.MaxLen, cfg.DType = 11, 8, 2, 16, "float64"
	cfg.Attention.NumHeads = 2
	pc := prism.DefaultConfig()
	pc.NumPrototypes, pc.TopK = 5, 2
	pc.InitStd = 1
	vars := model.NewStore()
	vars.SetRNGStateFromSeed(3)
	const B, T = 2, 6
	tokens := tensors.FromFlatDataAndDimensions([]int32{1, 4, 2, 9, 0, 7, 3, 3, 10, 5, 8, 6}, B, T)
	for _, tc := range []struct {
		mode  string
		omega []float64
	}{{prism.SuppressZero, []float64{0, 1, 0, 0, 1}}, {prism.SuppressMask, []float64{0, 1, 0, 0, 1}},
		{prism.SuppressZero, []float64{0, 0, 0, 0, 0}}} {
		mode, omega := tc.mode, tc.omega
		full := model.MustNewExec(backend, vars, func(scope *model.Scope, tok, om *Node) *Node {
			return prism.SuppressedLogits(decoder.PrismHead(scope, cfg, pc, tok), om, mode)
		})
		want := tensors.MustCopyFlatData[float64](full.MustExec(tokens, wbtest.Tensor64(omega, 5))[0])
		if tc.omega[1] == 0 {
			plain := model.MustNewExec(backend, vars, func(scope *model.Scope, tok *Node) *Node {
				return decoder.PrismLogits(scope, cfg, pc, tok)
			})
			wbtest.RequireClose(t, "Ω = ∅", tensors.MustCopyFlatData[float64](plain.MustExec(tokens)[0]), want, 1e-12)
		}
		stepFn := SuppressedStep(cfg, pc, omega, mode)
		step := model.MustNewExec(backend, vars, func(scope *model.Scope, in []*Node) []*Node {
			logits, state := stepFn(scope, in[0], in[1], in[2:])
			return append([]*Node{logits}, state...)
		})
		state := decoder.NewState(cfg, B, T)
		flat := tensors.MustCopyFlatData[int32](tokens)
		V := cfg.VocabSize
		for pos := range T {
			args := []any{tensors.FromFlatDataAndDimensions([]int32{flat[pos], flat[T+pos]}, B, 1), int32(pos)}
			for _, s := range state {
				args = append(args, s)
			}
			out := step.MustExec(args...)
			got := tensors.MustCopyFlatData[float64](out[0])
			for b := range B {
				w := want[(b*T+pos)*V : (b*T+pos+1)*V]
				wbtest.RequireClose(t, mode, w, got[b*V:(b+1)*V], 1e-10)
			}
			state = out[1:]
		}
	}
}
