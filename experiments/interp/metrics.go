package interp

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/stats"
)

// Tokens is the labelled evaluation set the units are scored on: N tokens, each with its document and the labels
// it carries (doc.go, "Labels").
type Tokens struct {
	Names []string  // [L] label names, e.g. "gender=female"
	Of    [][]int32 // [N] the label ids each token carries, ascending and distinct; empty for none
	Doc   []int32   // [N] the document of each token
}

// N returns the number of tokens.
func (ts *Tokens) N() int { return len(ts.Of) }

// Validate reports the first inconsistency: length mismatch, an out-of-range or repeated label id.
func (ts *Tokens) Validate() error {
	if len(ts.Doc) != len(ts.Of) {
		return errors.Errorf("interp.Tokens: %d documents for %d tokens", len(ts.Doc), len(ts.Of))
	}
	for n, ls := range ts.Of {
		for i, l := range ls {
			if l < 0 || int(l) >= len(ts.Names) || (i > 0 && l <= ls[i-1]) {
				return errors.Errorf("interp.Tokens: token %d has labels %v, want ascending ids in [0, %d)", n, ls,
					len(ts.Names))
			}
		}
	}
	return nil
}

// Counts returns, per label, the number of tokens carrying it: [L].
func (ts *Tokens) Counts() []int {
	c := make([]int, len(ts.Names))
	for _, ls := range ts.Of {
		for _, l := range ls {
			c[l]++
		}
	}
	return c
}

// BaseRates returns b_ℓ, the fraction of all tokens carrying each label: [L].
func (ts *Tokens) BaseRates() []float64 {
	b := make([]float64, len(ts.Names))
	for l, c := range ts.Counts() {
		b[l] = float64(c) / float64(max(1, ts.N()))
	}
	return b
}

// TopTokens returns the indices of the k largest activations, largest first (ties: the lower index first). With
// onePerDoc only the largest activation of each document is eligible, so fewer than k indices come back when
// there are fewer than k documents. NaN activations are never selected. acts and doc have one entry per token.
func TopTokens(acts []float64, doc []int32, k int, onePerDoc bool) []int {
	idx := make([]int, 0, len(acts))
	for i, a := range acts {
		if !math.IsNaN(a) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return acts[idx[a]] > acts[idx[b]] })
	out := make([]int, 0, k)
	seen := map[int32]bool{}
	for _, i := range idx {
		if len(out) == k {
			break
		}
		if onePerDoc {
			if seen[doc[i]] {
				continue
			}
			seen[doc[i]] = true
		}
		out = append(out, i)
	}
	return out
}

// NullTokens returns the top set of a null unit: k tokens drawn uniformly at random, from k distinct random
// documents when onePerDoc (a uniformly chosen token of each), else without replacement from all tokens.
func NullTokens(doc []int32, k int, onePerDoc bool, rng *rand.Rand) []int {
	if !onePerDoc {
		perm := rng.Perm(len(doc))
		return perm[:min(k, len(perm))]
	}
	byDoc := map[int32][]int{}
	var docs []int32
	for i, d := range doc {
		if _, ok := byDoc[d]; !ok {
			docs = append(docs, d)
		}
		byDoc[d] = append(byDoc[d], i)
	}
	rng.Shuffle(len(docs), func(a, b int) { docs[a], docs[b] = docs[b], docs[a] })
	out := make([]int, 0, k)
	for _, d := range docs[:min(k, len(docs))] {
		toks := byDoc[d]
		out = append(out, toks[rng.IntN(len(toks))])
	}
	return out
}

// ScoreParams are the thresholds of naming and of the theme count (EvalConfig).
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

// Score is the automatic name and the metrics of one unit (doc.go, "Metrics").
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

// MeanSD is a mean with the sample standard deviation over N values.
type MeanSD struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	N    int     `json:"n"`
}

// NewMeanSD returns stats.Mean and stats.StdDev (n − 1 denominator) of xs, with 0 in place of their NaNs (a mean of
// no value, a deviation of fewer than two) so that results stay JSON-encodable.
func NewMeanSD(xs []float64) MeanSD {
	m := MeanSD{N: len(xs)}
	if len(xs) > 0 {
		m.Mean = stats.Mean(xs)
	}
	if len(xs) > 1 {
		m.SD = stats.StdDev(xs)
	}
	return m
}

// KindSummary aggregates the scores of one unit kind (doc.go, "Metrics").
type KindSummary struct {
	Kind            string  `json:"kind"`
	Units           int     `json:"units"`
	Disentanglement MeanSD  `json:"disentanglement"`
	Coverage        MeanSD  `json:"coverage"`
	NumThemes       MeanSD  `json:"num_themes"`
	NamedFraction   float64 `json:"named_fraction"` // fraction of units that are named
	// LabelsNamed is the fraction of the concept labels (NoneLabel excluded) that name at least one unit of this
	// kind; ConceptsNamed the fraction of concepts (the part of a label before "=") one of whose labels does.
	LabelsNamed   float64 `json:"labels_named"`
	ConceptsNamed float64 `json:"concepts_named"`
}

// conceptOf returns the concept of a label "concept=value" (the label itself when it has no "=").
func conceptOf(label string) string {
	if i := strings.IndexByte(label, '='); i >= 0 {
		return label[:i]
	}
	return label
}

// Summarize aggregates scores over the units of one kind; concepts lists the labels LabelsNamed counts.
func Summarize(kind string, scores []Score, concepts []string) KindSummary {
	var dis, cov, th []float64
	named := map[string]bool{}
	nNamed := 0
	for _, s := range scores {
		dis = append(dis, s.Disentanglement)
		cov = append(cov, s.Coverage)
		th = append(th, float64(s.NumThemes))
		if s.Named {
			nNamed++
			named[s.Label] = true
		}
	}
	k := KindSummary{Kind: kind, Units: len(scores), Disentanglement: NewMeanSD(dis), Coverage: NewMeanSD(cov),
		NumThemes: NewMeanSD(th)}
	if len(scores) > 0 {
		k.NamedFraction = float64(nNamed) / float64(len(scores))
	}
	n := 0
	families, namedFamilies := map[string]bool{}, map[string]bool{}
	for _, c := range concepts {
		families[conceptOf(c)] = true
		if named[c] {
			n++
			namedFamilies[conceptOf(c)] = true
		}
	}
	if len(concepts) > 0 {
		k.LabelsNamed = float64(n) / float64(len(concepts))
		k.ConceptsNamed = float64(len(namedFamilies)) / float64(len(families))
	}
	return k
}

// Column returns column f of a row-major [N, F] matrix.
func Column(acts []float64, F, f int) []float64 {
	N := len(acts) / F
	out := make([]float64, N)
	for n := range out {
		out[n] = acts[n*F+f]
	}
	return out
}

// SelectFeatures returns the indices of the k features (columns of a row-major [N, F] matrix) with the largest
// activation variance (byFrequency false) or the largest firing frequency, the fraction of rows with an
// activation > 0 (byFrequency true); ties go to the lower index. Features that never fire are never selected, so
// fewer than k may come back.
func SelectFeatures(acts []float64, F, k int, byFrequency bool) []int {
	N := len(acts) / F
	score := make([]float64, F)
	fires := make([]bool, F)
	for f := range F {
		mean, sq, freq := 0.0, 0.0, 0
		for n := range N {
			a := acts[n*F+f]
			mean += a
			sq += a * a
			if a > 0 {
				freq++
			}
		}
		fires[f] = freq > 0
		mean /= float64(N)
		if byFrequency {
			score[f] = float64(freq) / float64(N)
		} else {
			score[f] = sq/float64(N) - mean*mean
		}
	}
	idx := make([]int, 0, F)
	for f := range F {
		if fires[f] {
			idx = append(idx, f)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return score[idx[a]] > score[idx[b]] })
	idx = idx[:min(k, len(idx))]
	slices.Sort(idx)
	return idx
}
