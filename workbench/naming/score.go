package naming

import (
	"math"
	"sort"

	"github.com/protolab/protolab/workbench/stats"
)

// ScoreParams are the thresholds of naming and of the theme count (doc.go (6), (8)).
type ScoreParams struct {
	MinPurity   float64 // a named unit's label has purity ≥ MinPurity
	Alpha       float64 // and a Bonferroni-corrected binomial p-value ≤ Alpha
	ThemeExcess float64 // θ of the theme count
}

// LabelShare is one label among a unit's top tokens.
type LabelShare struct {
	Label  string  `json:"label"`
	Purity float64 `json:"purity"` // fraction of the top tokens carrying it
	Base   float64 `json:"base"`   // fraction of all tokens carrying it
}

// Score is the automatic name and the metrics of one unit (doc.go (1)–(8)).
type Score struct {
	// Label is the unit's label: the one with the largest excess purity, "" when no label is over-represented.
	Label string `json:"label"`
	// Purity is p_ℓ* and Coverage equals it: the fraction of top tokens the label explains.
	Purity   float64 `json:"purity"`
	Coverage float64 `json:"coverage"`
	// Excess is e_ℓ* = (p − b)/(1 − b), 0 at chance and 1 when every top token carries the label.
	Excess float64 `json:"excess"`
	// PValue is Pr[Bin(K, b_ℓ*) ≥ K·p_ℓ*] times the number of labels (Bonferroni), capped at 1.
	PValue float64 `json:"p_value"`
	// Named: Purity ≥ MinPurity and PValue ≤ Alpha.
	Named bool `json:"named"`
	// Disentanglement is e_ℓ* / Σ_ℓ max(e_ℓ, 0), 0 when no label is over-represented.
	Disentanglement float64 `json:"disentanglement"`
	// NumThemes counts the labels with e_ℓ ≥ θ.
	NumThemes int `json:"num_themes"`
	// K is the number of top tokens scored.
	K int `json:"k"`
	// Top lists the three labels of highest purity (the label distribution of the top tokens).
	Top []LabelShare `json:"top"`
}

// ScoreUnit names and scores a unit from its top tokens (indices into ts) against the labels' base rates
// (ts.BaseRates()). Labels with base rate 0 or 1 cannot be over-represented and are skipped. An empty top set
// gives the zero Score.
func ScoreUnit(top []int, ts *Tokens, base []float64, p ScoreParams) Score {
	K := len(top)
	s := Score{K: K}
	if K == 0 {
		return s
	}
	counts := make([]int, len(ts.Names))
	for _, n := range top {
		for _, l := range ts.Of[n] {
			counts[l]++
		}
	}
	eligible := 0
	for _, b := range base {
		if b > 0 && b < 1 {
			eligible++
		}
	}
	best, bestExcess, sumExcess := -1, 0.0, 0.0
	for l, c := range counts {
		b := base[l]
		if !(b > 0 && b < 1) {
			continue
		}
		pur := float64(c) / float64(K)
		e := (pur - b) / (1 - b)
		if e >= p.ThemeExcess {
			s.NumThemes++
		}
		if e > 0 {
			sumExcess += e
			if e > bestExcess {
				best, bestExcess = l, e
			}
		}
	}
	order := make([]int, len(counts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return counts[order[a]] > counts[order[b]] })
	for _, l := range order[:min(3, len(order))] {
		if counts[l] > 0 {
			s.Top = append(s.Top, LabelShare{Label: ts.Names[l], Purity: float64(counts[l]) / float64(K), Base: base[l]})
		}
	}
	if best < 0 {
		s.PValue = 1
		return s
	}
	s.Label = ts.Names[best]
	s.Purity = float64(counts[best]) / float64(K)
	s.Coverage = s.Purity
	s.Excess = bestExcess
	s.Disentanglement = bestExcess / sumExcess
	s.PValue = math.Min(1, float64(eligible)*stats.BinomialTail(counts[best], K, base[best]))
	s.Named = s.Purity >= p.MinPurity && s.PValue <= p.Alpha
	return s
}
