package generation

import (
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/eval"
)

// DistinctNs are the n of the distinct-n measures a Row reports.
var DistinctNs = []int{1, 2, 3}

// ReferenceName is the Row name of the held-out text continuations.
const ReferenceName = "reference"

// Config configures the generation samples and their quality measures. Start from DefaultConfig.
type Config struct {
	Sample      eval.SampleConfig `json:"sample"`       // temperature, top-k, new tokens (stop_token -1 means EOS)
	NumSamples  int               `json:"num_samples"`  // prompts, from validation documents; > 0
	PromptWords int               `json:"prompt_words"` // leading words of a validation document per prompt; > 0
	RepetitionN int               `json:"repetition_n"` // n of the repetition rate; > 0
}

// DefaultConfig is eight prompts of four words, each continued by 32 sampled tokens (eval.DefaultSampleConfig
// otherwise), and the repetition rate of 4-grams.
func DefaultConfig() Config {
	s := eval.DefaultSampleConfig()
	s.MaxNewTokens = 32
	return Config{Sample: s, NumSamples: 8, PromptWords: 4, RepetitionN: 4}
}

// Validate reports the first problem of the configuration, naming its key.
func (g Config) Validate() error {
	if err := g.Sample.Validate(); err != nil {
		return errors.WithMessage(err, "sample")
	}
	switch {
	case g.NumSamples <= 0:
		return errors.Errorf("num_samples=%d, want > 0", g.NumSamples)
	case g.PromptWords <= 0:
		return errors.Errorf("prompt_words=%d, want > 0", g.PromptWords)
	case g.RepetitionN <= 0:
		return errors.Errorf("repetition_n=%d, want > 0", g.RepetitionN)
	}
	return nil
}

// Sample is one generation: a prompt and the model's continuation.
type Sample struct {
	Prompt     string `json:"prompt"`
	Completion string `json:"completion"`
}

// Row holds the quality measures of one model's samples (or of the reference continuations).
type Row struct {
	Name     string    `json:"name"`     // the mixer, or ReferenceName
	Run      string    `json:"run"`      // the run the samples come from ("" for the reference)
	Distinct []float64 `json:"distinct"` // distinct-n for n in DistinctNs
	// Repetition is seq-rep-n with n = RepetitionN.
	Repetition  float64 `json:"repetition"`
	RepetitionN int     `json:"repetition_n"`
	// JudgePerplexity is the perplexity of the continuations given their prompts under the judge (Result.Judge),
	// over JudgeTokens tokens; 0 when there are none.
	JudgePerplexity float64  `json:"judge_perplexity"`
	JudgeTokens     int      `json:"judge_tokens"`
	TokensPerS      float64  `json:"tokens_per_s"` // generation speed (prompt and new tokens; includes compilation)
	Samples         []Sample `json:"samples"`
}

// Result compares the samples of several models with held-out text, judged by one model: in experiments/architecture,
// each mixer's first-seed model of the primary comparison, judged by the one of lowest validation loss.
type Result struct {
	Judge           string  `json:"judge"`            // run name of the judge
	JudgeValidation float64 `json:"judge_validation"` // the judge's own validation perplexity
	Rows            []Row   `json:"rows"`             // one per model, then ReferenceName
}

// Measure samples from each model on prompts made of the first cfg.PromptWords words of the judge's validation
// documents (Prompts), and measures distinct-n, seq-rep-n and the perplexity of the continuations under the judge.
// The reference row applies the same measures to the true continuations of the prompts in the packed validation
// stream (the rest of the document, then the following ones), cut to cfg.Sample.MaxNewTokens tokens. Every model
// must share the judge's data (its validation split and tokenizer settings).
func Measure(gc Config, judge *lm.Model, models []*lm.Model) (*Result, error) {
	prep, err := judge.Data()
	if err != nil {
		return nil, err
	}
	prompts, rests, docs := Prompts(prep.Val.Texts, gc.NumSamples, gc.PromptWords)
	if len(prompts) == 0 {
		return nil, errors.Errorf("generation.Measure: no validation document has more than %d words; lower "+
			"prompt_words", gc.PromptWords)
	}
	g := &Result{Judge: judge.Config.Name(), JudgeValidation: judge.Result.Val.Perplexity}
	measure := func(name, runName string, completions []string) (Row, error) {
		row := Row{Name: name, Run: runName, Repetition: RepetitionRate(completions, gc.RepetitionN),
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
	for _, m := range models {
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
		ids := EncodeText(judge.Tokenizer, r)
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
		return 0, 0, errors.New("generation: the judge's tokenizer has no <|eos|> token")
	}
	rows := make([][]int32, len(prompts))
	from, to := make([]int, len(prompts)), make([]int, len(prompts))
	width := 2
	for i := range prompts {
		p, c := judge.Tokenizer.Encode(prompts[i]), EncodeText(judge.Tokenizer, conts[i])
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
