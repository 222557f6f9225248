package suppression

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/eval"
)

// This file holds the measurements of the study (doc.go, equations 5–8): the prompts, generation under
// suppression, and the perplexities of validation text without and with the concept.

// suppressEvalBatch is the number of rows of the perplexity graphs.
const suppressEvalBatch = 16

// suppressionPrompts returns [EOS] + the first sentence of each of Samples fresh synthetic documents.
func suppressionPrompts(m *lm.Model, s Settings) ([][]int32, error) {
	c, err := m.FreshCorpus(s.Samples, s.PromptSeed)
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

// splitByKeywords packs the documents without a keyword (other) and with one (concept) into sequences of T+1
// tokens, at most maxSeq of each; a part too small for one sequence is empty (its perplexity is reported as 0).
func splitByKeywords(m *lm.Model, texts, kw []string, maxSeq int) (other, concept [][]int32, err error) {
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

// generateSuppressed continues each prompt under SuppressedStep(omega, mode), SampleBatch rows at a time (batch b
// samples with seed Sample.Seed + b, stopping at the end-of-document token), and returns the new tokens per prompt.
func generateSuppressed(m *lm.Model, prompts [][]int32, omega []float64, mode string, s Settings) ([][]int32, error) {
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	B := s.SampleBatch
	longest := 0
	for _, p := range prompts {
		longest = max(longest, len(p))
	}
	capacity := longest + s.Sample.MaxNewTokens
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
		sc := s.Sample
		sc.StopToken = d.EOS
		sc.Seed += uint64(b)
		gen, _, err := dec.Generate(rows, sc)
		if err != nil {
			return nil, errors.WithMessagef(err, "suppression: generating with %s suppression", mode)
		}
		for r := 0; r < B && start+r < len(prompts); r++ {
			out[start+r] = gen[r]
		}
	}
	return out, nil
}

// nllRows runs the PRISM model with omega suppressed (mode) on rows of 2…L+1 tokens (right-padded with EOS to the
// longest) and calls fn per row with the next-token losses [L] and the activity indicators [L] of the set watch
// (1 where some prototype with watch = 1 is selected with a > 0 by the unsuppressed head).
func nllRows(m *lm.Model, rows [][]int32, omega, watch []float64, mode string, fn func(i int, nll, active []float64)) error {
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
		nll := decoder.CrossEntropy(prism.SuppressedLogits(d, ConvertDType(om, dt), mode),
			Slice(batch, AxisRange(), AxisRange(1, T1)))
		return []*Node{ConvertDType(nll, dtypes.Float64), ConvertDType(prism.SuppressedActive(d, ConvertDType(wt, dt)), dtypes.Float64)}
	})
	if err != nil {
		return errors.Wrap(err, "suppression: building the suppressed loss graph")
	}
	T1 := 0
	for _, r := range rows {
		T1 = max(T1, len(r))
	}
	if T1 < 2 {
		return errors.New("suppression: rows of fewer than 2 tokens have no next-token loss")
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
			return errors.Wrapf(err, "suppression: suppressed losses of rows %d…", start)
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

// nllSum accumulates next-token losses.
type nllSum struct {
	sum           float64
	tokens, activ int
}

// perplexity is exp(mean loss), 0 without tokens (JSON has no NaN).
func (s nllSum) perplexity() float64 {
	if s.tokens == 0 {
		return 0
	}
	return math.Exp(s.sum / float64(s.tokens))
}

// plus pools two sums.
func (s nllSum) plus(t nllSum) nllSum {
	return nllSum{sum: s.sum + t.sum, tokens: s.tokens + t.tokens, activ: s.activ + t.activ}
}

func (s nllSum) activeFraction() float64 {
	if s.tokens == 0 {
		return 0
	}
	return float64(s.activ) / float64(s.tokens)
}

// suppressedNLL sums the next-token losses of every position of the rows ([T+1] tokens each) under suppression,
// and counts the positions where a prototype of watch is active.
func suppressedNLL(m *lm.Model, rows [][]int32, omega, watch []float64, mode string) (nllSum, error) {
	var s nllSum
	err := nllRows(m, rows, omega, watch, mode, func(i int, nll, active []float64) {
		for t, x := range nll[:len(rows[i])-1] {
			s.sum += x
			s.tokens++
			if active[t] > 0 {
				s.activ++
			}
		}
	})
	return s, err
}

// completionPerplexity returns the perplexity of the generated tokens given their prompts under the unsuppressed
// model (the tokens up to and including the end-of-document token, if generated).
func completionPerplexity(m *lm.Model, prompts, gens [][]int32) (float64, error) {
	rows := make([][]int32, len(prompts))
	for i := range prompts {
		rows[i] = append(append([]int32(nil), prompts[i]...), gens[i]...)
	}
	var s nllSum
	none := make([]float64, m.Config.Prism.NumPrototypes)
	err := nllRows(m, rows, none, none, prism.SuppressZero, func(i int, nll, _ []float64) {
		for t := len(prompts[i]) - 1; t < len(rows[i])-1; t++ {
			s.sum += nll[t]
			s.tokens++
		}
	})
	return s.perplexity(), err
}
