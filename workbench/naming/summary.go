package naming

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/protolab/protolab/workbench/stats"
)

// MeanSD is a mean with the sample standard deviation over N values.
type MeanSD struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	N    int     `json:"n"`
}

// String formats the mean and deviation with three and two significant digits ("1.2e-06 ± 3.4e-07"), so that a
// tiny quantity (a Jensen–Shannon divergence of 1e-6) is not printed as 0.000 ± 0.000.
func (m MeanSD) String() string {
	return strconv.FormatFloat(m.Mean, 'g', 3, 64) + " ± " + strconv.FormatFloat(m.SD, 'g', 2, 64)
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

// KindSummary aggregates the scores of one unit kind (doc.go, "Summaries").
type KindSummary struct {
	Kind            string  `json:"kind"`
	Units           int     `json:"units"`
	Disentanglement MeanSD  `json:"disentanglement"`
	Coverage        MeanSD  `json:"coverage"`
	NumThemes       MeanSD  `json:"num_themes"`
	NamedFraction   float64 `json:"named_fraction"` // fraction of units that are named
	// LabelsNamed is the fraction of the concept labels (Summarize's concepts: a catch-all label such as "none"
	// left out) that name at least one unit of this kind; ConceptsNamed the fraction of concepts (the part of a label before "=") one of whose labels does.
	LabelsNamed   float64 `json:"labels_named"`
	ConceptsNamed float64 `json:"concepts_named"`
}

// ConceptOf returns the concept of a label "concept=value" (the label itself when it has no "=").
func ConceptOf(label string) string {
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
		families[ConceptOf(c)] = true
		if named[c] {
			n++
			namedFamilies[ConceptOf(c)] = true
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
