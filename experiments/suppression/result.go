package suppression

import (
	"fmt"
	"strings"

	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// ModeResult holds the measurements under one mode. Rates are means over samples; SEs are sample standard
// deviations over √n.
type ModeResult struct {
	Mode string `json:"mode"`
	// ConceptRate is the mean over samples of the fraction of generated words that are keywords (samples with no
	// word are left out); AnyRate the fraction of samples with at least one keyword.
	ConceptRate   float64 `json:"concept_rate"`
	ConceptRateSE float64 `json:"concept_rate_se"`
	AnyRate       float64 `json:"any_rate"`
	AnyRateSE     float64 `json:"any_rate_se"`
	Words         int     `json:"words"` // generated words over all samples
	// JudgePerplexity is the perplexity of the completions (up to and including the end-of-document token)
	// given their prompts under the unsuppressed model: a generation-quality proxy.
	JudgePerplexity float64 `json:"judge_perplexity"`
	// OtherPerplexity is the perplexity on validation documents without a keyword, ConceptPerplexity on those
	// with one, and ValPerplexity on both together (spec §10's validation perplexity).
	OtherPerplexity   float64 `json:"other_perplexity"`
	ConceptPerplexity float64 `json:"concept_perplexity"`
	ValPerplexity     float64 `json:"val_perplexity"`
	// Reduction is 1 − ConceptRate/ConceptRate(none); OtherChange is OtherPerplexity/OtherPerplexity(none) − 1
	// and ValChange likewise (0 when the reference is 0). Perplexities are 0 when there is no text of that kind.
	Reduction   float64  `json:"reduction"`
	OtherChange float64  `json:"other_change"`
	ValChange   float64  `json:"val_change"`
	Examples    []string `json:"examples"` // the first completions
}

// ModelRun is the suppression study on one PRISM model.
type ModelRun struct {
	// Label is ModelRecipe or ModelSpecRange; Seed the model's training seed; Run its name (lm.Config.Name).
	Label string `json:"label"`
	Seed  uint64 `json:"seed"`
	Run   string `json:"run"`
	// K, D, TopK and Steps describe the model: bank size, width, prototypes per token, training updates.
	K     int `json:"k"`
	D     int `json:"d"`
	TopK  int `json:"top_k"`
	Steps int `json:"steps"`
	// Keywords are the concept's words.
	Keywords []string `json:"keywords"`
	// Omega is the suppressed set Ω (bank indices, sorted); Selected details the keyword selection (empty when
	// Settings.Prototypes gave Ω).
	Omega    []int                      `json:"omega"`
	Selected []mprism.SelectedPrototype `json:"selected"`
	// BaseHitRate is the keyword hit rate over all scanned contexts (every token): the rate a prototype unrelated
	// to the concept would show.
	BaseHitRate float64 `json:"base_hit_rate"`
	// OtherTokens and ConceptTokens count the predicted tokens of the two perplexities; OtherActive and
	// ConceptActive are the fractions of them where some i ∈ Ω was active (selected, a > 0) unsuppressed.
	OtherTokens   int          `json:"other_tokens"`
	ConceptTokens int          `json:"concept_tokens"`
	OtherActive   float64      `json:"other_active"`
	ConceptActive float64      `json:"concept_active"`
	Modes         []ModeResult `json:"modes"` // Modes order
	Seconds       float64      `json:"seconds"`
}

// Mode returns the measurements of the named mode, or nil.
func (r *ModelRun) Mode(name string) *ModeResult {
	for i := range r.Modes {
		if r.Modes[i].Mode == name {
			return &r.Modes[i]
		}
	}
	return nil
}

// String is one model's report: Ω and one line per mode.
func (r *ModelRun) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, seed %d): |Ω| = %d %v (base hit rate %.3f); Ω active on %.3f of other-text and %.3f "+
		"of concept-text tokens\n", r.Run, r.Label, r.Seed, len(r.Omega), r.Omega, r.BaseHitRate, r.OtherActive,
		r.ConceptActive)
	fmt.Fprintf(&b, "%-5s %14s %14s %9s %9s %9s %9s %9s %9s\n", "mode", "concept rate", "any rate", "cut",
		"PPL other", "Δ other", "Δ val", "PPL conc.", "PPL judge")
	for _, m := range r.Modes {
		fmt.Fprintf(&b, "%-5s %7.4f±%.4f %7.3f±%.3f %8.1f%% %9.3f %+8.2f%% %+8.2f%% %9.3f %9.3f\n", m.Mode,
			m.ConceptRate, m.ConceptRateSE, m.AnyRate, m.AnyRateSE, 100*m.Reduction, m.OtherPerplexity,
			100*m.OtherChange, 100*m.ValChange, m.ConceptPerplexity, m.JudgePerplexity)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// CorpusResult is the study on one corpus: one ModelRun per model (label × training seed) and, per label, the
// mean ± s.e. over training seeds.
type CorpusResult struct {
	// Source is the corpus the models trained and were evaluated on (data.source); "" in results stored before
	// protocol v2, which ran on the synthetic corpus.
	Source string `json:"corpus,omitempty"`
	// Concept names how the concept is defined there (Settings.ConceptOn: "topic=food", "WordNet noun.food").
	Concept string     `json:"concept,omitempty"`
	Runs    []ModelRun `json:"runs"`
	// Summaries has one entry per model label, in Models order.
	Summaries []Summary `json:"summaries"`
}

// CorpusName returns the corpus of the result: Source, or the synthetic corpus for a result stored before v2.
func (r *CorpusResult) CorpusName() string {
	if r.Source == "" {
		return lmdata.SourceSynthetic
	}
	return r.Source
}

// Summary returns the summary of the model label, or nil.
func (r *CorpusResult) Summary(label string) *Summary {
	for i := range r.Summaries {
		if r.Summaries[i].Label == label {
			return &r.Summaries[i]
		}
	}
	return nil
}

// Result is the suppression study: on the first corpus (data.source; its fields at the top level, what the figures
// of notebooks/20_prism.ipynb show), then on each further corpus of corpora, run alone.
type Result struct {
	Provenance *run.Provenance `json:"provenance"`
	// Config is the suppression settings as run (with the held-back seeds when HeldBack is set).
	Config   Settings `json:"config"`
	HeldBack bool     `json:"held_back"` // the evaluation is the held-back one
	CorpusResult
	// Others are the study on corpora[1:], in order (the Brown corpus in Small).
	Others  []CorpusResult `json:"other_corpora,omitempty"`
	Seconds float64        `json:"seconds"`
}

// Corpora returns the result of every corpus, the first corpus's first.
func (r *Result) Corpora() []CorpusResult {
	return append([]CorpusResult{r.CorpusResult}, r.Others...)
}

// Corpus returns the result on corpus source, or nil when the study did not run on it (a result stored before
// protocol v2 ran on the synthetic corpus and is found as such).
func (r *Result) Corpus(source string) *CorpusResult {
	return lmdata.FindCorpus(&r.CorpusResult, r.Others, (*CorpusResult).CorpusName, source)
}

// String is the study's report: per corpus and model label the mean ± s.e. over seeds of each mode, then every run.
func (r *Result) String() string {
	var b strings.Builder
	ev := "protocol evaluation"
	if r.HeldBack {
		ev = "held-back evaluation"
	}
	for i, c := range r.Corpora() {
		if i > 0 {
			b.WriteString("\n")
		}
		concept := c.Concept
		if concept == "" {
			concept = r.Config.Concept + "=" + r.Config.Value
		}
		fmt.Fprintf(&b, "corpus %s: suppression of %s by rule %q ≥ %.2f (%s; mean ± s.e. over training seeds)\n",
			c.CorpusName(), concept, r.Config.Rule, r.Config.MinHitRate, ev)
		for _, s := range c.Summaries {
			b.WriteString(s.String())
			b.WriteString("\n")
		}
		for i := range c.Runs {
			b.WriteString(c.Runs[i].String())
			b.WriteString("\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
