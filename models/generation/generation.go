package architecture

import (
	"math"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/tokenizer"
)

// DistinctNs are the n of the distinct-n measures Generation reports.
var DistinctNs = []int{1, 2, 3}

// ReferenceName is the GenerationRow name of the held-out text continuations.
const ReferenceName = "reference"

// EOSToken is the name of the end-of-document token; generated document ends appear under this name in texts.
const EOSToken = "<|eos|>"

// Words splits a text into words at white space (punctuation stays attached), with every EOSToken a word of its
// own: the unit of the n-gram measures, independent of any tokenizer.
func Words(text string) []string {
	return strings.Fields(strings.ReplaceAll(text, EOSToken, " "+EOSToken+" "))
}

// encodeText tokenizes text, turning each EOSToken into the end-of-document token rather than its characters.
func encodeText(tok *tokenizer.Tokenizer, text string) []int32 {
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
		panic(errors.Errorf("architecture.DistinctN: n=%d, want ≥ 1", n))
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
		panic(errors.Errorf("architecture.RepetitionRate: n=%d, want ≥ 1", n))
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
		return 0, 0, errors.Errorf("architecture.SpanPerplexity: %d rows, %d from, %d to", len(losses), len(from), len(to))
	}
	sum, n := 0.0, 0
	for r, row := range losses {
		if from[r] < 0 || to[r] > len(row) || from[r] > to[r] {
			return 0, 0, errors.Errorf("architecture.SpanPerplexity: row %d span [%d, %d) outside [0, %d)", r, from[r],
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

// Sample is one generation: a prompt and the model's continuation.
type Sample struct {
	Prompt     string `json:"prompt"`
	Completion string `json:"completion"`
}

// GenerationRow holds the quality measures of one model's samples (or of the reference continuations).
type GenerationRow struct {
	Name     string    `json:"name"`     // the mixer, or ReferenceName
	Run      string    `json:"run"`      // the run the samples come from ("" for the reference)
	Distinct []float64 `json:"distinct"` // distinct-n for n in DistinctNs
	// Repetition is seq-rep-n with n = RepetitionN.
	Repetition  float64 `json:"repetition"`
	RepetitionN int     `json:"repetition_n"`
	// JudgePerplexity is the perplexity of the continuations given their prompts under the judge (Generation.Judge),
	// over JudgeTokens tokens; 0 when there are none.
	JudgePerplexity float64  `json:"judge_perplexity"`
	JudgeTokens     int      `json:"judge_tokens"`
	TokensPerS      float64  `json:"tokens_per_s"` // generation speed (prompt and new tokens; includes compilation)
	Samples         []Sample `json:"samples"`
}

// Generation compares the samples of every mixer's top model with held-out text: in the study, each mixer's
// first-seed model of the primary comparison (Result.TopModels), judged by the one of lowest validation loss
// (Result.BestModel).
type Generation struct {
	Judge           string          `json:"judge"`            // run name of the judge
	JudgeValidation float64         `json:"judge_validation"` // the judge's own validation perplexity
	Rows            []GenerationRow `json:"rows"`             // one per mixer, then ReferenceName
}

// RunGeneration samples from each mixer's top sweep model (largest width and steps, first seed) on prompts made of
// the first generate.prompt_words words of validation documents, and measures distinct-n, seq-rep-n and the
// perplexity of the continuations under the best model of the sweep. The reference row applies the same measures
// to the true continuations of the prompts, cut to generate.sample.max_new_tokens tokens. The models are opened
// from their run folders when sw was loaded from a stored result.
func RunGeneration(cfg Config, sw *Sweep) (*Generation, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tops, err := sw.TopModels()
	if err != nil {
		return nil, err
	}
	if len(tops) == 0 {
		return nil, errors.New("architecture.RunGeneration: the sweep has no runs")
	}
	best, err := sw.BestModel()
	if err != nil {
		return nil, err
	}
	return generate(cfg.Generate, best, tops)
}

func generate(gc GenerateConfig, judge *lm.Model, tops []*lm.Model) (*Generation, error) {
	prep, err := judge.Data()
	if err != nil {
		return nil, err
	}
	prompts, rests, docs := Prompts(prep.Val.Texts, gc.NumSamples, gc.PromptWords)
	if len(prompts) == 0 {
		return nil, errors.Errorf("architecture.RunGeneration: no validation document has more than %d words",
			gc.PromptWords)
	}
	g := &Generation{Judge: judge.Config.Name(), JudgeValidation: judge.Result.Val.Perplexity}
	measure := func(name, runName string, completions []string) (GenerationRow, error) {
		row := GenerationRow{Name: name, Run: runName, Repetition: RepetitionRate(completions, gc.RepetitionN),
			RepetitionN: gc.RepetitionN}
		for _, n := range DistinctNs {
			row.Distinct = append(row.Distinct, DistinctN(completions, n))
		}
		ppl, n, err := judgePerplexity(judge, prompts, completions)
		if err != nil {
			return row, err
		}
		if n > 0 {
			row.JudgePerplexity, row.JudgeTokens = ppl, n
		}
		for i := range prompts {
			row.Samples = append(row.Samples, Sample{Prompt: prompts[i], Completion: completions[i]})
		}
		return row, nil
	}
	for _, m := range tops {
		texts, _, stats, err := m.Generate(prompts, gc.Sample)
		if err != nil {
			return nil, errors.WithMessagef(err, "generating with %s", m.Config.Name())
		}
		row, err := measure(m.Config.Model.Mixer, m.Config.Name(), texts)
		if err != nil {
			return nil, err
		}
		row.TokensPerS = stats.TokensPerS
		g.Rows = append(g.Rows, row)
	}
	refs := make([]string, len(rests))
	for i, r := range rests {
		// The true continuation in the packed stream: the rest of the document, then the following ones.
		ids := encodeText(judge.Tokenizer, r)
		n := len(prep.Val.Texts)
		for j := (docs[i] + 1) % n; len(ids) < gc.Sample.MaxNewTokens; j = (j + 1) % n {
			ids = append(append(ids, prep.EOS), judge.Tokenizer.Encode(prep.Val.Texts[j])...)
		}
		refs[i] = judge.Tokenizer.DecodeString(ids[:gc.Sample.MaxNewTokens])
	}
	row, err := measure(ReferenceName, "", refs)
	if err != nil {
		return nil, err
	}
	g.Rows = append(g.Rows, row)
	return g, nil
}

// judgePerplexity returns the perplexity under judge of each continuation given its prompt: rows
// [EOS, prompt…, continuation…] (documents follow an EOS in the packed training stream), padded with EOS to one
// length, scored on the continuation's tokens only.
func judgePerplexity(judge *lm.Model, prompts, conts []string) (float64, int, error) {
	eos, ok := judge.Tokenizer.SpecialID(EOSToken)
	if !ok {
		return 0, 0, errors.New("architecture: the judge's tokenizer has no <|eos|> token")
	}
	rows := make([][]int32, len(prompts))
	from, to := make([]int, len(prompts)), make([]int, len(prompts))
	width := 2
	for i := range prompts {
		p, c := judge.Tokenizer.Encode(prompts[i]), encodeText(judge.Tokenizer, conts[i])
		rows[i] = append(append([]int32{eos}, p...), c...)
		from[i], to[i] = len(p), len(p)+len(c) // loss t predicts token t+1
		width = max(width, len(rows[i]))
	}
	for i := range rows {
		for len(rows[i]) < width {
			rows[i] = append(rows[i], eos)
		}
	}
	losses, err := judge.TokenLosses(rows)
	if err != nil {
		return 0, 0, err
	}
	return SpanPerplexity(losses, from, to)
}

// Prompts returns the first `words` words of each of the first n texts with more than `words` words, the rest of
// each such text (its true continuation, with a leading space) and the text's index.
func Prompts(texts []string, n, words int) (prompts, rests []string, docs []int) {
	for i, t := range texts {
		if len(prompts) == n {
			break
		}
		f := strings.Fields(t)
		if len(f) <= words {
			continue
		}
		prompts = append(prompts, strings.Join(f[:words], " "))
		rests = append(rests, " "+strings.Join(f[words:], " "))
		docs = append(docs, i)
	}
	return prompts, rests, docs
}
