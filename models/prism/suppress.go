package prism

// Suppression of a concept's prototypes Ω at inference (suppression study; docs/spec/prism.md §10): SelectByKeywords
// chooses Ω (suppress_select.go), GenerateSuppressed samples under suppression, SuppressedNLL and
// CompletionPerplexity measure perplexities, SuppressPrompts and SplitByKeywords make the data they run on.

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	prismlayer "github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/eval"
)

// suppressEvalBatch is the number of rows of the perplexity graphs.
const suppressEvalBatch = 16

// SuppressPrompts returns [EOS] + the first sentence of each of n fresh synthetic documents of the given seed
// (lm.Model.FreshCorpus): prompts that name a referent and a city but no topic.
func SuppressPrompts(m *lm.Model, n int, seed uint64) ([][]int32, error) {
	c, err := m.FreshCorpus(n, seed)
	if err != nil {
		return nil, err
	}
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	out := make([][]int32, len(c.Texts))
	for i, text := range c.Texts {
		end := len(text)
		if sent := c.Labels[i].Sentences; len(sent) > 0 {
			end = int(sent[0].End)
		}
		out[i] = append([]int32{d.EOS}, d.Tokenizer.Encode(text[:end])...)
	}
	return out, nil
}

// SplitByKeywords packs the documents without a keyword (other) and with one (concept) into sequences of T+1 tokens
// (T = data.seq_len), at most maxSeq of each; a part too small for one sequence is empty.
func SplitByKeywords(m *lm.Model, texts, kw []string, maxSeq int) (other, concept [][]int32, err error) {
	prep, err := m.Data()
	if err != nil {
		return nil, nil, err
	}
	set := map[string]bool{}
	for _, k := range kw {
		set[k] = true
	}
	var docs [2][][]int32
	for _, text := range texts {
		has := 0
		for _, w := range SplitWords(text) {
			if set[w] {
				has = 1
				break
			}
		}
		docs[has] = append(docs[has], prep.Tokenizer.Encode(text))
	}
	var parts [2][][]int32
	for i, d := range docs {
		if len(d) == 0 {
			continue
		}
		p, err := data.Pack(d, m.Config.Data.SeqLen, prep.EOS)
		if err != nil {
			continue // too few tokens for one sequence
		}
		for s := 0; s < min(p.NumSequences(), maxSeq); s++ {
			parts[i] = append(parts[i], p.Sequence(s))
		}
	}
	return parts[0], parts[1], nil
}

// GenerateSuppressed continues each prompt under lm.SuppressedStep(omega, mode) (omega [K]: 1 on Ω), B rows at a
// time (batch b samples with seed sc.Seed + b, stopping at the end-of-document token whatever sc.StopToken says),
// and returns the new tokens per prompt.
func GenerateSuppressed(m *lm.Model, prompts [][]int32, omega []float64, mode string, B int,
	sc eval.SampleConfig) ([][]int32, error) {
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	longest := 0
	for _, p := range prompts {
		longest = max(longest, len(p))
	}
	capacity := longest + sc.MaxNewTokens
	mc := m.Config.Model
	dec, err := eval.NewDecoder(m.Backend, m.Store, lm.SuppressedStep(mc, m.Config.Prism.Config, omega, mode),
		decoder.StateShapes(mc, B, capacity), B, capacity)
	if err != nil {
		return nil, err
	}
	out := make([][]int32, len(prompts))
	for start, b := 0, 0; start < len(prompts); start, b = start+B, b+1 {
		rows := make([][]int32, B)
		for r := range rows {
			rows[r] = prompts[min(start+r, len(prompts)-1)] // pad the last batch with copies
		}
		bc := sc
		bc.StopToken = d.EOS
		bc.Seed += uint64(b)
		gen, _, err := dec.Generate(rows, bc)
		if err != nil {
			return nil, errors.WithMessagef(err, "prism.GenerateSuppressed: generating with %s suppression", mode)
		}
		for r := 0; r < B && start+r < len(prompts); r++ {
			out[start+r] = gen[r]
		}
	}
	return out, nil
}

// suppressNLLRows runs the PRISM model with omega suppressed (mode) on rows of 2…L+1 tokens (right-padded with EOS to
// the longest) and calls fn per row with the next-token losses [L] and the activity indicators [L] of the set watch
// (1 where some prototype with watch = 1 is selected with a > 0 by the unsuppressed head).
func suppressNLLRows(m *lm.Model, rows [][]int32, omega, watch []float64, mode string,
	fn func(i int, nll, active []float64)) error {
	if len(rows) == 0 {
		return nil
	}
	d, err := m.Data()
	if err != nil {
		return err
	}
	cfg, pc := m.Config.Model, m.Config.Prism.Config
	exec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch, om, wt *Node) []*Node {
		T1 := batch.Shape().Dim(1)
		d := decoder.PrismHead(scope, cfg, pc, Slice(batch, AxisRange(), AxisRange(0, T1-1)))
		dt := d.Hidden.DType()
		nll := decoder.CrossEntropy(prismlayer.SuppressedLogits(d, ConvertDType(om, dt), mode),
			Slice(batch, AxisRange(), AxisRange(1, T1)))
		active := prismlayer.SuppressedActive(d, ConvertDType(wt, dt))
		return []*Node{ConvertDType(nll, dtypes.Float64), ConvertDType(active, dtypes.Float64)}
	})
	if err != nil {
		return errors.Wrap(err, "prism: building the suppressed loss graph")
	}
	T1 := 0
	for _, r := range rows {
		T1 = max(T1, len(r))
	}
	if T1 < 2 {
		return errors.New("prism: rows of fewer than 2 tokens have no next-token loss")
	}
	B := suppressEvalBatch
	flat := make([]int32, B*T1)
	om := tensors.FromFlatDataAndDimensions(append([]float64(nil), omega...), len(omega))
	wt := tensors.FromFlatDataAndDimensions(append([]float64(nil), watch...), len(watch))
	for start := 0; start < len(rows); start += B {
		for b := range B {
			r := rows[min(start+b, len(rows)-1)]
			row := flat[b*T1 : (b+1)*T1]
			copy(row, r)
			for t := len(r); t < T1; t++ {
				row[t] = d.EOS
			}
		}
		out, err := exec.Exec(tensors.FromFlatDataAndDimensions(flat, B, T1), om, wt)
		if err != nil {
			return errors.Wrapf(err, "prism: suppressed losses of rows %d…", start)
		}
		nll := tensors.MustCopyFlatData[float64](out[0])
		act := tensors.MustCopyFlatData[float64](out[1])
		T := T1 - 1
		for b := 0; b < B && start+b < len(rows); b++ {
			fn(start+b, nll[b*T:(b+1)*T], act[b*T:(b+1)*T])
		}
	}
	return nil
}

// NLLSum accumulates next-token losses: Sum over Tokens positions, Active of them with a watched prototype active.
type NLLSum struct {
	Sum            float64
	Tokens, Active int
}

// Perplexity is exp(Sum/Tokens), 0 without tokens (JSON has no NaN).
func (s NLLSum) Perplexity() float64 {
	if s.Tokens == 0 {
		return 0
	}
	return math.Exp(s.Sum / float64(s.Tokens))
}

// Plus pools two sums.
func (s NLLSum) Plus(t NLLSum) NLLSum {
	return NLLSum{Sum: s.Sum + t.Sum, Tokens: s.Tokens + t.Tokens, Active: s.Active + t.Active}
}

// ActiveFraction is Active/Tokens, 0 without tokens.
func (s NLLSum) ActiveFraction() float64 {
	if s.Tokens == 0 {
		return 0
	}
	return float64(s.Active) / float64(s.Tokens)
}

// SuppressedNLL sums the next-token losses of every position of the rows ([T+1] tokens each) under suppression of
// omega ([K]: 1 on Ω) in mode (prismlayer.SuppressZero or SuppressMask; Ω = ∅ leaves the logits unchanged exactly), and
// counts the positions where a prototype of watch ([K]: 1 on the watched set) is active unsuppressed.
func SuppressedNLL(m *lm.Model, rows [][]int32, omega, watch []float64, mode string) (NLLSum, error) {
	var s NLLSum
	err := suppressNLLRows(m, rows, omega, watch, mode, func(i int, nll, active []float64) {
		for t, x := range nll[:len(rows[i])-1] {
			s.Sum += x
			s.Tokens++
			if active[t] > 0 {
				s.Active++
			}
		}
	})
	return s, err
}

// CompletionPerplexity returns the perplexity of the generated tokens given their prompts under the unsuppressed
// model (the tokens up to and including the end-of-document token, if generated).
func CompletionPerplexity(m *lm.Model, prompts, gens [][]int32) (float64, error) {
	rows := make([][]int32, len(prompts))
	for i := range prompts {
		rows[i] = append(append([]int32(nil), prompts[i]...), gens[i]...)
	}
	var s NLLSum
	none := make([]float64, m.Config.Prism.NumPrototypes)
	err := suppressNLLRows(m, rows, none, none, prismlayer.SuppressZero, func(i int, nll, _ []float64) {
		for t := len(prompts[i]) - 1; t < len(rows[i])-1; t++ {
			s.Sum += nll[t]
			s.Tokens++
		}
	})
	return s.Perplexity(), err
}
