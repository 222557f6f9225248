package steering

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
)

// headRows runs the PRISM model on token rows (each of 1…T tokens, right-padded to T) in batches of B rows and
// calls fn once per row with its head outputs at every position: logits [T·V], indices [T·k] and activations
// [T·k] (row-major by position; positions past the row's length see padding only after them, so causality
// keeps the row's own positions exact).
func headRows(m *lm.Model, rows [][]int32, T, B int, fn func(i int, logits []float64, idx []int32, act []float64)) error {
	if m.Dense() {
		return errors.New("steering: the dense model has no prototype head to steer")
	}
	cfg, pc := m.Config.Model, m.Config.Prism.Config
	exec, err := context.NewExec(m.Backend, m.Ctx.Reuse(), func(ctx *context.Context, tokens *Node) []*Node {
		d := decoder.PrismHead(ctx, cfg, pc, tokens)
		return []*Node{ConvertDType(d.Logits, dtypes.Float64), ConvertDType(d.Indices, dtypes.Int32),
			ConvertDType(d.Activations, dtypes.Float64)}
	})
	if err != nil {
		return errors.Wrap(err, "steering: building the head graph")
	}
	V, k := cfg.VocabSize, pc.TopK
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
		logits := tensors.MustCopyFlatData[float64](out[0])
		idx := tensors.MustCopyFlatData[int32](out[1])
		act := tensors.MustCopyFlatData[float64](out[2])
		for b := 0; b < B && start+b < len(rows); b++ {
			fn(start+b, logits[b*T*V:(b+1)*T*V], idx[b*T*k:(b+1)*T*k], act[b*T*k:(b+1)*T*k])
		}
	}
	return nil
}

// ctrlProblemOf tokenizes a task's items ([EOS] + context, cut on the left to contextTokens tokens, then each
// option), runs the frozen model once per option sequence and collects the head outputs at the positions that
// predict option tokens (the last context position once per item, shared by its options).
func ctrlProblemOf(m *lm.Model, task MCTask, contextTokens, batch int) (*ctrlProblem, error) {
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	tok := d.Tokenizer
	type want struct{ pos, row int }
	var seqs [][]int32
	var plans [][]want
	p := &ctrlProblem{}
	T := 0
	for _, it := range task.Items {
		prefix := append([]int32{d.EOS}, tok.Encode(it.Context)...)
		if len(prefix) > contextTokens {
			prefix = prefix[len(prefix)-contextTokens:]
		}
		ci := ctrlItem{correct: it.Correct}
		shared := len(p.rows)
		p.rows = append(p.rows, ctrlRow{})
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
					row = len(p.rows)
					p.rows = append(p.rows, ctrlRow{})
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
		p.items = append(p.items, ci)
	}
	V, k := m.Config.Model.VocabSize, m.Config.Prism.TopK
	compact := map[int]int{}
	err = headRows(m, seqs, T, batch, func(i int, logits []float64, idx []int32, act []float64) {
		for _, w := range plans[i] {
			row := ctrlRow{logits: append([]float64(nil), logits[w.pos*V:(w.pos+1)*V]...)}
			for j := range k {
				a := act[w.pos*k+j]
				if a == 0 {
					continue // a non-positive cosine: no slice
				}
				bid := int(idx[w.pos*k+j])
				c, ok := compact[bid]
				if !ok {
					c = len(p.bankID)
					compact[bid] = c
					p.bankID = append(p.bankID, bid)
				}
				row.protos = append(row.protos, c)
				row.acts = append(row.acts, a)
			}
			p.rows[w.row] = row
		}
	})
	if err != nil {
		return nil, err
	}
	p.sig, err = m.Signatures(p.bankID)
	return p, err
}
