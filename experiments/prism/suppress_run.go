package prism

import (
	"math"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/hook"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/eval"
)

// suppressEvalBatch is the number of rows of the perplexity graphs.
const suppressEvalBatch = 16

// selectByKeywords fills res.Omega, res.Selected and res.BaseHitRate from the top-activating contexts of the
// first SelectBatches training batches (rules "contexts" and "mass") or from the prototypes' logit signatures (rule
// "signature"); every selected prototype's card gets its most activating context and its most promoted tokens.
func selectByKeywords(m *Model, sc SuppressConfig, kw []string, res *SuppressionResult) error {
	batches, err := m.trainTensors(sc.SelectBatches)
	if err != nil {
		return err
	}
	st, err := m.HeadStats(batches)
	if err != nil {
		return err
	}
	var seqs [][]int32 // sequence s = batch·B + row, [T+1] tokens
	for _, b := range batches {
		B, T1 := b.Shape().Dim(0), b.Shape().Dim(1)
		flat := tensors.MustCopyFlatData[int32](b)
		for r := range B {
			seqs = append(seqs, flat[r*T1:(r+1)*T1])
		}
	}
	set := map[string]bool{}
	for _, k := range kw {
		set[k] = true
	}
	window := func(n int) string {
		s := seqs[st.Seq[n]]
		p := int(st.Pos[n])
		return m.Data.Tokenizer.DecodeString(s[max(0, p-sc.WindowBefore):min(len(s), p+sc.WindowAfter+1)])
	}
	memo := map[int]bool{}
	hit := func(n int) bool {
		h, ok := memo[n]
		if !ok {
			for _, w := range SplitWords(window(n)) {
				if set[w] {
					h = true
					break
				}
			}
			memo[n] = h
		}
		return h
	}
	hits := 0
	for n := range st.N {
		if hit(n) {
			hits++
		}
	}
	res.BaseHitRate = float64(hits) / float64(st.N)
	top := sc.TopContexts
	if sc.Rule == RuleMass {
		top = st.N // every activation
	}
	per := topContexts(st.Indices, st.Acts, st.TopK, st.K, top)
	all := make([]int, st.K)
	for i := range all {
		all[i] = i
	}
	rows, err := signatures(m, all)
	if err != nil {
		return err
	}
	sig := slices.Concat(rows...) // [K, V]
	V := m.Cfg.VocabSize
	toks := keywordTokens(m.Data.Tokenizer.Encode, kw, m.Data.Train.Texts)
	sigHits, promoted := signatureHits(sig, V, toks, min(sc.SignatureTokens, V))
	switch sc.Rule {
	case RuleSignature:
		res.Selected = nil
		for i, h := range sigHits {
			if h >= sc.MinHitRate {
				res.Selected = append(res.Selected, SelectedPrototype{Prototype: i, HitRate: h, Contexts: len(per[i])})
			}
		}
	default:
		res.Selected = selectPrototypes(per, sc.MinContexts, sc.MinHitRate, sc.Rule == RuleMass, hit)
	}
	res.Omega = []int{}
	for i := range res.Selected {
		p := res.Selected[i].Prototype
		if len(per[p]) > 0 {
			res.Selected[i].Example = window(per[p][0].tok)
		}
		for _, v := range promoted[p] {
			res.Selected[i].Promoted = append(res.Selected[i].Promoted, m.Data.Tokenizer.DecodeString([]int32{v}))
		}
		res.Omega = append(res.Omega, p)
	}
	return nil
}

// suppressionPrompts returns [EOS] + the first sentence of each of Samples fresh synthetic documents.
func suppressionPrompts(m *Model, sc SuppressConfig) ([][]int32, error) {
	c, err := freshCorpus(m, sc.Samples, sc.PromptSeed)
	if err != nil {
		return nil, err
	}
	out := make([][]int32, len(c.Texts))
	for d, text := range c.Texts {
		end := len(text)
		if s := c.Labels[d].Sentences; len(s) > 0 {
			end = int(s[0].End)
		}
		out[d] = append([]int32{m.Data.EOS}, m.Data.Tokenizer.Encode(text[:end])...)
	}
	return out, nil
}

// splitByKeywords packs the validation documents without a keyword (other) and with one (concept) into
// sequences of T+1 tokens, at most maxSeq of each; a part too small for one sequence is empty (its perplexity is reported as 0).
func splitByKeywords(m *Model, kw []string, maxSeq int) (other, concept [][]int32, err error) {
	set := map[string]bool{}
	for _, k := range kw {
		set[k] = true
	}
	var docs [2][][]int32
	for _, text := range m.Data.Val.Texts {
		has := 0
		for _, w := range SplitWords(text) {
			if set[w] {
				has = 1
				break
			}
		}
		docs[has] = append(docs[has], m.Data.Tokenizer.Encode(text))
	}
	var parts [2][][]int32
	for i, d := range docs {
		if len(d) == 0 {
			continue
		}
		p, err := data.Pack(d, m.Data.Config.SeqLen, m.Data.EOS)
		if err != nil {
			continue // too few tokens for one sequence
		}
		for s := 0; s < min(p.NumSequences(), maxSeq); s++ {
			parts[i] = append(parts[i], p.Sequence(s))
		}
	}
	return parts[0], parts[1], nil
}

// unembedNode returns the LM head W [V, D] of the model in ctx (the token embedding when tied).
func unembedNode(ctx *context.Context, cfg decoder.Config, g *Graph) *Node {
	scope, name := ctx.In(decoder.ScopeLMHead), decoder.VarLMHead
	if cfg.TieEmbeddings {
		scope, name = ctx.In(decoder.ScopeEmbed), decoder.VarEmbeddings
	}
	v := scope.GetVariable(name)
	if v == nil {
		panic(errors.Errorf("prism: no variable %s/%s", scope.Scope(), name))
	}
	return v.ValueGraph(g)
}

// SuppressedStep returns a decoding step (eval.StepFn) of the PRISM model with the prototypes marked in omega
// ([K], 1 = suppressed) suppressed in mode prism.SuppressZero or prism.SuppressMask: the backbone's decoder.Step runs
// with a hook that captures its final-normalised hidden state, and the PRISM head (prism.Decompose) and
// prism.SuppressedLogits turn it into logits [B, V]. After steps 0…t they equal prism.SuppressedLogits of the full
// forward at position t.
func SuppressedStep(cfg decoder.Config, pc prism.Config, omega []float64, mode string) eval.StepFn {
	omega = append([]float64(nil), omega...)
	return func(ctx *context.Context, token, pos *Node, state []*Node) (*Node, []*Node) {
		g := token.Graph()
		var z *Node
		detach := hook.Attach(g, func(name string, x *Node) *Node {
			if name == decoder.ProbeFinalNorm {
				z = x
			}
			return x
		})
		_, newState := decoder.Step(ctx, cfg, token, pos, state)
		detach()
		if z == nil {
			panic(errors.Errorf("prism.SuppressedStep: the decoder emitted no %q probe", decoder.ProbeFinalNorm))
		}
		d := prism.Decompose(z, prism.BankNode(ctx, pc, g, z.DType(), cfg.Width), unembedNode(ctx, cfg, g), pc)
		w := ConvertDType(Const(g, omega), z.DType())
		logits := prism.SuppressedLogits(d, w, mode)
		return Reshape(logits, token.Shape().Dim(0), cfg.VocabSize), newState
	}
}

// generateSuppressed continues each prompt under SuppressedStep(omega, mode), SampleBatch rows at a time (batch b
// samples with seed Sample.Seed + b, stopping at the end-of-document token), and returns the new tokens per prompt.
func generateSuppressed(m *Model, prompts [][]int32, omega []float64, mode string, sc SuppressConfig) ([][]int32, error) {
	B := sc.SampleBatch
	longest := 0
	for _, p := range prompts {
		longest = max(longest, len(p))
	}
	capacity := longest + sc.Sample.MaxNewTokens
	dec, err := eval.NewDecoder(m.Backend, m.Ctx, SuppressedStep(m.Cfg, m.Prism, omega, mode),
		decoder.StateShapes(m.Cfg, B, capacity), B, capacity)
	if err != nil {
		return nil, err
	}
	out := make([][]int32, len(prompts))
	for start, b := 0, 0; start < len(prompts); start, b = start+B, b+1 {
		rows := make([][]int32, B)
		for r := range rows {
			rows[r] = prompts[min(start+r, len(prompts)-1)] // pad the last batch with copies
		}
		s := sc.Sample
		s.StopToken = m.Data.EOS
		s.Seed += uint64(b)
		gen, _, err := dec.Generate(rows, s)
		if err != nil {
			return nil, errors.WithMessagef(err, "prism: generating with %s suppression", mode)
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
func nllRows(m *Model, rows [][]int32, omega, watch []float64, mode string, fn func(i int, nll, active []float64)) error {
	if len(rows) == 0 {
		return nil
	}
	cfg, pc := m.Cfg, m.Prism
	exec, err := context.NewExec(m.Backend, m.Ctx.Reuse(), func(ctx *context.Context, batch, om, wt *Node) []*Node {
		T1 := batch.Shape().Dim(1)
		d := decoder.PrismHead(ctx, cfg, pc, Slice(batch, AxisRange(), AxisRange(0, T1-1)))
		dt := d.Hidden.DType()
		nll := decoder.CrossEntropy(prism.SuppressedLogits(d, ConvertDType(om, dt), mode),
			Slice(batch, AxisRange(), AxisRange(1, T1)))
		return []*Node{ConvertDType(nll, dtypes.Float64), ConvertDType(prism.SuppressedActive(d, ConvertDType(wt, dt)), dtypes.Float64)}
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
				row[t] = m.Data.EOS
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

func (s nllSum) activeFraction() float64 {
	if s.tokens == 0 {
		return 0
	}
	return float64(s.activ) / float64(s.tokens)
}

// suppressedNLL sums the next-token losses of every position of the rows ([T+1] tokens each) under suppression,
// and counts the positions where a prototype of watch is active.
func suppressedNLL(m *Model, rows [][]int32, omega, watch []float64, mode string) (nllSum, error) {
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
func completionPerplexity(m *Model, prompts, gens [][]int32) (float64, error) {
	rows := make([][]int32, len(prompts))
	for i := range prompts {
		rows[i] = append(append([]int32(nil), prompts[i]...), gens[i]...)
	}
	var s nllSum
	none := make([]float64, m.Prism.NumPrototypes)
	err := nllRows(m, rows, none, none, prism.SuppressZero, func(i int, nll, _ []float64) {
		for t := len(prompts[i]) - 1; t < len(rows[i])-1; t++ {
			s.sum += nll[t]
			s.tokens++
		}
	})
	return s.perplexity(), err
}
