package steer

import (
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/lm"
	control "github.com/protolab/protolab/theory/steer"
)

// headRows runs the model on token rows (each of 1…T tokens, right-padded to T) in batches of B rows and calls fn
// once per row with its outputs at every position: the final hidden states [T·D] and, for a PRISM model, the logits
// [T·V], indices [T·k] and activations [T·k] (row-major by position; nil for the dense model, whose logits are
// W z, see denseLogits). Positions past the row's length see padding only after them, so causality keeps the
// row's own positions exact.
func headRows(m *lm.Model, rows [][]int32, T, B int, fn func(i int, hidden, logits []float64, idx []int32,
	act []float64)) error {
	cfg, dense := m.Config.Model, m.Dense()
	pc := m.Config.Prism.Config
	exec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, tokens *Node) []*Node {
		if dense {
			return []*Node{ConvertDType(decoder.Hidden(scope, cfg, tokens), dtypes.Float64)}
		}
		d := decoder.PrismHead(scope, cfg, pc, tokens)
		return []*Node{ConvertDType(d.Hidden, dtypes.Float64), ConvertDType(d.Logits, dtypes.Float64),
			ConvertDType(d.Indices, dtypes.Int32), ConvertDType(d.Activations, dtypes.Float64)}
	})
	if err != nil {
		return errors.Wrap(err, "steer: building the head graph")
	}
	D, V, k := cfg.Width, cfg.VocabSize, pc.TopK
	flat := make([]int32, B*T)
	for start := 0; start < len(rows); start += B {
		clear(flat)
		for b := range B {
			r := rows[min(start+b, len(rows)-1)] // pad the last batch with copies
			if len(r) == 0 || len(r) > T {
				return errors.Errorf("steer: token row %d has %d tokens, want 1…%d", start+b, len(r), T)
			}
			copy(flat[b*T:], r)
		}
		out, err := exec.Exec(tensors.FromFlatDataAndDimensions(flat, B, T))
		if err != nil {
			return errors.Wrapf(err, "steer: head outputs of rows %d…", start)
		}
		hidden := tensors.MustCopyFlatData[float64](out[0])
		var logits, act []float64
		var idx []int32
		if !dense {
			logits = tensors.MustCopyFlatData[float64](out[1])
			idx = tensors.MustCopyFlatData[int32](out[2])
			act = tensors.MustCopyFlatData[float64](out[3])
		}
		for b := 0; b < B && start+b < len(rows); b++ {
			h := hidden[b*T*D : (b+1)*T*D]
			if dense {
				fn(start+b, h, nil, nil, nil)
				continue
			}
			fn(start+b, h, logits[b*T*V:(b+1)*T*V], idx[b*T*k:(b+1)*T*k], act[b*T*k:(b+1)*T*k])
		}
	}
	return nil
}

// ContextTokens returns the context length that lets every option sequence of the task fit the length m was trained
// on: data.seq_len minus the task's longest option in tokens, at least 1.
func ContextTokens(m *lm.Model, task Task) (int, error) {
	d, err := m.Data()
	if err != nil {
		return 0, err
	}
	longest := 0
	for _, it := range task.Items {
		for _, opt := range it.Options {
			longest = max(longest, len(d.Tokenizer.Encode(opt)))
		}
	}
	return max(1, m.Config.Data.SeqLen-longest), nil
}

// Rows is a task's items run through one frozen model: per row (a position that predicts an option token) the
// logits, the final hidden state and, for a PRISM model, its active prototypes (bank indices) and activations;
// Items refer to the rows.
type Rows struct {
	Items  []control.Item
	Logits [][]float64 // [rows][V] l_t
	Hidden [][]float64 // [rows][D] z_t
	Bank   [][]int     // [rows][≤ k] active prototypes (a > 0); nil for the dense model
	Acts   [][]float64 // [rows][≤ k] their activations a_{t,i}
}

// Collect tokenizes the task's items ([EOS] + context, cut on the left to contextTokens tokens, then each option),
// runs the frozen model m once per option sequence (batch sequences per forward pass) and keeps its outputs at the
// positions that predict option tokens (the last context position once per item, shared by its options). The dense
// model's logits are W z, computed from its head in float64.
func Collect(m *lm.Model, task Task, contextTokens, batch int) (*Rows, error) {
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	tok := d.Tokenizer
	type want struct{ pos, row int }
	var seqs [][]int32
	var plans [][]want
	out := &Rows{}
	rows := 0
	T := 0
	for _, it := range task.Items {
		prefix := append([]int32{d.EOS}, tok.Encode(it.Context)...)
		if len(prefix) > contextTokens {
			prefix = prefix[len(prefix)-contextTokens:]
		}
		ci := control.Item{Correct: it.Correct}
		shared := rows
		rows++
		for o, opt := range it.Options {
			ids := tok.Encode(opt)
			if len(ids) == 0 {
				return nil, errors.Errorf("steer.Collect: task %q option %q encodes to no tokens", task.Name, opt)
			}
			seq := append(append([]int32(nil), prefix...), ids...)
			var plan []want
			var toks []control.Token
			for j, y := range ids {
				row := shared
				if j > 0 {
					row = rows
					rows++
				}
				if j > 0 || o == 0 {
					plan = append(plan, want{len(prefix) - 1 + j, row})
				}
				toks = append(toks, control.Token{Row: row, Target: y})
			}
			ci.Options = append(ci.Options, toks)
			seqs = append(seqs, seq)
			plans = append(plans, plan)
			T = max(T, len(seq))
		}
		out.Items = append(out.Items, ci)
	}
	D, V, k := m.Config.Model.Width, m.Config.Model.VocabSize, m.Config.Prism.TopK
	out.Logits, out.Hidden = make([][]float64, rows), make([][]float64, rows)
	var w []float64 // the dense model's head W [V, D]
	if m.Dense() {
		if w, err = m.Unembed(); err != nil {
			return nil, err
		}
	} else {
		out.Bank, out.Acts = make([][]int, rows), make([][]float64, rows)
	}
	err = headRows(m, seqs, T, batch, func(i int, hidden, logits []float64, idx []int32, act []float64) {
		for _, p := range plans[i] {
			z := append([]float64(nil), hidden[p.pos*D:(p.pos+1)*D]...)
			out.Hidden[p.row] = z
			if w != nil {
				out.Logits[p.row] = denseLogits(w, z, V)
				continue
			}
			out.Logits[p.row] = append([]float64(nil), logits[p.pos*V:(p.pos+1)*V]...)
			for j := range k {
				if a := act[p.pos*k+j]; a != 0 { // a non-positive cosine: no slice
					out.Bank[p.row] = append(out.Bank[p.row], int(idx[p.pos*k+j]))
					out.Acts[p.row] = append(out.Acts[p.row], a)
				}
			}
		}
	})
	return out, err
}

// denseLogits returns the dense head's logits l = W z: w [V, D] row-major, z [D] → [V].
func denseLogits(w, z []float64, V int) []float64 {
	D := len(z)
	l := make([]float64, V)
	for v := range V {
		s := 0.0
		for i, x := range z {
			s += w[v*D+i] * x
		}
		l[v] = s
	}
	return l
}

// problem builds a controller problem over units: per row its active units (any ids) and activations, and the
// signatures of the units that occur (sig returns them for the ids in order of first occurrence).
func (d *Rows) problem(units [][]int, acts [][]float64, sig func(ids []int) ([][]float64, error)) (*control.Problem,
	error) {
	p := &control.Problem{Items: d.Items, Rows: make([]control.Row, len(d.Logits))}
	compact := map[int]int{}
	for r := range p.Rows {
		row := control.Row{Logits: d.Logits[r]}
		for j, u := range units[r] {
			c, ok := compact[u]
			if !ok {
				c = len(p.IDs)
				compact[u] = c
				p.IDs = append(p.IDs, u)
			}
			row.Units = append(row.Units, c)
			row.Acts = append(row.Acts, acts[r][j])
		}
		p.Rows[r] = row
	}
	var err error
	p.Signatures, err = sig(p.IDs)
	return p, err
}

// PrototypeProblem is the prototype controller's problem (theory/steer S1) on the rows of m, the PRISM model that
// produced them: the units are the active prototypes with their signatures W p_i. Errors for a dense model's rows.
func (d *Rows) PrototypeProblem(m *lm.Model) (*control.Problem, error) {
	if d.Bank == nil {
		return nil, errors.New("steer: the dense model has no prototypes to steer")
	}
	return d.problem(d.Bank, d.Acts, m.Signatures)
}

// FeatureProblem is an SAE controller's problem: the units of a row are its non-zero SAE codes f_{t,j} of dict and
// their signatures W d_j (w [V, D] the steered model's head), the same form as (S1) with features for prototypes.
// It returns the SAE's statistics on the rows.
func (d *Rows) FeatureProblem(dict *dictionary.Dictionary, w []float64, V int) (*control.Problem, dictionary.Stats,
	error) {
	N, D := len(d.Hidden), dict.D
	flat := make([]float64, 0, N*D)
	for _, z := range d.Hidden {
		flat = append(flat, z...)
	}
	codes, st, err := dict.Encode(flat, N)
	if err != nil {
		return nil, st, err
	}
	F := dict.F
	units, acts := make([][]int, N), make([][]float64, N)
	for r := range N {
		for j, f := range codes[r*F : (r+1)*F] {
			if f != 0 {
				units[r] = append(units[r], j)
				acts[r] = append(acts[r], f)
			}
		}
	}
	dirs, err := dict.Directions()
	if err != nil {
		return nil, st, err
	}
	p, err := d.problem(units, acts, func(ids []int) ([][]float64, error) {
		out := make([][]float64, len(ids))
		for i, j := range ids {
			out[i] = denseLogits(w, dirs[j*D:(j+1)*D], V)
		}
		return out, nil
	})
	return p, st, err
}

// BiasProblem is the bias-only controller's problem (theory/steer S6): V gains, one per token, added to every row.
func (d *Rows) BiasProblem(V int) *control.Problem {
	p := &control.Problem{Items: d.Items, Rows: make([]control.Row, len(d.Logits)), Bias: true, Vocab: V}
	for r := range p.Rows {
		p.Rows[r] = control.Row{Logits: d.Logits[r]}
	}
	return p
}

// problemOf is the prototype controller's problem of a task on a PRISM model (Collect, then PrototypeProblem).
func problemOf(m *lm.Model, task Task, contextTokens, batch int) (*control.Problem, error) {
	d, err := Collect(m, task, contextTokens, batch)
	if err != nil {
		return nil, err
	}
	return d.PrototypeProblem(m)
}
