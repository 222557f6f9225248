package prism

import (
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/influence"
	"github.com/protolab/protolab/workbench/stats"
)

// Query is a query: [T+1] tokens and the weight of each predicted position's cross-entropy (1 on the completion, 0
// on the prompt and padding).
type Query struct {
	Tokens  []int32
	Weights []float64
}

// ValidationQueries returns the validation sequences offset, …, offset+n−1 (those that exist) as queries, their
// first promptTokens predicted positions excluded (weight 0). It fails when offset leaves none.
func (a *Attributor) ValidationQueries(offset, n, promptTokens int) ([]Query, error) {
	vs := a.data.ValSeqs
	n = min(n, vs.NumSequences()-offset)
	if n < 1 {
		return nil, errors.Errorf("attribution: query_offset=%d leaves no query among %d validation sequences; want "+
			"query_offset < %d", offset, vs.NumSequences(), vs.NumSequences())
	}
	qs := make([]Query, n)
	for i := range qs {
		row := vs.Sequence(offset + i)
		w := make([]float64, len(row)-1)
		for t := promptTokens; t < len(w); t++ {
			w[t] = 1
		}
		qs[i] = Query{row, w}
	}
	return qs, nil
}

// textQuery tokenizes "prompt|completion" (or a text without "|", all of whose predictable tokens are attributed)
// into a query row of T+1 tokens: longer texts keep their last T+1 tokens, shorter ones are padded with EOS at
// weight 0. It fails when no token is left to attribute.
func (a *Attributor) textQuery(text string) (Query, error) {
	prompt, completion, split := strings.Cut(text, "|")
	if !split {
		prompt, completion = "", text
	}
	tok := a.data.Tokenizer
	p, c := tok.Encode(prompt), tok.Encode(completion)
	toks := append(append([]int32(nil), p...), c...)
	first := len(p) // index of the first attributed token
	if first == 0 {
		first = 1
	}
	T1 := a.Model.Config.Data.SeqLen + 1
	if len(toks) > T1 {
		drop := len(toks) - T1
		toks, first = toks[drop:], max(1, first-drop)
	}
	row := make([]int32, T1)
	w := make([]float64, T1-1)
	copy(row, toks)
	for i := len(toks); i < T1; i++ {
		row[i] = a.data.EOS
	}
	n := 0
	for i := first; i < len(toks); i++ {
		w[i-1] = 1
		n++
	}
	if n == 0 {
		return Query{}, errors.Errorf("attribution: query %q leaves no token to attribute (give at least two "+
			"tokens, or a non-empty completion after \"|\")", text)
	}
	return Query{row, w}, nil
}

// codeColumns runs one forward pass on the query and returns the columns g_{q,j} = Σ_t c_t a_{t,j} u_t of its
// attributed tokens (codes held fixed, cross-entropy only: option B).
func (a *Attributor) codeColumns(q Query) ([]int32, [][]float64, error) {
	h, err := a.graphs.runHead([][]int32{q.Tokens}, 1, nil, false, false, a.Config.Seed, noNoise)
	if err != nil {
		return nil, nil, err
	}
	D, k := h.D, h.k
	var idx []int32
	var acts, u []float64
	for t, w := range q.Weights {
		if w == 0 {
			continue
		}
		idx = append(idx, h.idx[t*k:(t+1)*k]...)
		acts = append(acts, widen(h.acts[t*k:(t+1)*k])...)
		for _, v := range h.u[t*D : (t+1)*D] {
			u = append(u, w*float64(v))
		}
	}
	cols, g := influence.ColumnGradients(D, k, idx, acts, u)
	return cols, g, nil
}

// routeColumns runs the head's forward and backward pass on the query and returns the columns of the gradient of
// its attributed cross-entropy with respect to the bank, routing term ∂a/∂P included (option A).
func (a *Attributor) routeColumns(q Query) ([]int32, [][]float64, error) {
	h, err := a.graphs.runHead([][]int32{q.Tokens}, 1, [][]float64{q.Weights}, false, true, a.Config.Seed, noNoise)
	if err != nil {
		return nil, nil, err
	}
	cols, _, ce := slotColumns(h, 0)
	return cols, ce, nil
}

// cachedQuery scores one query with a cached method (the table in doc.go): the query's gradient columns (option B
// from one forward pass; option A from the head's forward and backward pass), their preconditioning, and the
// postings of the matching cache. Scores are divided by N_tok.
func (a *Attributor) cachedQuery(q Query, method string) ([]float64, error) {
	route := routedMethod(method)
	var cols []int32
	var g [][]float64
	var err error
	if route {
		cols, g, err = a.routeColumns(q)
	} else {
		cols, g, err = a.codeColumns(q)
	}
	if err != nil {
		return nil, err
	}
	switch method {
	case MethodExactCE, MethodPrismFullC:
		if cols, g, err = a.Curvature.SolveColumns(cols, g); err != nil {
			return nil, errors.WithMessage(err, "attribution: full co-usage solve")
		}
	case MethodPrism, MethodExactCEDiagC:
		for n, j := range cols {
			g[n] = a.Blocks.Apply(int(j), g[n])
		}
	case MethodPrismDot:
	default:
		return nil, errors.Errorf("attribution: %q is not a cached method", method)
	}
	var scores []float64
	if route {
		scores = a.Columns.Scores(cols, g)
	} else {
		scores = a.Cache.Scores(cols, g)
	}
	return scaleScores(scores, 1/float64(a.NumTokens)), nil
}

// cachedBytes returns the memory a cached method scores from: its cache and its preconditioner.
func (a *Attributor) cachedBytes(method string) int64 {
	switch method {
	case MethodExactCE:
		return a.Columns.Bytes() + a.Curvature.Bytes()
	case MethodExactCEDiagC:
		return a.Columns.Bytes() + a.Blocks.Bytes()
	case MethodPrismFullC:
		return a.Cache.Bytes() + a.Curvature.Bytes()
	case MethodPrism:
		return a.Cache.Bytes() + a.Blocks.Bytes()
	}
	return a.Cache.Bytes()
}

// scaleScores multiplies x by c in place and returns it.
func scaleScores(x []float64, c float64) []float64 {
	for i := range x {
		x[i] *= c
	}
	return x
}

// Hit is one ranked training sequence.
type Hit struct {
	Seq   int     `json:"seq"`   // index in the corpus (the packed training sequence number)
	Score float64 `json:"score"` // influence / N_tok; positive = helpful
	Text  string  `json:"text"`  // the decoded sequence
}

// QueryLength returns the number of tokens of a text query ("prompt|completion", or a text without "|") and the
// most a query row holds, window = data.seq_len + 1: Query keeps only the last window tokens of a longer query.
func (a *Attributor) QueryLength(text string) (tokens, window int) {
	prompt, completion, split := strings.Cut(text, "|")
	if !split {
		prompt, completion = "", text
	}
	tok := a.data.Tokenizer
	return len(tok.Encode(prompt)) + len(tok.Encode(completion)), a.Model.Config.Data.SeqLen + 1
}

// Query ranks the corpus for a text query ("prompt|completion": the completion's cross-entropy is attributed; a
// text without "|" attributes every token after the first) with one of Methods and returns the top sequences,
// highest score first. EK-FAC factors and the reference are fitted on first use.
func (a *Attributor) Query(text, method string, top int) ([]Hit, error) {
	q, err := a.textQuery(text)
	if err != nil {
		return nil, err
	}
	scores, err := a.Scores([]Query{q}, method)
	if err != nil {
		return nil, err
	}
	var hits []Hit
	for _, s := range stats.TopK(scores[0], top) {
		hits = append(hits, Hit{Seq: s, Score: scores[0][s], Text: string(a.data.Tokenizer.Decode(a.Corpus[s]))})
	}
	return hits, nil
}

// Scores returns [query][corpus sequence] scores of a method (one of Methods).
func (a *Attributor) Scores(qs []Query, method string) ([][]float64, error) {
	out := make([][]float64, len(qs))
	var err error
	switch method {
	case MethodPrism, MethodPrismFullC, MethodPrismDot, MethodExactCE, MethodExactCEDiagC:
		for i, q := range qs {
			if out[i], err = a.cachedQuery(q, method); err != nil {
				return nil, err
			}
		}
	case MethodReference:
		if err := a.fitReference(); err != nil {
			return nil, err
		}
		for i, q := range qs {
			if out[i], err = a.referenceQuery(q); err != nil {
				return nil, err
			}
		}
	case MethodEKFAC, MethodGradDot:
		if err := a.fitBlockEKFAC(); err != nil {
			return nil, err
		}
		ek, gd, _, err := a.blockScores(qs)
		if err != nil {
			return nil, err
		}
		if method == MethodEKFAC {
			return ek, nil
		}
		return gd, nil
	case MethodEKFACBank:
		if err := a.fitBankEKFAC(); err != nil {
			return nil, err
		}
		return a.bankScores(qs)
	default:
		return nil, errors.Errorf("attribution: unknown method %q; want one of %s", method, strings.Join(Methods, ", "))
	}
	return out, nil
}
