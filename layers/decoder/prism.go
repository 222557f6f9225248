package decoder

import (
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/prism"
)

// This file puts the PRISM prototype head (layers/prism, docs/spec/prism.md) on the decoder: the backbone's
// final-normalised hidden states z and its LM head W feed prism.Head, whose bank lives at "/prism/prototypes"
// [K, D] beside the decoder's scopes. workbench/fit trains it through a LossFn such as
//
//	func(scope *model.Scope, in []*Node) *Node { total, _ := decoder.PrismLoss(scope, cfg, pc, in[0]); return total }

// PrismHead runs the decoder backbone and the PRISM head: tokens [B, T] (integers in [0, V)) → the head's
// prism.Decomposition (logits [B, T, V], codes, indices, slices…). W is the token embedding when cfg ties
// embeddings, else "/lm_head/weights" (the dense model's head variable, so a dense checkpoint loads). Creates
// every variable on first use. Panics if cfg or pc is invalid or on bad shapes.
func PrismHead(scope *model.Scope, cfg Config, pc prism.Config, tokens *Node) prism.Decomposition {
	m := newStack(cfg, "PrismHead")
	if err := pc.Validate(); err != nil {
		panic(errors.WithMessage(err, "decoder.PrismHead"))
	}
	h := m.branches(tokens, func(rows *Node) *Node { return m.hidden(scope, rows) })
	return prism.Head(scope, pc, h, m.prismUnembed(scope, h.Graph()))
}

// prismUnembed returns the LM head W [V, D] as model.head uses it: the embedding when tied, else "lm_head".
func (m *stack) prismUnembed(scope *model.Scope, g *Graph) *Node {
	return m.unembedding(scope, g)
}

// PrismLogits returns the PRISM model's next-token logits: tokens [B, T] → [B, T, V]. With the default residual
// variant they equal Logits' for the same weights (l = W z). Panics like PrismHead.
func PrismLogits(scope *model.Scope, cfg Config, pc prism.Config, tokens *Node) *Node {
	logits := PrismHead(scope, cfg, pc, tokens).Logits
	logits.AssertDims(tokens.Shape().Dim(0), tokens.Shape().Dim(1), cfg.VocabSize)
	return logits
}

// PrismLoss returns the PRISM training loss of predicting batch[:, t+1] from batch[:, :t+1]: batch [B, T+1] →
// total, the scalar L = L_CE + λ_rec·L_REC + λ_1·L_R1 + λ_2·L_R2 with pc's weights, and every term (prism.Losses;
// all B·T tokens count, no pads). terms.CE is the mean cross-entropy, NextTokenLoss's counterpart. Panics if cfg
// or pc is invalid, or batch has fewer than 2 columns.
func PrismLoss(scope *model.Scope, cfg Config, pc prism.Config, batch *Node) (total *Node, terms prism.LossTerms) {
	if batch.Rank() != 2 || batch.Shape().Dim(1) < 2 {
		panic(errors.Errorf("decoder.PrismLoss: batch.shape=%s, want [B, T+1] with T ≥ 1", batch.Shape()))
	}
	T1 := batch.Shape().Dim(1)
	inputs := Slice(batch, AxisRange(), AxisRange(0, T1-1))
	targets := Slice(batch, AxisRange(), AxisRange(1, T1))
	terms = prism.Losses(PrismHead(scope, cfg, pc, inputs), targets, nil)
	return terms.Total, terms
}

// PrismNumParams returns the trainable parameters of the PRISM model: NumParams plus the bank's K·D. Panics if
// cfg is invalid.
func PrismNumParams(cfg Config, pc prism.Config) int {
	return cfg.NumParams() + pc.NumParams(cfg.Width)
}

// PrismFLOPsPerToken returns FLOPsPerToken with the dense head's 2·D·V replaced by the PRISM head's count
// (prism.Config.FLOPsPerToken: 2·D·K + 4·k·D + 2·D·V). Panics if cfg is invalid.
func PrismFLOPsPerToken(cfg Config, pc prism.Config, T int) float64 {
	D, V := cfg.Width, cfg.VocabSize
	return FLOPsPerToken(cfg, T) - 2*float64(D)*float64(V) + pc.FLOPsPerToken(D, V)
}
