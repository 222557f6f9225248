package generation

import (
	"math"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/tokenizer"
)

// EOSToken is the name of the end-of-document token; generated document ends appear under this name in texts.
const EOSToken = "<|eos|>"

// Words splits a text into words at white space (punctuation stays attached), with every EOSToken a word of its
// own: the unit of the n-gram measures, independent of any tokenizer.
func Words(text string) []string {
	return strings.Fields(strings.ReplaceAll(text, EOSToken, " "+EOSToken+" "))
}

// EncodeText tokenizes text, turning each EOSToken into the end-of-document token rather than its characters.
func EncodeText(tok *tokenizer.Tokenizer, text string) []int32 {
	eos, ok := tok.SpecialID(EOSToken)
	if !ok {
		return tok.Encode(text)
	}
	var ids []int32
	for i, part := range strings.Split(text, EOSToken) {
		if i > 0 {
			ids = append(ids, eos)
		}
		ids = append(ids, tok.Encode(part)...)
	}
	return ids
}

// ngrams returns the word n-grams of a text, each joined with a space.
func ngrams(text string, n int) []string {
	w := Words(text)
	var out []string
	for i := 0; i+n <= len(w); i++ {
		out = append(out, strings.Join(w[i:i+n], " "))
	}
	return out
}

// DistinctN returns distinct-n (Li et al., arXiv:1510.03055): the number of distinct word n-grams over all texts
// divided by the number of word n-grams over all texts; 0 when there are none. Panics if n < 1.
func DistinctN(texts []string, n int) float64 {
	if n < 1 {
		panic(errors.Errorf("generation.DistinctN: n=%d, want ≥ 1", n))
	}
	seen := map[string]bool{}
	total := 0
	for _, t := range texts {
		for _, g := range ngrams(t, n) {
			seen[g] = true
			total++
		}
	}
	if total == 0 {
		return 0
	}
	return float64(len(seen)) / float64(total)
}

// RepetitionRate returns seq-rep-n (Welleck et al., arXiv:1908.04319): for each text, the fraction of its word
// n-grams that repeat an earlier n-gram of the same text, 1 − distinct/total; averaged over the texts that have at
// least one n-gram (0 when none has). Panics if n < 1.
func RepetitionRate(texts []string, n int) float64 {
	if n < 1 {
		panic(errors.Errorf("generation.RepetitionRate: n=%d, want ≥ 1", n))
	}
	sum, count := 0.0, 0
	for _, t := range texts {
		g := ngrams(t, n)
		if len(g) == 0 {
			continue
		}
		seen := map[string]bool{}
		for _, x := range g {
			seen[x] = true
		}
		sum += 1 - float64(len(seen))/float64(len(g))
		count++
	}
	if count == 0 {
		return 0
	}
	return sum / float64(count)
}

// SpanPerplexity returns exp(Σ losses[r][t] / N) over the positions t in [from[r], to[r]) of every row r, and N,
// the number of such positions: the perplexity of chosen spans (a continuation after its prompt). losses[r][t]
// is the loss of predicting token t+1. It returns (NaN, 0) when no position is selected, and an error when a
// span lies outside its row.
func SpanPerplexity(losses [][]float64, from, to []int) (float64, int, error) {
	if len(from) != len(losses) || len(to) != len(losses) {
		return 0, 0, errors.Errorf("generation.SpanPerplexity: %d rows, %d from, %d to", len(losses), len(from),
			len(to))
	}
	sum, n := 0.0, 0
	for r, row := range losses {
		if from[r] < 0 || to[r] > len(row) || from[r] > to[r] {
			return 0, 0, errors.Errorf("generation.SpanPerplexity: row %d span [%d, %d) outside [0, %d)", r, from[r],
				to[r], len(row))
		}
		for t := from[r]; t < to[r]; t++ {
			sum += row[t]
			n++
		}
	}
	if n == 0 {
		return math.NaN(), 0, nil
	}
	return math.Exp(sum / float64(n)), n, nil
}
