package interp

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/lm"
)

// scorer evaluates the log-probability of every target token of batches [B, T+1] (int32, all of one shape) with
// the model's current variable values. The executable is compiled once: masks and prototypes are variables, so
// interventions change its inputs, not its graph; builds counts the graph constructions, which stays 1 over a whole
// sweep.
type scorer struct {
	exec   *model.Exec
	builds int
}

func newScorer(m *lm.Model, batches []*tensors.Tensor) (*scorer, error) {
	if len(batches) == 0 {
		return nil, errors.New("interp: no batches to score interventions on")
	}
	cfg := m.Config.Model
	s := &scorer{}
	var err error
	s.exec, err = model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch *graph.Node) *graph.Node {
		s.builds++
		return graph.ConvertDType(graph.Neg(decoder.TokenLosses(scope, cfg, batch)), dtypes.Float64)
	})
	return s, errors.Wrap(err, "interp: building the intervention executable")
}

// logProbs returns log p(target) of every input position of the batches, row-major: [N_batches·B·T].
func (s *scorer) logProbs(batches []*tensors.Tensor) ([]float64, error) {
	var out []float64
	for i, b := range batches {
		res, err := s.exec.Exec(b)
		if err != nil {
			return nil, errors.Wrapf(err, "interp: scoring batch %d", i)
		}
		out = append(out, tensors.MustCopyFlatData[float64](res[0])...)
	}
	return out, nil
}

// Occurrence is one occurrence of a target word among the scored positions: the inputs Pos … Pos+Len−1 predict
// its Len tokens, so its teacher-forced probability is the product of their Len probabilities (spec §7.4).
type Occurrence struct {
	Pos int `json:"pos"`
	Len int `json:"len"`
}

// Effect compares a log-probability vector with the baseline: ΔProb per target (mean over its occurrences of
// p′/p − 1, p the product of the word's token probabilities) and ΔPPL (ppl′/ppl − 1 over all positions).
func Effect(base, lp []float64, occurrences [][]Occurrence) (dProb []float64, dPPL float64) {
	dProb = make([]float64, len(occurrences))
	for j, occ := range occurrences {
		for _, o := range occ {
			d := 0.0
			for n := o.Pos; n < o.Pos+o.Len; n++ {
				d += lp[n] - base[n]
			}
			dProb[j] += math.Expm1(d)
		}
		if len(occ) > 0 {
			dProb[j] /= float64(len(occ))
		}
	}
	sb, sl := 0.0, 0.0
	for n := range base {
		sb += base[n]
		sl += lp[n]
	}
	// ppl = exp(−mean log p), so ppl′/ppl = exp((Σ log p − Σ log p′)/N).
	return dProb, math.Expm1((sb - sl) / float64(len(base)))
}

// wordProb returns the mean over occurrences of the word probability exp(Σ log p).
func wordProb(lp []float64, occ []Occurrence) float64 {
	s := 0.0
	for _, o := range occ {
		x := 0.0
		for n := o.Pos; n < o.Pos+o.Len; n++ {
			x += lp[n]
		}
		s += math.Exp(x)
	}
	return s / float64(max(1, len(occ)))
}

// wordOccurrences returns, per label id of es, the positions whose target starts a word carrying the label (and
// ending within the sequence), with the word's length in tokens.
func wordOccurrences(es *evalSet) [][]Occurrence {
	out := make([][]Occurrence, len(es.tokens.Names))
	for n, k := range es.nextWord {
		if k == 0 {
			continue
		}
		for _, l := range es.next[n] {
			out[l] = append(out[l], Occurrence{Pos: n, Len: k})
		}
	}
	return out
}

// applyIntervention applies one intervention kind (InterveneWrite, InterveneRead, InterveneReinit) to the prototypes
// ks of layer l of m, a ProtoT model, and returns the function that undoes it: masks are cleared, re-initialised
// rows restored from a copy of P. Re-initialised rows are drawn with reinitSeed (protot.ReinitPrototype).
func applyIntervention(m *lm.Model, kind string, l int, ks []int, reinitSeed uint64) (restore func() error, err error) {
	pc := m.Config.Model.ProtoT
	block := m.Store.Scope(decoder.BlockScope(l))
	switch kind {
	case InterveneWrite, InterveneRead:
		mask := make([]float64, pc.NumPrototypes)
		for k := range mask {
			mask[k] = 1
		}
		for _, k := range ks {
			mask[k] = 0
		}
		w, r := mask, []float64(nil)
		if kind == InterveneRead {
			w, r = nil, mask
		}
		if err := protot.SetMasks(block, pc, l, w, r); err != nil {
			return nil, err
		}
		return func() error { return protot.ClearMasks(block, pc, l) }, nil
	case InterveneReinit:
		v := block.At(protot.Scope).GetVariable(protot.VarPrototypes)
		if v == nil {
			return nil, errors.Errorf("interp: layer %d has no %s variable", l, protot.VarPrototypes)
		}
		old, err := v.Value()
		if err != nil {
			return nil, errors.Wrapf(err, "interp: reading %s", v.Path())
		}
		saved, err := old.LocalClone()
		if err != nil {
			return nil, errors.Wrapf(err, "interp: copying %s", v.Path())
		}
		for _, k := range ks {
			if err := protot.ReinitPrototype(block, k, reinitSeed); err != nil {
				return nil, err
			}
		}
		return func() error { return errors.Wrapf(v.SetValue(saved), "interp: restoring %s", v.Path()) }, nil
	}
	return nil, errors.Errorf("interp: unknown intervention %q", kind)
}
