package suppression

import (
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/stats"
)

// Keyword scoring of generations and keyword selection of prototypes (spec §10).

// selectByKeywords fills res.Omega, res.Selected and res.BaseHitRate from the top-activating contexts of the
// first SelectBatches training batches (rules "contexts" and "mass") or from the prototypes' logit signatures (rule
// "signature"); every selected prototype's card gets its most activating context and its most promoted tokens.
func selectByKeywords(m *lm.Model, s Settings, kw []string, res *ModelRun) error {
	d, err := m.Data()
	if err != nil {
		return err
	}
	batches, err := m.TrainTensors(s.SelectBatches)
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
		seq := seqs[st.Seq[n]]
		p := int(st.Pos[n])
		return d.Tokenizer.DecodeString(seq[max(0, p-s.WindowBefore):min(len(seq), p+s.WindowAfter+1)])
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
	top := s.TopContexts
	if s.Rule == RuleMass {
		top = st.N // every activation
	}
	per := topContexts(st.Indices, st.Acts, st.TopK, st.K, top)
	all := make([]int, st.K)
	for i := range all {
		all[i] = i
	}
	rows, err := m.Signatures(all)
	if err != nil {
		return err
	}
	sig := slices.Concat(rows...) // [K, V]
	V := m.Config.Model.VocabSize
	toks := keywordTokens(d.Tokenizer.Encode, kw, d.Train.Texts)
	sigHits, promoted := signatureHits(sig, V, toks, min(s.SignatureTokens, V))
	switch s.Rule {
	case RuleSignature:
		res.Selected = nil
		for i, h := range sigHits {
			if h >= s.MinHitRate {
				res.Selected = append(res.Selected, SelectedPrototype{Prototype: i, HitRate: h, Contexts: len(per[i])})
			}
		}
	default:
		res.Selected = selectPrototypes(per, s.MinContexts, s.MinHitRate, s.Rule == RuleMass, hit)
	}
	res.Omega = []int{}
	for i := range res.Selected {
		p := res.Selected[i].Prototype
		if len(per[p]) > 0 {
			res.Selected[i].Example = window(per[p][0].tok)
		}
		for _, v := range promoted[p] {
			res.Selected[i].Promoted = append(res.Selected[i].Promoted, d.Tokenizer.DecodeString([]int32{v}))
		}
		res.Omega = append(res.Omega, p)
	}
	return nil
}

// SplitWords splits text into words: maximal runs of letters and digits ("<|eos|>" gives "eos").
func SplitWords(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// KeywordRates scores texts by keyword hits: rate is the mean over texts with at least one word of the fraction
// of their words that are keywords, rateSE its standard error; anyRate the fraction of texts with at least one
// keyword, anySE its standard error; words the total word count.
func KeywordRates(texts, keywords []string) (rate, rateSE, anyRate, anySE float64, words int) {
	set := map[string]bool{}
	for _, k := range keywords {
		set[k] = true
	}
	var fr, anyHit []float64
	for _, t := range texts {
		ws := SplitWords(t)
		hits := 0
		for _, w := range ws {
			if set[w] {
				hits++
			}
		}
		words += len(ws)
		if hits > 0 {
			anyHit = append(anyHit, 1)
		} else {
			anyHit = append(anyHit, 0)
		}
		if len(ws) > 0 {
			fr = append(fr, float64(hits)/float64(len(ws)))
		}
	}
	rate, rateSE = meanSE(fr)
	anyRate, anySE = meanSE(anyHit)
	return rate, rateSE, anyRate, anySE, words
}

// meanSE is stats.MeanSE with 0 in place of its NaNs (the mean of no value, the error of fewer than two), so that
// results stay JSON-encodable.
func meanSE(xs []float64) (mean, se float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	if len(xs) < 2 {
		return stats.Mean(xs), 0
	}
	return stats.MeanSE(xs)
}

// activation is one (activation, token) pair of a prototype's top contexts.
type activation struct {
	a   float64
	tok int
}

// topContexts returns, per prototype, its up to `top` largest positive activations over N tokens (indices
// [N·k], acts [N·k]), by decreasing activation (ties: earlier token first).
func topContexts(indices []int32, acts []float64, k, K, top int) [][]activation {
	per := make([][]activation, K)
	for n := 0; n < len(indices)/k; n++ {
		for j := range k {
			if a := acts[n*k+j]; a > 0 {
				i := indices[n*k+j]
				per[i] = append(per[i], activation{a, n})
			}
		}
	}
	for i := range per {
		sort.SliceStable(per[i], func(x, y int) bool { return per[i][x].a > per[i][y].a })
		if len(per[i]) > top {
			per[i] = per[i][:top]
		}
	}
	return per
}

// selectPrototypes applies the keyword rule: prototype i is in Ω when it has at least minContexts contexts and a
// share ≥ minHit of them (weighted by activation when byMass) satisfies hit(token). It returns the selection in
// increasing prototype order.
func selectPrototypes(per [][]activation, minContexts int, minHit float64, byMass bool,
	hit func(tok int) bool) []SelectedPrototype {
	var out []SelectedPrototype
	for i, ctxs := range per {
		if len(ctxs) < minContexts {
			continue
		}
		h, total := 0.0, 0.0
		for _, c := range ctxs {
			w := 1.0
			if byMass {
				w = c.a
			}
			total += w
			if hit(c.tok) {
				h += w
			}
		}
		if r := h / total; r >= minHit {
			out = append(out, SelectedPrototype{Prototype: i, HitRate: r, Contexts: len(ctxs)})
		}
	}
	return out
}

// keywordTokens returns the tokens that begin a keyword and no other word, in increasing order: the first token of
// encode(" "+w) for every keyword w (words follow a space in running text), less the first tokens of every other
// word of texts (the training documents). A keyword whose first token also starts other words (" m" of " market")
// has no token of its own and is left out: a logit signature cannot promote it without promoting the others.
func keywordTokens(encode func(string) []int32, keywords, texts []string) []int32 {
	set := map[string]bool{}
	for _, w := range keywords {
		set[w] = true
	}
	first := map[int32]bool{}
	for _, w := range keywords {
		if e := encode(" " + w); len(e) > 0 {
			first[e[0]] = true
		}
	}
	seen := map[string]bool{}
	for _, text := range texts {
		for _, w := range SplitWords(text) {
			if set[w] || seen[w] {
				continue
			}
			seen[w] = true
			if e := encode(" " + w); len(e) > 0 {
				delete(first, e[0])
			}
		}
	}
	out := make([]int32, 0, len(first))
	for v := range first {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// signatureHits returns, per prototype, the fraction of the top tokens its logit signature promotes most (the
// largest entries of sig[i], sig [K, V] row-major; ties: lower token first) that are in toks, and those tokens.
// Unlike the softmax share it does not depend on ‖p_i‖.
func signatureHits(sig []float64, V int, toks []int32, top int) (hits []float64, promoted [][]int32) {
	in := make([]bool, V)
	for _, v := range toks {
		in[v] = true
	}
	K := len(sig) / V
	hits, promoted = make([]float64, K), make([][]int32, K)
	for i := range K {
		n := 0
		for _, v := range stats.TopK(sig[i*V:(i+1)*V], top) {
			promoted[i] = append(promoted[i], int32(v))
			if in[v] {
				n++
			}
		}
		hits[i] = float64(n) / float64(top)
	}
	return hits, promoted
}
