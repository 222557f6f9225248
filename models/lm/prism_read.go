package lm

import (
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
)

// This file holds read-outs of a trained PRISM model that several studies share (docs/spec/prism.md): the logit
// signatures W p_i of chosen prototypes (§2.1), the head's coverage and usage statistics on a set of batches (§4),
// and the conversion of host float64 values to tensors of the model's dtype.

// Signatures returns the logit signatures W p_i [V] of the given bank indices (spec §2.1, "Precomputable
// signatures"), from the bank P [K, D] and the LM head W [V, D], as float64 computed with plain loops: bankIDs [n]
// → [n][V]. Errors for the dense model or an index outside [0, K).
func (m *Model) Signatures(bankIDs []int) ([][]float64, error) {
	bank, err := m.Bank()
	if err != nil {
		return nil, err
	}
	w, err := m.Unembed()
	if err != nil {
		return nil, err
	}
	D, V, K := m.Config.Model.Width, m.Config.Model.VocabSize, m.Config.Prism.NumPrototypes
	out := make([][]float64, len(bankIDs))
	for c, i := range bankIDs {
		if i < 0 || i >= K {
			return nil, errors.Errorf("lm.Model.Signatures: prototype %d outside [0, %d)", i, K)
		}
		p := bank[i*D : (i+1)*D]
		s := make([]float64, V)
		for v := range V {
			dot := 0.0
			for d, x := range w[v*D : (v+1)*D] {
				dot += x * p[d]
			}
			s[v] = dot
		}
		out[c] = s
	}
	return out, nil
}

// Coverage runs the PRISM head on batches ([B, T+1] token tensors; the first T columns are the inputs) and
// accumulates, over all their tokens, the coverage metrics of spec §4 (R̄1, R2, their fractions above the config's
// coverage_threshold, E[‖r‖²/‖z‖²]) and the usage statistics (counts, co-usage, entropy, dead fraction). Errors for
// the dense model.
func (m *Model) Coverage(batches []*tensors.Tensor) (*prism.Coverage, *prism.Usage, error) {
	if m.Dense() {
		return nil, nil, errors.New("lm.Model.Coverage: the dense model has no prototype head")
	}
	cfg, pc := m.Config.Model, m.Config.Prism.Config
	exec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch *Node) []*Node {
		T1 := batch.Shape().Dim(1)
		d := decoder.PrismHead(scope, cfg, pc, Slice(batch, AxisRange(), AxisRange(0, T1-1)))
		protoMax, tokenMax := prism.CoverageStats(d.Scores, nil)
		f64 := func(x *Node) *Node { return ConvertDType(x, dtypes.Float64) }
		return []*Node{f64(protoMax), f64(tokenMax), f64(d.RecRatio()), d.Indices, f64(d.Activations)}
	})
	if err != nil {
		return nil, nil, errors.Wrap(err, "lm.Model.Coverage: building the graph")
	}
	cov := prism.NewCoverage(pc.NumPrototypes, pc.CoverageThreshold)
	usage := prism.NewUsage(pc.NumPrototypes)
	for i, b := range batches {
		outs, err := exec.Exec(b)
		if err != nil {
			return nil, nil, errors.Wrapf(err, "lm.Model.Coverage: batch %d", i)
		}
		if err := cov.Add(outs[0], outs[1], outs[2], nil); err != nil {
			return nil, nil, err
		}
		if err := usage.Add(outs[3], outs[4], nil); err != nil {
			return nil, nil, err
		}
	}
	return cov, usage, nil
}
