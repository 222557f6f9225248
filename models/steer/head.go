package steering

import (
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/lm"
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
		return errors.Wrap(err, "steering: building the head graph")
	}
	D, V, k := cfg.Width, cfg.VocabSize, pc.TopK
	flat := make([]int32, B*T)
	for start := 0; start < len(rows); start += B {
		clear(flat)
		for b := range B {
			r := rows[min(start+b, len(rows)-1)] // pad the last batch with copies
			if len(r) == 0 || len(r) > T {
				return errors.Errorf("steering: token row %d has %d tokens, want 1…%d", start+b, len(r), T)
			}
			copy(flat[b*T:], r)
		}
		out, err := exec.Exec(tensors.FromFlatDataAndDimensions(flat, B, T))
		if err != nil {
			return errors.Wrapf(err, "steering: head outputs of rows %d…", start)
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

// ctrlData is a task's items run through one frozen model: per row (a position that predicts an option token) the
// logits, the final hidden state and, for a PRISM model, its active prototypes (bank indices) and activations.
type ctrlData struct {
	items  []ctrlItem
	logits [][]float64 // [rows][V]
	hidden [][]float64 // [rows][D]
	bank   [][]int     // [rows][≤ k] active prototypes (a > 0); nil for the dense model
	acts   [][]float64 // [rows][≤ k]
}

// collectRows tokenizes a task's items ([EOS] + context, cut on the left to contextTokens tokens, then each
// option), runs the frozen model once per option sequence and keeps its outputs at the positions that predict option
// tokens (the last context position once per item, shared by its options).
func collectRows(m *lm.Model, task MCTask, contextTokens, batch int) (*ctrlData, error) {
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	tok := d.Tokenizer
	type want struct{ pos, row int }
	var seqs [][]int32
	var plans [][]want
	out := &ctrlData{}
	rows := 0
	T := 0
	for _, it := range task.Items {
		prefix := append([]int32{d.EOS}, tok.Encode(it.Context)...)
		if len(prefix) > contextTokens {
			prefix = prefix[len(prefix)-contextTokens:]
		}
		ci := ctrlItem{correct: it.Correct}
		shared := rows
		rows++
		for o, opt := range it.Options {
			ids := tok.Encode(opt)
			if len(ids) == 0 {
				return nil, errors.Errorf("steering: task %q option %q encodes to no tokens", task.Name, opt)
			}
			seq := append(append([]int32(nil), prefix...), ids...)
			var plan []want
			var toks []ctrlTok
			for j, y := range ids {
				row := shared
				if j > 0 {
					row = rows
					rows++
				}
				if j > 0 || o == 0 {
					plan = append(plan, want{len(prefix) - 1 + j, row})
				}
				toks = append(toks, ctrlTok{row: row, target: y})
			}
			ci.options = append(ci.options, toks)
			seqs = append(seqs, seq)
			plans = append(plans, plan)
			T = max(T, len(seq))
		}
		out.items = append(out.items, ci)
	}
	D, V, k := m.Config.Model.Width, m.Config.Model.VocabSize, m.Config.Prism.TopK
	out.logits, out.hidden = make([][]float64, rows), make([][]float64, rows)
	var w []float64 // the dense model's head W [V, D]
	if m.Dense() {
		if w, err = m.Unembed(); err != nil {
			return nil, err
		}
	} else {
		out.bank, out.acts = make([][]int, rows), make([][]float64, rows)
	}
	err = headRows(m, seqs, T, batch, func(i int, hidden, logits []float64, idx []int32, act []float64) {
		for _, p := range plans[i] {
			z := append([]float64(nil), hidden[p.pos*D:(p.pos+1)*D]...)
			out.hidden[p.row] = z
			if w != nil {
				out.logits[p.row] = denseLogits(w, z, V)
				continue
			}
			out.logits[p.row] = append([]float64(nil), logits[p.pos*V:(p.pos+1)*V]...)
			for j := range k {
				if a := act[p.pos*k+j]; a != 0 { // a non-positive cosine: no slice
					out.bank[p.row] = append(out.bank[p.row], int(idx[p.pos*k+j]))
					out.acts[p.row] = append(out.acts[p.row], a)
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
func (d *ctrlData) problem(units [][]int, acts [][]float64, sig func(ids []int) ([][]float64, error)) (*ctrlProblem,
	error) {
	p := &ctrlProblem{items: d.items, rows: make([]ctrlRow, len(d.logits))}
	compact := map[int]int{}
	for r := range p.rows {
		row := ctrlRow{logits: d.logits[r]}
		for j, u := range units[r] {
			c, ok := compact[u]
			if !ok {
				c = len(p.bankID)
				compact[u] = c
				p.bankID = append(p.bankID, u)
			}
			row.protos = append(row.protos, c)
			row.acts = append(row.acts, acts[r][j])
		}
		p.rows[r] = row
	}
	var err error
	p.sig, err = sig(p.bankID)
	return p, err
}

// prototypeProblem is the prototype controller's problem (S1) on a PRISM model's rows.
func (d *ctrlData) prototypeProblem(m *lm.Model) (*ctrlProblem, error) {
	if d.bank == nil {
		return nil, errors.New("steering: the dense model has no prototypes to steer")
	}
	return d.problem(d.bank, d.acts, m.Signatures)
}

// featureProblem is an SAE controller's problem: the units of a row are its non-zero SAE codes f_{t,j} and their
// signatures W d_j (w [V, D] the model's head), the same form as (S1) with features for prototypes. It returns the
// SAE's statistics on the rows.
func (d *ctrlData) featureProblem(dict *dictionary.Dictionary, w []float64, V int) (*ctrlProblem, dictionary.Stats,
	error) {
	N, D := len(d.hidden), dict.D
	flat := make([]float64, 0, N*D)
	for _, z := range d.hidden {
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

// biasProblem is the bias-only controller's problem (S6): V gains, one per token, added to every row.
func (d *ctrlData) biasProblem(V int) *ctrlProblem {
	p := &ctrlProblem{items: d.items, rows: make([]ctrlRow, len(d.logits)), bias: true, vocab: V}
	for r := range p.rows {
		p.rows[r] = ctrlRow{logits: d.logits[r]}
	}
	return p
}

// ctrlProblemOf is the prototype controller's problem of a task on a PRISM model (collectRows, then
// prototypeProblem).
func ctrlProblemOf(m *lm.Model, task MCTask, contextTokens, batch int) (*ctrlProblem, error) {
	d, err := collectRows(m, task, contextTokens, batch)
	if err != nil {
		return nil, err
	}
	return d.prototypeProblem(m)
}
