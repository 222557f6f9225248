package lm

import (
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/host"
	"github.com/protolab/protolab/workbench/run"
)

// This file holds what the PRISM head adds to the LM (docs/spec/prism.md): its training loss with the warm-up
// switch, the seeding of its bank, and float64 read-outs of its per-token outputs and weights for analysis.

// prismLoss is L_CE + on·(λ_rec·L_REC + λ_1·L_R1 + λ_2·L_R2) with on = [optimizer step ≥ ProtoWarmup] (doc.go),
// read from fit's step counter so that one compiled step graph serves the warm-up and the rest of training.
func prismLoss(cfg Config) fit.LossFn {
	pc, warmup, mc := cfg.Prism.Config, cfg.Prism.ProtoWarmup, cfg.Model
	return func(scope *model.Scope, in []*Node) *Node {
		_, terms := decoder.PrismLoss(scope, mc, pc, in[0])
		var rest *Node
		for _, wt := range []struct {
			lambda float64
			term   *Node
		}{{pc.RecWeight, terms.Rec}, {pc.R1Weight, terms.R1}, {pc.R2Weight, terms.R2}} {
			if wt.lambda == 0 {
				continue
			}
			if x := MulScalar(wt.term, wt.lambda); rest == nil {
				rest = x
			} else {
				rest = Add(rest, x)
			}
		}
		if rest == nil {
			return terms.CE
		}
		if warmup > 0 {
			g := terms.CE.Graph()
			step := scope.Store().Scope(fit.OptimizerScope).
				VariableWithValue(fit.StepVariable, int64(0)).SetTrainable(false).NodeValue(g)
			on := ConvertDType(GreaterOrEqual(step, Const(g, int64(warmup))), terms.CE.DType())
			rest = Mul(on, rest)
		}
		return Add(terms.CE, rest)
	}
}

// seedBank overwrites the bank with K distinct hidden states drawn uniformly from the tokens of batches (the first
// SeedBatches training batches, docs/spec/prism.md §2.3), then, with RescaleSeed, multiplies it by
// s = Σ⟨z_t, ẑ_t⟩/Σ‖ẑ_t‖² over those tokens (doc.go, "Bank seeding").
func (m *Model) seedBank(batches []*tensors.Tensor) error {
	p := m.Config.Prism
	D, K := m.Config.Model.Width, p.NumPrototypes
	st, err := m.HeadStats(batches)
	if err != nil {
		return err
	}
	if st.N < K {
		return errors.Errorf("prism: %d tokens cannot seed %d prototypes", st.N, K)
	}
	perm := run.RNG(m.Config.Seed, "prism/seed-bank").Perm(st.N)[:K]
	bank := make([]float64, K*D)
	for j, t := range perm {
		copy(bank[j*D:(j+1)*D], st.Z[t*D:(t+1)*D])
	}
	v := prism.BankVariable(m.Store.RootScope())
	if v == nil {
		return errors.New("prism: the bank variable does not exist yet")
	}
	if err := v.SetValue(host.Tensor(bank, v.DType(), K, D)); err != nil {
		return errors.Wrap(err, "prism: setting the seeded bank")
	}
	if !p.RescaleSeed {
		return nil
	}
	// The routing of the seeded bank, then the least-squares scale of its reconstructions.
	if st, err = m.HeadStats(batches); err != nil {
		return err
	}
	k := st.TopK
	num, den := 0.0, 0.0
	zhat := make([]float64, D)
	for t := 0; t < st.N; t++ {
		clear(zhat)
		for x := 0; x < k; x++ {
			a, j := st.Acts[t*k+x], int(st.Indices[t*k+x])
			for d := 0; d < D; d++ {
				zhat[d] += a * bank[j*D+d]
			}
		}
		for d := 0; d < D; d++ {
			num += st.Z[t*D+d] * zhat[d]
			den += zhat[d] * zhat[d]
		}
	}
	if !(den > 0) || !(num > 0) {
		return errors.Errorf("prism: cannot rescale the seeded bank (Σ⟨z, ẑ⟩ = %g, Σ‖ẑ‖² = %g)", num, den)
	}
	for i := range bank {
		bank[i] *= num / den
	}
	return errors.Wrap(v.SetValue(host.Tensor(bank, v.DType(), K, D)), "prism: setting the rescaled bank")
}

// TrainTensors returns the first n training batches [B, T+1] in the order training sees them.
func (m *Model) TrainTensors(n int) ([]*tensors.Tensor, error) {
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	b, err := d.TrainBatches()
	if err != nil {
		return nil, err
	}
	return firstBatches(b, n)
}

// firstBatches returns the first n batches of b.
func firstBatches(b fit.Batches, n int) ([]*tensors.Tensor, error) {
	out := make([]*tensors.Tensor, n)
	for i := range out {
		ts, err := b.Next()
		if err != nil {
			return nil, errors.Wrapf(err, "prism: training batch %d", i)
		}
		out[i] = ts[0]
	}
	return out, nil
}

// HeadStats holds the PRISM head's per-token outputs over a set of [B, T+1] batches, flattened in batch, row,
// position order, as float64 (N tokens, D width, K bank, k = TopK). Token n predicts Targets[n] from the inputs up
// to its position; Seq[n] = batch·B + row numbers the sequences in the order given.
type HeadStats struct {
	N, D, K, TopK int
	Z             []float64 // [N, D] final-normalised hidden states z_t
	Indices       []int32   // [N, k] selected prototypes K_t, by decreasing cosine
	Acts          []float64 // [N, k] activations a_{t,i} (0 where the cosine is not positive)
	Targets       []int32   // [N] gold next tokens y_t
	Seq           []int32   // [N] sequence number of each token
	Pos           []int32   // [N] position of each token in its sequence
}

// HeadStats runs the PRISM head on batches ([B, T+1] int32, one shape) and returns its per-token outputs. For the
// dense model only Z, Targets, Seq and Pos are filled.
func (m *Model) HeadStats(batches []*tensors.Tensor) (*HeadStats, error) {
	if len(batches) == 0 {
		return nil, errors.New("lm.Model.HeadStats: no batches")
	}
	cfg, dense := m.Config.Model, m.Dense()
	var pc prism.Config
	if !dense {
		pc = m.Config.Prism.Config
	}
	exec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch *Node) []*Node {
		T1 := batch.Shape().Dim(1)
		in := Slice(batch, AxisRange(), AxisRange(0, T1-1))
		if dense {
			return []*Node{ConvertDType(decoder.Hidden(scope, cfg, in), dtypes.Float64)}
		}
		d := decoder.PrismHead(scope, cfg, pc, in)
		return []*Node{ConvertDType(d.Hidden, dtypes.Float64), ConvertDType(d.Indices, dtypes.Int32),
			ConvertDType(d.Activations, dtypes.Float64)}
	})
	if err != nil {
		return nil, errors.Wrap(err, "lm.Model.HeadStats")
	}
	st := &HeadStats{D: cfg.Width}
	if !dense {
		st.K, st.TopK = pc.NumPrototypes, pc.TopK
	}
	seq := 0
	for i, b := range batches {
		B, T := b.Shape().Dim(0), b.Shape().Dim(1)-1
		outs, err := exec.Exec(b)
		if err != nil {
			return nil, errors.Wrapf(err, "lm.Model.HeadStats: batch %d", i)
		}
		st.Z = append(st.Z, tensors.MustCopyFlatData[float64](outs[0])...)
		if !dense {
			st.Indices = append(st.Indices, tensors.MustCopyFlatData[int32](outs[1])...)
			st.Acts = append(st.Acts, tensors.MustCopyFlatData[float64](outs[2])...)
		}
		toks := tensors.MustCopyFlatData[int32](b)
		for r := 0; r < B; r++ {
			for t := 0; t < T; t++ {
				st.Targets = append(st.Targets, toks[r*(T+1)+t+1])
				st.Seq = append(st.Seq, int32(seq))
				st.Pos = append(st.Pos, int32(t))
			}
			seq++
		}
	}
	st.N = len(st.Targets)
	return st, nil
}

// Bank returns the prototype bank P [K, D] (row j = p_j) as float64, row-major. Errors for the dense model.
func (m *Model) Bank() ([]float64, error) {
	if m.Dense() {
		return nil, errors.New("lm.Model.Bank: the dense model has no prototype bank")
	}
	v := prism.BankVariable(m.Store.RootScope())
	if v == nil {
		return nil, errors.New("lm.Model.Bank: no bank variable in the model")
	}
	return variableFloats(v)
}

// Unembed returns the LM head W [V, D] (the token embedding when tied) as float64, row-major.
func (m *Model) Unembed() ([]float64, error) {
	name := decoder.VarLMHead
	scope := m.Store.RootScope().At(decoder.ScopeLMHead)
	if m.Config.Model.TieEmbeddings {
		scope, name = m.Store.RootScope().At(decoder.ScopeEmbed), decoder.VarEmbeddings
	}
	v := scope.GetVariable(name)
	if v == nil {
		return nil, errors.Errorf("lm.Model.Unembed: no variable %s/%s", scope.Scope(), name)
	}
	return variableFloats(v)
}

func variableFloats(v *model.Variable) ([]float64, error) {
	t, err := v.Value()
	if err != nil {
		return nil, errors.Wrapf(err, "reading %s", v.Path())
	}
	out, err := host.Floats(t)
	return out, errors.WithMessage(err, v.Path())
}
