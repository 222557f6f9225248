package baseline

import (
	"fmt"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/run"
)

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "baseline"

// Result is what the study measured: the model's training record, and samples from validation prompts.
type Result struct {
	Provenance *run.Provenance    `json:"provenance"`
	Model      *lm.Result         `json:"model"`      // history, validation perplexity, token counts
	Dir        string             `json:"dir"`        // the model's run folder ("" in memory)
	Samples    []Sample           `json:"samples"`    // generations from validation prompts
	Generation eval.GenerateStats `json:"generation"` // cost of generating Samples
}

// Sample is one generation.
type Sample struct {
	Prompt     string `json:"prompt"`
	Completion string `json:"completion"`
}

// Runs is the study's entry points (run.Entry): Runs.LoadOrRun(cfg) returns the result stored for cfg under
// run.Out or runs the study; Runs.Run(cfg) runs it even when a result is stored (the models it trains are loaded
// from run.Out/models when trained before); Runs.Notebook() and Runs.NotebookConfig() are what a notebook shows
// and starts its settings from at $PROTOLAB_PRESET (the study has no Quick preset: Small is what a notebook
// computes).
var Runs = run.Entry[Config, *Result]{Study: Study, Preset: Preset, Small: Small, Quick: Small, Compute: runStudy}

// runStudy trains (or loads) the model and samples from it.
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	prov.Seed = cfg.Seed
	m, err := lm.LoadOrTrain(cfg.Config, run.With(o))
	if err != nil {
		return nil, err
	}
	res := &Result{Provenance: prov, Model: m.Result, Dir: m.Dir}
	err = prov.Time("generate", func() (err error) {
		res.Samples, res.Generation, err = Samples(m, cfg)
		return err
	})
	return res, err
}

// Samples continues the first cfg.PromptWords words of the first cfg.NumSamples validation documents with m.
func Samples(m *lm.Model, cfg Config) ([]Sample, eval.GenerateStats, error) {
	if cfg.NumSamples == 0 {
		return nil, eval.GenerateStats{}, nil
	}
	d, err := m.Data()
	if err != nil {
		return nil, eval.GenerateStats{}, err
	}
	prompts := Prompts(d.Val.Texts, cfg.NumSamples, cfg.PromptWords)
	if len(prompts) == 0 {
		return nil, eval.GenerateStats{}, errors.New("baseline: no validation document to prompt with")
	}
	return Generate(m, prompts, cfg.Sample)
}

// Generate continues each prompt with m (lm.Model.Generate: each prompt starts a document); with sc.StopToken −1 a
// completion stops at the end of its document.
func Generate(m *lm.Model, prompts []string, sc eval.SampleConfig) ([]Sample, eval.GenerateStats, error) {
	if eos, ok := m.Tokenizer.SpecialID("<|eos|>"); ok && sc.StopToken < 0 {
		sc.StopToken = eos
	}
	completions, _, stats, err := m.Generate(prompts, sc)
	if err != nil {
		return nil, stats, err
	}
	out := make([]Sample, len(prompts))
	for i := range prompts {
		out[i] = Sample{Prompt: prompts[i], Completion: completions[i]}
	}
	return out, stats, nil
}

// Prompts returns the first `words` words of each of the first n texts (fewer when there are fewer texts).
func Prompts(texts []string, n, words int) []string {
	var out []string
	for _, t := range texts {
		if len(out) == n {
			break
		}
		f := strings.Fields(t)
		if len(f) == 0 {
			continue
		}
		out = append(out, strings.Join(f[:min(words, len(f))], " "))
	}
	return out
}

// String is the study's report: the model's size, data and perplexity, and the samples.
func (r *Result) String() string {
	var b strings.Builder
	m := r.Model
	fmt.Fprintf(&b, "params %d, tokens seen %d, validation loss %.4f, perplexity %.3f, training %.1f s\n",
		m.NumParams, m.Tokens.SeenInTrain, m.Val.Loss, m.Val.Perplexity, m.TrainSeconds())
	for _, s := range r.Samples {
		fmt.Fprintf(&b, "sample: %s|%s\n", s.Prompt, s.Completion)
	}
	return b.String()
}
