package naming

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// handTokens is a 10-token set with labels A, B, C carried by 4, 2 and 1 tokens (base rates 0.4, 0.2, 0.1), in
// five documents of two tokens.
func handTokens() *Tokens {
	return &Tokens{
		Names: []string{"A", "B", "C"},
		Of:    [][]int32{{0}, {0}, {0}, {0, 1}, {1}, {}, {}, {2}, {}, {}},
		Doc:   []int32{0, 0, 1, 1, 2, 2, 3, 3, 4, 4},
	}
}

func TestTokens_CountsAndBaseRates(t *testing.T) {
	ts := handTokens()
	require.NoError(t, ts.Validate())
	require.Equal(t, []int{4, 2, 1}, ts.Counts())
	require.InDeltaSlice(t, []float64{0.4, 0.2, 0.1}, ts.BaseRates(), 1e-15)
	bad := handTokens()
	bad.Of[3] = []int32{1, 0}
	require.Error(t, bad.Validate())
}

// TestScoreUnit_HandCase scores a unit whose top tokens are 0–4: A is carried by 4 of 5 (p = 0.8, e = (0.8 −
// 0.4)/0.6 = 2/3), B by 2 (p = 0.4, e = (0.4 − 0.2)/0.8 = 1/4), C by none (e < 0).
func TestScoreUnit_HandCase(t *testing.T) {
	ts := handTokens()
	base := ts.BaseRates()
	s := ScoreUnit([]int{0, 1, 2, 3, 4}, ts, base, ScoreParams{MinPurity: 0.5, Alpha: 0.3, ThemeExcess: 0.25})
	require.Equal(t, "A", s.Label)
	require.Equal(t, 5, s.K)
	require.InDelta(t, 0.8, s.Purity, 1e-15)
	require.InDelta(t, 0.8, s.Coverage, 1e-15)
	require.InDelta(t, 2.0/3, s.Excess, 1e-15)
	require.InDelta(t, (2.0/3)/(2.0/3+0.25), s.Disentanglement, 1e-15) // 8/11
	require.Equal(t, 2, s.NumThemes)                                   // A and B reach θ = 0.25
	// 3 eligible labels × Pr[Bin(5, 0.4) ≥ 4] = 3·(5·0.4⁴·0.6 + 0.4⁵).
	require.InDelta(t, 3*(5*math.Pow(0.4, 4)*0.6+math.Pow(0.4, 5)), s.PValue, 1e-12)
	require.True(t, s.Named)
	require.Equal(t, []LabelShare{{"A", 0.8, 0.4}, {"B", 0.4, 0.2}}, s.Top)

	strict := ScoreUnit([]int{0, 1, 2, 3, 4}, ts, base, ScoreParams{MinPurity: 0.5, Alpha: 0.01, ThemeExcess: 0.25})
	require.False(t, strict.Named, "p = 0.26 is not significant at 0.01")
	pure := ScoreUnit([]int{0, 1, 2, 3, 4}, ts, base, ScoreParams{MinPurity: 0.9, Alpha: 0.3, ThemeExcess: 0.25})
	require.False(t, pure.Named, "purity 0.8 < 0.9")
}

// TestScoreUnit_OneLabelIsFullyDisentangled: top tokens carrying only C give D = 1, C = 1, one theme.
func TestScoreUnit_OneLabelIsFullyDisentangled(t *testing.T) {
	ts := handTokens()
	s := ScoreUnit([]int{7}, ts, ts.BaseRates(), ScoreParams{MinPurity: 0.5, Alpha: 1, ThemeExcess: 0.25})
	require.Equal(t, "C", s.Label)
	require.Equal(t, 1.0, s.Disentanglement)
	require.Equal(t, 1.0, s.Coverage)
	require.Equal(t, 1.0, s.Excess)
	require.Equal(t, 1, s.NumThemes)
	require.InDelta(t, 3*0.1, s.PValue, 1e-15) // Pr[Bin(1, 0.1) ≥ 1] = 0.1, times 3 labels
}

// TestScoreUnit_NoLabel: top tokens without labels give no label and zero metrics.
func TestScoreUnit_NoLabel(t *testing.T) {
	ts := handTokens()
	s := ScoreUnit([]int{5, 6, 8}, ts, ts.BaseRates(), ScoreParams{MinPurity: 0.5, Alpha: 1, ThemeExcess: 0.25})
	require.Equal(t, "", s.Label)
	require.Zero(t, s.Disentanglement)
	require.Zero(t, s.Coverage)
	require.Zero(t, s.NumThemes)
	require.Equal(t, 1.0, s.PValue)
	require.False(t, s.Named)
	require.Equal(t, Score{}, ScoreUnit(nil, ts, ts.BaseRates(), ScoreParams{}))
}

func TestTopTokens_OnePerDocTiesAndNaN(t *testing.T) {
	acts := []float64{5, 9, 9, 1, 7, math.NaN()}
	doc := []int32{0, 0, 1, 1, 2, 3}
	require.Equal(t, []int{1, 2, 4}, TopTokens(acts, doc, 3, true))
	require.Equal(t, []int{1, 2, 4}, TopTokens(acts, doc, 5, true), "doc 3 holds only NaN; docs 0 and 1 are used")
	require.Equal(t, []int{1, 2}, TopTokens(acts, doc, 2, false))
	require.Equal(t, []int{1, 2, 4, 0, 3}, TopTokens(acts, doc, 9, false))
}

func TestNullTokens_OnePerDoc(t *testing.T) {
	doc := []int32{0, 0, 0, 1, 2, 2, 3, 4, 4, 4}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		top := NullTokens(doc, 3, true, rng)
		require.Len(t, top, 3)
		seen := map[int32]bool{}
		for _, i := range top {
			require.False(t, seen[doc[i]], "two tokens of document %d", doc[i])
			seen[doc[i]] = true
		}
	}
	require.Len(t, NullTokens(doc, 9, true, rng), 5, "only five documents")
	require.Len(t, NullTokens(doc, 9, false, rng), 9)
}

func TestSummarize_HandCase(t *testing.T) {
	scores := []Score{
		{Label: "x=A", Named: true, Disentanglement: 1, Coverage: 0.8, NumThemes: 1},
		{Label: "x=A", Named: true, Disentanglement: 0.5, Coverage: 0.6, NumThemes: 2},
		{Label: "y=B", Named: false, Disentanglement: 0, Coverage: 0.1, NumThemes: 3},
	}
	k := Summarize("null", scores, []string{"x=A", "x=C", "y=B", "z=E"})
	require.Equal(t, "null", k.Kind)
	require.Equal(t, 3, k.Units)
	require.InDelta(t, 0.5, k.Disentanglement.Mean, 1e-15)
	require.InDelta(t, 0.5, k.Disentanglement.SD, 1e-15) // values 1, 0.5, 0: sd 0.5
	require.InDelta(t, 0.5, k.Coverage.Mean, 1e-15)
	require.InDelta(t, 2, k.NumThemes.Mean, 1e-15)
	require.InDelta(t, 2.0/3, k.NamedFraction, 1e-15)
	require.InDelta(t, 0.25, k.LabelsNamed, 1e-15)    // only x=A names a unit, of 4 labels (y=B's unit is not named)
	require.InDelta(t, 1.0/3, k.ConceptsNamed, 1e-15) // concept x, of x, y and z
}

func TestSelectFeatures_VarianceAndFrequency(t *testing.T) {
	// Columns over N = 4 rows: f0 = [0,0,0,4] (variance 3, frequency ¼), f1 = [1,1,1,1] (0, 1),
	// f2 = [0,2,0,2] (1, ½), f3 never fires.
	acts := []float64{
		0, 1, 0, 0,
		0, 1, 2, 0,
		0, 1, 0, 0,
		4, 1, 2, 0,
	}
	require.Equal(t, []int{0, 2}, SelectFeatures(acts, 4, 2, false))
	require.Equal(t, []int{1, 2}, SelectFeatures(acts, 4, 2, true))
	require.Equal(t, []int{0, 1, 2}, SelectFeatures(acts, 4, 4, true), "f3 never fires")
	require.Equal(t, []float64{0, 0, 0, 4}, Column(acts, 4, 0))
}

func TestNewMeanSD(t *testing.T) {
	m := NewMeanSD([]float64{1, 2, 3, 4})
	require.InDelta(t, 2.5, m.Mean, 1e-15)
	require.InDelta(t, math.Sqrt(5.0/3), m.SD, 1e-15)
	require.Equal(t, MeanSD{Mean: 7, N: 1}, NewMeanSD([]float64{7}))
	require.Equal(t, MeanSD{}, NewMeanSD(nil))
}

func TestConceptOf(t *testing.T) {
	require.Equal(t, "gender", ConceptOf("gender=female"))
	require.Equal(t, "none", ConceptOf("none"))
	require.Equal(t, "a", ConceptOf("a=b=c"))
}

// A tiny mean keeps its digits: a Jensen–Shannon divergence of ~1e-6 printed as 0.000 ± 0.000 while its chart
// showed 1e-6.
func TestMeanSD_StringKeepsTinyValues(t *testing.T) {
	require.Equal(t, "1.23e-06 ± 4.6e-07", MeanSD{Mean: 1.234e-6, SD: 4.56e-7}.String())
	require.Equal(t, "0.5 ± 0.12", MeanSD{Mean: 0.5, SD: 0.1234}.String())
	require.Equal(t, "0 ± 0", MeanSD{}.String())
}
