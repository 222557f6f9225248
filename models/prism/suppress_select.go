package prism

import (
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/stats"
)

// Keyword selection of prototypes (spec §10), for a prototype i with its top-activating training contexts c (a window
// of window_before tokens before and window_after after the activating position) and a keyword set W:
//
//	(1) "contexts":  hit_i = #{c ∈ top_contexts(i) : c contains a keyword} / |top_contexts(i)|
//	(2) "mass":      hit_i = Σ_{c ∋ keyword} a_c / Σ_c a_c        over every activation of i (our variant)
//	(3) "signature": hit_i = #{v ∈ TopK(W p_i, s) : v begins a keyword and no other word} / s,   s = signature_tokens
//	(4) Ω = {i : hit_i ≥ min_hit_rate and i has ≥ min_contexts contexts}

// Keyword selection rules of KeywordRule.Rule.
const (
	// RuleContexts is spec §10's rule: a prototype is selected when at least MinHitRate of its TopContexts most
	// activating contexts contain a keyword.
	RuleContexts = "contexts"
	// RuleMass (our variant) weighs every activation of a prototype over the scanned tokens: it is selected when
	// the share of its activation mass Σa on contexts with a keyword is at least MinHitRate. It favours
	// prototypes that are specific to the concept over ones that are broadly active but peak on it.
	RuleMass = "mass"
	// RuleSignature (our variant) reads the prototype's card instead of its contexts: it is selected when at
	// least MinHitRate of the SignatureTokens tokens its logit signature W p_i promotes most are keyword tokens
	// (tokens that begin a keyword and no other word of the training text). It uses the model only.
	RuleSignature = "signature"
)

// Rules lists the values of KeywordRule.Rule.
var Rules = []string{RuleContexts, RuleMass, RuleSignature}

// KeywordRule configures the keyword selection of the prototypes Ω (SelectByKeywords).
type KeywordRule struct {
	// Rule is RuleContexts ("contexts", spec §10), RuleMass ("mass") or RuleSignature ("signature").
	Rule string `json:"rule"`
	// TopContexts is the number of top-activating training contexts read per prototype (spec §10: 50; rule
	// "contexts"); > 0.
	TopContexts int `json:"top_contexts"`
	// SignatureTokens is the number of most promoted tokens read per prototype (rule "signature"); > 0, capped at V.
	SignatureTokens int `json:"signature_tokens"`
	// MinHitRate is the fraction of a prototype's top contexts (rule "contexts"), of its activation mass (rule
	// "mass") or of its most promoted tokens (rule "signature") that must hit a keyword (spec §10: 0.5); in [0, 1].
	MinHitRate float64 `json:"min_hit_rate"`
	// MinContexts is the least number of contexts (activations) a selected prototype has (fewer: too little
	// evidence); in [1, TopContexts].
	MinContexts int `json:"min_contexts"`
	// WindowBefore and WindowAfter are the tokens before and after an activating position that form its context
	// (WindowAfter = 1 includes the token the position predicts); ≥ 0.
	WindowBefore int `json:"window_before"`
	WindowAfter  int `json:"window_after"`
	// SelectBatches is the number of training batches scanned for top-activating contexts; > 0.
	SelectBatches int `json:"select_batches"`
}

// Validate reports the first problem of the rule, naming its key.
func (r KeywordRule) Validate() error {
	switch {
	case !slices.Contains(Rules, r.Rule):
		return errors.Errorf("rule=%q, want one of %q", r.Rule, Rules)
	case r.SignatureTokens <= 0:
		return errors.Errorf("signature_tokens=%d, want > 0", r.SignatureTokens)
	case r.TopContexts <= 0:
		return errors.Errorf("top_contexts=%d, want > 0", r.TopContexts)
	case !(r.MinHitRate >= 0 && r.MinHitRate <= 1):
		return errors.Errorf("min_hit_rate=%g, want in [0, 1]", r.MinHitRate)
	case r.MinContexts < 1 || r.MinContexts > r.TopContexts:
		return errors.Errorf("min_contexts=%d, want in [1, top_contexts=%d]", r.MinContexts, r.TopContexts)
	case r.WindowBefore < 0 || r.WindowAfter < 0:
		return errors.Errorf("window_before=%d, window_after=%d, want ≥ 0", r.WindowBefore, r.WindowAfter)
	case r.SelectBatches <= 0:
		return errors.Errorf("select_batches=%d, want > 0", r.SelectBatches)
	}
	return nil
}

// SelectedPrototype is one prototype of Ω chosen by keyword selection.
type SelectedPrototype struct {
	Prototype int `json:"prototype"`
	// HitRate is the share of its top contexts, activation mass or promoted tokens hitting a keyword.
	HitRate  float64 `json:"hit_rate"`
	Contexts int     `json:"contexts"` // contexts read (≤ TopContexts under rule "contexts")
	Example  string  `json:"example"`  // its most activating context
	// Promoted are the SignatureTokens tokens its signature W p_i promotes most, decoded (its card).
	Promoted []string `json:"promoted"`
}

// KeywordSelection is the outcome of SelectByKeywords.
type KeywordSelection struct {
	Omega    []int               // Ω: the selected prototypes, increasing
	Selected []SelectedPrototype // one per prototype of Ω, in the same order
	// BaseHitRate is the keyword hit rate over all scanned contexts (every token): the rate a prototype unrelated
	// to the concept would show.
	BaseHitRate float64
}

// SelectByKeywords chooses Ω by rule r for the keywords kw: from the top-activating contexts of the first
// r.SelectBatches training batches (rules "contexts" and "mass") or from the prototypes' logit signatures (rule
// "signature"); every selected prototype's card gets its most activating context and its most promoted tokens.
func SelectByKeywords(m *lm.Model, r KeywordRule, kw []string) (*KeywordSelection, error) {
	if err := r.Validate(); err != nil {
		return nil, errors.WithMessage(err, "prism.SelectByKeywords")
	}
	d, err := m.Data()
	if err != nil {
		return nil, err
	}
	batches, err := m.TrainTensors(r.SelectBatches)
	if err != nil {
		return nil, err
	}
	st, err := m.HeadStats(batches)
	if err != nil {
		return nil, err
	}
	var seqs [][]int32 // sequence s = batch·B + row, [T+1] tokens
	for _, b := range batches {
		B, T1 := b.Shape().Dim(0), b.Shape().Dim(1)
		flat := tensors.MustCopyFlatData[int32](b)
		for row := range B {
			seqs = append(seqs, flat[row*T1:(row+1)*T1])
		}
	}
	set := map[string]bool{}
	for _, k := range kw {
		set[k] = true
	}
	window := func(n int) string {
		seq := seqs[st.Seq[n]]
		p := int(st.Pos[n])
		return d.Tokenizer.DecodeString(seq[max(0, p-r.WindowBefore):min(len(seq), p+r.WindowAfter+1)])
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
	res := &KeywordSelection{BaseHitRate: float64(hits) / float64(st.N)}
	top := r.TopContexts
	if r.Rule == RuleMass {
		top = st.N // every activation
	}
	per := selectTopContexts(st.Indices, st.Acts, st.TopK, st.K, top)
	all := make([]int, st.K)
	for i := range all {
		all[i] = i
	}
	rows, err := m.Signatures(all)
	if err != nil {
		return nil, err
	}
	sig := slices.Concat(rows...) // [K, V]
	V := m.Config.Model.VocabSize
	toks := selectKeywordTokens(d.Tokenizer.Encode, kw, d.Train.Texts)
	sigHits, promoted := selectSignatureHits(sig, V, toks, min(r.SignatureTokens, V))
	switch r.Rule {
	case RuleSignature:
		for i, h := range sigHits {
			if h >= r.MinHitRate {
				res.Selected = append(res.Selected, SelectedPrototype{Prototype: i, HitRate: h, Contexts: len(per[i])})
			}
		}
	default:
		res.Selected = selectPrototypes(per, r.MinContexts, r.MinHitRate, r.Rule == RuleMass, hit)
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
	return res, nil
}

// SplitWords splits text into words: maximal runs of letters and digits ("<|eos|>" gives "eos").
func SplitWords(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// selectActivation is one (activation, token) pair of a prototype's top contexts.
type selectActivation struct {
	a   float64
	tok int
}

// selectTopContexts returns, per prototype, its up to `top` largest positive activations over N tokens (indices
// [N·k], acts [N·k]), by decreasing activation (ties: earlier token first).
func selectTopContexts(indices []int32, acts []float64, k, K, top int) [][]selectActivation {
	per := make([][]selectActivation, K)
	for n := 0; n < len(indices)/k; n++ {
		for j := range k {
			if a := acts[n*k+j]; a > 0 {
				i := indices[n*k+j]
				per[i] = append(per[i], selectActivation{a, n})
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
func selectPrototypes(per [][]selectActivation, minContexts int, minHit float64, byMass bool,
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

// selectKeywordTokens returns the tokens that begin a keyword and no other word, in increasing order: the first token
// of encode(" "+w) for every keyword w (words follow a space in running text), less the first tokens of every other
// word of texts (the training documents). A keyword whose first token also starts other words (" m" of " market")
// has no token of its own and is left out: a logit signature cannot promote it without promoting the others.
func selectKeywordTokens(encode func(string) []int32, keywords, texts []string) []int32 {
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

// selectSignatureHits returns, per prototype, the fraction of the top tokens its logit signature promotes most (the
// largest entries of sig[i], sig [K, V] row-major; ties: lower token first) that are in toks, and those tokens.
// Unlike the softmax share it does not depend on ‖p_i‖.
func selectSignatureHits(sig []float64, V int, toks []int32, top int) (hits []float64, promoted [][]int32) {
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
