package fvec

import (
	"slices"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions), counting the models sweeps trains: per
// row (the tree kinds and patch kinds, the key-gain ablation, the Gaussian kinds) and seed, one model per M, each
// trained for its steps (sweep.depth_steps, sweep.gaussian_steps, else train.steps) on data.batch contexts of
// data.tokens tokens, validated every round(sweep.plateau_tail·steps) steps on data.val_contexts contexts and
// scored on the test and held-out sets (data.test_contexts each). A token is one (context, position) pair. The
// forward FLOPs are stepFLOPs's count of the model's products; the theory curves, patching and function vectors
// are not counted.
func (c Config) Cost() run.Cost {
	var total run.Cost
	row := func(kind string, gaussian bool, keyGain float64, ms []int) {
		d := c.Data.Tree.Dim()
		if gaussian {
			d = c.Data.GaussianDim
		}
		for _, m := range ms {
			mc := c.Model
			mc.Kind, mc.Measurements, mc.KeyGain = kind, m, keyGain
			if gaussian && c.Sweep.GaussianHidden > 0 {
				mc.Hidden = c.Sweep.GaussianHidden
			}
			P := mc.NumParams(d)
			N, B := c.Data.Tokens, c.Data.Batch
			fwd := stepFLOPs(mc, d, N, B, c.Data.SharedTokens) / float64(B*N) // per training token
			evalFwd := stepFLOPs(mc, d, N, 1, false) / float64(N)             // contexts of their own
			steps := c.steps(gaussian, m)
			s := run.Schedule{Steps: steps, Batch: B, SeqLen: N, EvalEvery: c.evalEvery(steps)}
			one := run.Training(s.Tokens(), P, fwd)
			evals := int64(s.Evaluations()*c.Data.ValContexts + 2*c.Data.TestContexts)
			one = one.Add(run.Eval(evals*int64(N), evalFwd))
			total = total.Add(one.Times(c.Sweep.Seeds))
		}
	}
	kinds := append([]string{}, c.Sweep.TreeKinds...)
	for _, k := range c.Sweep.PatchKinds {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	for _, k := range kinds {
		row(k, false, 0, c.Sweep.TreeM)
	}
	if g := c.Sweep.KeyGainAblation; g > 0 {
		row(linattn.KindA, false, g, c.Sweep.TreeM)
	}
	for _, k := range c.Sweep.GaussianKinds {
		row(k, true, 0, c.Sweep.GaussianM)
	}
	return total.Note("products of layers/linattn's equations, shared tokens computed once per batch (stepFLOPs); " +
		"theory, patching and vectors not counted")
}

// stepFLOPs returns the forward matrix-product FLOPs of model mc (input dimension d) on B contexts of N tokens,
// from the equations of layers/linattn (doc.go; a multiply-add is 2), with the x-only products computed once for
// the batch when shared (data.shared_tokens):
//
//	A:  Σ_ℓ [X·2N·D·H + B·(2(ℓ−1)·H + 2N·H + 2N)] + readout
//	B:  X·M·(2N·D·H + 2N·H) + B·2N·M + readout
//	C:  X·2N·D·M + B·(2N·M + 2D·M)
//	A′: B·(2N·D + Σ_{ℓ≥2} (2(ℓ−1)·H + 2H·D) + M·2D) + readout
//
// with X = 1 when shared, else B, and readout = B·(2M·H_o + 2H_o·D).
func stepFLOPs(mc linattn.Config, d, N, B int, shared bool) float64 {
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
