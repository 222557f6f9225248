package pair

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/host"
	"github.com/protolab/protolab/workbench/naming"
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
		return nil, errors.New("pair: no batches to score interventions on")
	}
	cfg := m.Config.Model
	s := &scorer{}
	var err error
	s.exec, err = model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch *graph.Node) *graph.Node {
		s.builds++
		return graph.ConvertDType(graph.Neg(decoder.TokenLosses(scope, cfg, batch)), dtypes.Float64)
	})
	return s, errors.Wrap(err, "pair: building the intervention executable")
}

// logProbs returns log p(target) of every input position of the batches, row-major: [N_batches·B·T].
func (s *scorer) logProbs(batches []*tensors.Tensor) ([]float64, error) {
	var out []float64
	for i, b := range batches {
		res, err := s.exec.Exec(b)
		if err != nil {
			return nil, errors.Wrapf(err, "pair: scoring batch %d", i)
		}
		lp, err := host.Floats(res[0])
		if err != nil {
			return nil, err
		}
		out = append(out, lp...)
	}
	return out, nil
}

// batches returns sequences [0, n) of es as [B, T+1] int32 tensors of B rows each (the last rows may be dropped so
// that every tensor has the same shape).
func batches(es *naming.Text, n, B int) []*tensors.Tensor {
	n = min(n, len(es.Seqs))
	B = min(B, n)
	var out []*tensors.Tensor
	for from := 0; from+B <= n; from += B {
		out = append(out, tensors.FromValue(es.Seqs[from:from+B]))
	}
	return out
}

// Effect compares a log-probability vector with the baseline (docs/spec/protot.md §7.4): ΔProb per target (mean
// over its occurrences of p′/p − 1, p the product of the word's token probabilities) and ΔPPL (ppl′/ppl − 1 over
// all positions).
func Effect(base, lp []float64, occurrences [][]naming.Occurrence) (dProb []float64, dPPL float64) {
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
func wordProb(lp []float64, occ []naming.Occurrence) float64 {
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
