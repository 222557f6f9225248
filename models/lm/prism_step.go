package lm

import (
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/hook"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/eval"
)

// SuppressedStep returns a decoding step (eval.StepFn: one token [B, 1] at position pos and the decoder state →
// logits [B, V] and the new state) of the PRISM model (backbone cfg, head pc) with the prototypes marked in omega
// ([K], 1 = suppressed) suppressed in mode prism.SuppressZero or prism.SuppressMask (docs/spec/prism.md §10;
// layers/prism doc.go equations 14–15). The backbone's decoder.Step runs with a hook that captures its
// final-normalised hidden state z; the PRISM head (prism.Decompose on the bank and the LM head of scope) and
// prism.SuppressedLogits turn it into logits. After steps 0…t they equal prism.SuppressedLogits of the full forward
// pass at position t; with omega all 0 they are the model's own logits. The step panics when the decoder emits no
// decoder.ProbeFinalNorm probe or scope holds no LM head.
func SuppressedStep(cfg decoder.Config, pc prism.Config, omega []float64, mode string) eval.StepFn {
	omega = append([]float64(nil), omega...)
	return func(scope *model.Scope, token, pos *Node, state []*Node) (*Node, []*Node) {
		g := token.Graph()
		var z *Node
		detach := hook.Attach(g, func(name string, x *Node) *Node {
			if name == decoder.ProbeFinalNorm {
				z = x
			}
			return x
		})
		_, newState := decoder.Step(scope, cfg, token, pos, state)
		detach()
		if z == nil {
			panic(errors.Errorf("lm.SuppressedStep: the decoder emitted no %q probe", decoder.ProbeFinalNorm))
		}
		d := prism.Decompose(z, prism.BankNode(scope, pc, g, z.DType(), cfg.Width), unembedNode(scope, cfg, g), pc)
		w := ConvertDType(Const(g, omega), z.DType())
		logits := prism.SuppressedLogits(d, w, mode) // [B, 1, V]
		return Reshape(logits, token.Shape().Dim(0), cfg.VocabSize), newState
	}
}

// unembedNode returns the LM head W [V, D] of the model in scope (the token embedding when tied) as a node of g.
// Panics when the variable does not exist.
func unembedNode(scope *model.Scope, cfg decoder.Config, g *Graph) *Node {
	sub, name := scope.At(decoder.ScopeLMHead), decoder.VarLMHead
	if cfg.TieEmbeddings {
		sub, name = scope.At(decoder.ScopeEmbed), decoder.VarEmbeddings
	}
	v := sub.GetVariable(name)
	if v == nil {
		panic(errors.Errorf("lm: no variable %s/%s", sub.Scope(), name))
	}
	return v.NodeValue(g)
}
