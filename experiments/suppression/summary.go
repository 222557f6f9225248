package suppression

import (
	"fmt"
	"slices"
	"strings"

	"github.com/protolab/protolab/workbench/stats"
)

// Stat is a mean over training seeds with its standard error (sample standard deviation over √n; 0 for one seed).
type Stat struct {
	Mean float64 `json:"mean"`
	SE   float64 `json:"se"`
	N    int     `json:"n"`
}

// statOf returns the mean and standard error of xs.
func statOf(xs []float64) Stat {
	switch len(xs) {
	case 0:
		return Stat{}
	case 1:
		return Stat{Mean: xs[0], N: 1}
	}
	m, se := stats.MeanSE(xs)
	return Stat{Mean: m, SE: se, N: len(xs)}
}

// ModeSummary is one mode over the training seeds of a model label.
type ModeSummary struct {
	Mode              string `json:"mode"`
	ConceptRate       Stat   `json:"concept_rate"`
	AnyRate           Stat   `json:"any_rate"`
	Reduction         Stat   `json:"reduction"`
	OtherChange       Stat   `json:"other_change"`
	ValChange         Stat   `json:"val_change"`
	OtherPerplexity   Stat   `json:"other_perplexity"`
	ConceptPerplexity Stat   `json:"concept_perplexity"`
	ValPerplexity     Stat   `json:"val_perplexity"`
	JudgePerplexity   Stat   `json:"judge_perplexity"`
}

// Summary is the study on one model label (ModelRecipe or ModelSpecRange) over its training seeds.
type Summary struct {
	Label string   `json:"label"`
	Seeds []uint64 `json:"seeds"`
	// K, D, TopK and Steps describe the models; InSpecRange says whether K lies in spec §12's 8D–16D, and Note
	// says what the model is (bank size against the spec, and whether it is the quality study's model).
	K           int    `json:"k"`
	D           int    `json:"d"`
	TopK        int    `json:"top_k"`
	Steps       int    `json:"steps"`
	InSpecRange bool   `json:"in_spec_range"`
	Note        string `json:"note"`
	// Omega is |Ω|; OtherActive the fraction of other-text tokens where some i ∈ Ω is active.
	Omega       Stat          `json:"omega"`
	OtherActive Stat          `json:"other_active"`
	Modes       []ModeSummary `json:"modes"` // Modes order
}

// Mode returns the summary of the named mode, or nil.
func (s *Summary) Mode(name string) *ModeSummary {
	for i := range s.Modes {
		if s.Modes[i].Mode == name {
			return &s.Modes[i]
		}
	}
	return nil
}

// String is the summary's report: the model, then one line per mode (mean ± s.e. over seeds).
func (s *Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s model (%s), seeds %v: |Ω| = %.1f ± %.1f, Ω active on %.3f of other-text tokens\n", s.Label,
		s.Note, s.Seeds, s.Omega.Mean, s.Omega.SE, s.OtherActive.Mean)
	fmt.Fprintf(&b, "%-5s %16s %16s %16s %16s\n", "mode", "concept rate", "cut %", "Δ PPL other %", "Δ PPL val %")
	for _, m := range s.Modes {
		fmt.Fprintf(&b, "%-5s %8.4f ± %.4f %8.1f ± %4.1f %+8.2f ± %4.2f %+8.2f ± %4.2f\n", m.Mode, m.ConceptRate.Mean,
			m.ConceptRate.SE, 100*m.Reduction.Mean, 100*m.Reduction.SE, 100*m.OtherChange.Mean,
			100*m.OtherChange.SE, 100*m.ValChange.Mean, 100*m.ValChange.SE)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// summarise groups the runs by label (in order of first appearance) and averages each measurement over seeds.
func summarise(runs []ModelRun) []Summary {
	var labels []string
	for _, r := range runs {
		if !slices.Contains(labels, r.Label) {
			labels = append(labels, r.Label)
		}
	}
	out := make([]Summary, len(labels))
	for i, l := range labels {
		out[i] = summaryOf(l, runs)
	}
	return out
}

// summaryOf averages the runs with the given label.
func summaryOf(label string, runs []ModelRun) Summary {
	var group []*ModelRun
	for i := range runs {
		if runs[i].Label == label {
			group = append(group, &runs[i])
		}
	}
	g0 := group[0]
	s := Summary{Label: label, K: g0.K, D: g0.D, TopK: g0.TopK, Steps: g0.Steps, InSpecRange: inSpecRange(g0.K, g0.D),
		Note: modelNote(g0.K, g0.D, g0.TopK, g0.Steps)}
	over := func(f func(r *ModelRun) float64) Stat {
		xs := make([]float64, len(group))
		for i, r := range group {
			xs[i] = f(r)
		}
		return statOf(xs)
	}
	for _, r := range group {
		s.Seeds = append(s.Seeds, r.Seed)
	}
	s.Omega = over(func(r *ModelRun) float64 { return float64(len(r.Omega)) })
	s.OtherActive = over(func(r *ModelRun) float64 { return r.OtherActive })
	for j, mode := range Modes { // every run has every mode, in Modes order
		field := func(f func(m *ModeResult) float64) Stat {
			return over(func(r *ModelRun) float64 { return f(&r.Modes[j]) })
		}
		s.Modes = append(s.Modes, ModeSummary{Mode: mode,
			ConceptRate:       field(func(m *ModeResult) float64 { return m.ConceptRate }),
			AnyRate:           field(func(m *ModeResult) float64 { return m.AnyRate }),
			Reduction:         field(func(m *ModeResult) float64 { return m.Reduction }),
			OtherChange:       field(func(m *ModeResult) float64 { return m.OtherChange }),
			ValChange:         field(func(m *ModeResult) float64 { return m.ValChange }),
			OtherPerplexity:   field(func(m *ModeResult) float64 { return m.OtherPerplexity }),
			ConceptPerplexity: field(func(m *ModeResult) float64 { return m.ConceptPerplexity }),
			ValPerplexity:     field(func(m *ModeResult) float64 { return m.ValPerplexity }),
			JudgePerplexity:   field(func(m *ModeResult) float64 { return m.JudgePerplexity }),
		})
	}
	return s
}
