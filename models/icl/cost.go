package icl

import (
	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of training segment sg on d's contexts of dimension dim (run.Cost's conventions): its
// training tokens, validated on valContexts contexts at each of its evaluations (every Train.EvalEvery steps and at
// the end) and scored on scoredContexts more contexts once trained. A token is one (context, position) pair; the
// forward FLOPs are StepFLOPs's count of the model's products.
func (sg Segment) Cost(dim int, d Data, valContexts, scoredContexts int) run.Cost {
	mc := sg.Model
	P := mc.NumParams(dim)
	N, B := d.Tokens, d.Batch
	fwd := StepFLOPs(mc, dim, N, B, d.SharedTokens) / float64(B*N) // per training token
	evalFwd := StepFLOPs(mc, dim, N, 1, false) / float64(N)        // contexts of their own
	s := run.Schedule{Steps: sg.Train.Steps, Batch: B, SeqLen: N, EvalEvery: sg.Train.EvalEvery}
	one := run.Training(s.Tokens(), P, fwd)
	evals := int64(s.Evaluations()*valContexts + scoredContexts)
	return one.Add(run.Eval(evals*int64(N), evalFwd))
}

// StepFLOPs returns the forward matrix-product FLOPs of model mc (input dimension d) on B contexts of N tokens,
// from the equations of layers/linattn (doc.go; a multiply-add is 2), with the x-only products computed once for
// the batch when shared (Data.SharedTokens):
//
//	A:  Σ_ℓ [X·2N·D·H + B·(2(ℓ−1)·H + 2N·H + 2N)] + readout
//	B:  X·M·(2N·D·H + 2N·H) + B·2N·M + readout
//	C:  X·2N·D·M + B·(2N·M + 2D·M)
//	A′: B·(2N·D + Σ_{ℓ≥2} (2(ℓ−1)·H + 2H·D) + M·2D) + readout
//
// with X = 1 when shared, else B, and readout = B·(2M·H_o + 2H_o·D).
func StepFLOPs(mc linattn.Config, d, N, B int, shared bool) float64 {
	X := float64(B)
	if shared {
		X = 1
	}
	b, n, D, M, H, Ho := float64(B), float64(N), float64(d), float64(mc.Measurements), float64(mc.Hidden),
		float64(mc.OutHidden())
	readout := b * (2*M*Ho + 2*Ho*D)
	switch mc.Kind {
	case linattn.KindA:
		f := readout
		for l := 1; l <= mc.Measurements; l++ {
			f += X*2*n*D*H + b*(2*float64(l-1)*H+2*n*H+2*n)
		}
		return f
	case linattn.KindB:
		return X*M*(2*n*D*H+2*n*H) + b*2*n*M + readout
	case linattn.KindC:
		return X*2*n*D*M + b*(2*n*M+2*D*M)
	}
	f := readout + b*(2*n*D+M*2*D) // A′
	for l := 2; l <= mc.Measurements; l++ {
		f += b * (2*float64(l-1)*H + 2*H*D)
	}
	return f
}
