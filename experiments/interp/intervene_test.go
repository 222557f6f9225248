package interp

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSelectPrototype_HandCase: three prototypes, two targets. Target 0: prototype 1 lowers it most (−30%) but
// moves perplexity by 2%, so the selective choice under a 1% bound is prototype 2 (−10%); target 1: prototype 0
// (−5%) is both. With no prototype under the bound, selective is −1. Equal ΔProb: the lower index.
func TestSelectPrototype_HandCase(t *testing.T) {
	prob := [][]float64{{-0.05, -0.05}, {-0.30, 0.01}, {-0.10, 0}}
	ppl := []float64{0.005, 0.02, -0.009}
	best, sel := SelectPrototype(prob, ppl, 0, 0.01)
	require.Equal(t, []int{1, 2}, []int{best, sel})
	best, sel = SelectPrototype(prob, ppl, 1, 0.01)
	require.Equal(t, []int{0, 0}, []int{best, sel})
	best, sel = SelectPrototype(prob, ppl, 0, 0.001)
	require.Equal(t, []int{1, -1}, []int{best, sel})
	best, sel = SelectPrototype([][]float64{{-0.1}, {-0.1}}, []float64{0, 0}, 0, 0.01)
	require.Equal(t, []int{0, 0}, []int{best, sel})
}

// TestBestSelective_HandCase: the most negative held-out ΔProb among targets with a selective prototype whose
// held-out |ΔPPL| is under the bound; a larger drop with ΔPPL over the bound, or with no selective prototype, does
// not count.
func TestBestSelective_HandCase(t *testing.T) {
	iv := &Intervention{Effects: []TargetEffect{
		{Target: "a", Selective: "L0 P1", SelectiveProb: -0.12, SelectivePPL: 0.004},
		{Target: "b", Selective: "L1 P0", SelectiveProb: -0.40, SelectivePPL: 0.011},
		{Target: "c", Selective: "", SelectiveProb: -0.90},
		{Target: "d", Selective: "L1 P3", SelectiveProb: -0.20, SelectivePPL: -0.009},
	}}
	require.Equal(t, "d", BestSelective(iv, 0.01).Target)
	require.Equal(t, "b", BestSelective(iv, 0.02).Target)
	require.Nil(t, BestSelective(iv, 0.001))
}

// TestBuildEvalSet_NextWord checks the word occurrences the interventions score: a position with nextWord k > 0
// predicts the first of k tokens that decode to one whole word ending inside the sequence (a space, then
// letters, then no letter; or the full stop), and every such word start within the sequence is found; some words span several
// tokens. The calibration and held-out splits come from disjoint halves of the validation stream.
func TestBuildEvalSet_NextWord(t *testing.T) {
	_, prep, es := tinySyntheticEvalSet(t)
	isLetter := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	dec := func(o int) string { return prep.Tokenizer.DecodeString([]int32{es.stream[o]}) }
	multi, words := 0, 0
	for n, k := range es.nextWord {
		o, pos := es.offset[n], n%es.T
		first := dec(o + 1)
		prev := dec(o)
		starts := len(first) > 1 && first[0] == ' ' && isLetter(first[1]) ||
			isLetter(first[0]) && (prev == "" || !isLetter(prev[len(prev)-1]))
		if k == 0 {
			// Not a word start, or a word that runs past the sequence's last target.
			if starts {
				k := 1 // the word's tokens: the first, then those continuing it with a letter
				for o+1+k < len(es.stream) && isLetter(dec(o + 1 + k)[0]) {
					k++
				}
				require.Greater(t, pos+k, es.T, "a word start inside the sequence at input %d (%q) was missed", n, first)
			}
			continue
		}
		if first == "." && k == 1 {
			continue // the full stop is a word of the synthetic grammar (labelled none)
		}
		require.True(t, starts, "input %d: %q does not start a word", n, first)
		require.LessOrEqual(t, pos+k, es.T, "the word ends within the sequence")
		var w strings.Builder
		for i := 1; i <= k; i++ {
			piece := dec(o + i)
			if i > 1 {
				require.True(t, isLetter(piece[0]), "input %d: token %d of the word is %q", n, i, piece)
			}
			w.WriteString(piece)
		}
		require.False(t, isLetter(dec(o + k + 1)[0]), "input %d: the word %q goes on", n, w.String())
		words++
		if k > 1 {
			multi++
		}
	}
	require.Greater(t, words, 100)
	require.Positive(t, multi, "some words span several tokens")

	cfg := Tiny()
	cal, held, err := interventionSplits(prep, Synthetic(), cfg)
	require.NoError(t, err)
	half := prep.ValSeqs.NumSequences() / 2 * es.T
	for _, o := range cal.offset {
		require.Less(t, o, half)
	}
	for _, o := range held.offset {
		require.GreaterOrEqual(t, o, half)
	}
	require.Equal(t, cfg.Intervene.Sequences*es.T, cal.N())
	require.Equal(t, cfg.Intervene.HeldOut*es.T, held.N())
}

// TestProbFloor_AttainedExactly: two occurrences (one word of one token, one of two) among ten scored positions
// (share 0.2). Lowering each word's probability by the factor 1 + ProbFloor(0.2, 1%) and touching nothing else gives
// ΔProb = the floor and ΔPPL = 1% exactly (Effect); any further drop moves perplexity past the bound. Hand values:
// ProbFloor(0.5, 21%) = 1.21⁻² − 1, and a target with no occurrence has floor −1.
func TestProbFloor_AttainedExactly(t *testing.T) {
	require.InDelta(t, 1/1.4641-1, ProbFloor(0.5, 0.21), 1e-15)
	require.Equal(t, -1.0, ProbFloor(0, 0.01))
	floor := ProbFloor(0.2, 0.01)
	require.InDelta(t, math.Pow(1.01, -5)-1, floor, 1e-15)
	base := []float64{-1, -2, -0.5, -3, -1, -2, -0.1, -4, -1, -1}
	occ := [][]Occurrence{{{Pos: 0, Len: 1}, {Pos: 3, Len: 2}}}
	lower := func(factor float64) []float64 {
		lp := append([]float64(nil), base...)
		lp[0] += math.Log(factor)
		lp[3] += math.Log(factor) / 2
		lp[4] += math.Log(factor) / 2
		return lp
	}
	dProb, dPPL := Effect(base, lower(1+floor), occ)
	require.InDelta(t, floor, dProb[0], 1e-12)
	require.InDelta(t, 0.01, dPPL, 1e-12)
	_, dPPL = Effect(base, lower(1+floor-0.01), occ)
	require.Greater(t, dPPL, 0.01)
}

// TestClassLoss_HandCase: positions 0–3 with losses raised by 0.2, 0.4, 0, −0.1 nats; class {0, 1} has mean 0.3,
// class {2, 3} −0.05, the overlapping class {1} 0.4, an empty class 0.
func TestClassLoss_HandCase(t *testing.T) {
	base := []float64{-1, -1, -2, -0.5}
	lp := []float64{-1.2, -1.4, -2, -0.4}
	got := ClassLoss(base, lp, [][]int{{0, 1}, {2, 3}, {1}, nil})
	want := []float64{0.3, -0.05, 0.4, 0}
	for c := range want {
		require.InDelta(t, want[c], got[c], 1e-12, "class %d", c)
	}
}

// TestPositionClasses_HandCase: five positions whose targets carry {gender=male}, {gender=male, number=plural},
// {none}, {} and {country=Egypt}: the classes are gender, number, country (first appearance among the label
// names) and other; a token with two concepts is in both classes, and "none" and unlabelled tokens are other.
func TestPositionClasses_HandCase(t *testing.T) {
	es := &evalSet{tokens: &Tokens{Names: []string{"gender=male", "number=plural", NoneLabel, "country=Egypt"}},
		next: [][]int32{{0}, {0, 1}, {2}, {}, {3}}}
	classes, share, pos := positionClasses(es, 5)
	require.Equal(t, []string{"gender", "number", "country", ClassOther}, classes)
	require.Equal(t, [][]int{{0, 1}, {1}, {4}, {2, 3}}, pos)
	require.Equal(t, []float64{0.4, 0.2, 0.2, 0.4}, share)
	_, _, pos = positionClasses(es, 2)
	require.Equal(t, [][]int{{0, 1}, {1}, nil, nil}, pos, "only the first n positions")
}

// TestClassSelectivity_HandCase: three prototypes, classes gender (a quarter of the positions) and other. Prototype
// 1 costs gender tokens 0.4 nats and the others 0.02, so its mean loss change is 0.25·0.4 + 0.75·0.02 and
// ClassSelectivity recovers Outside = 0.02 from its ΔPPL (excess 0.38); prototype 0 costs gender 0.1 and nothing
// else (excess 0.1); prototype 2, a hub, costs every token 0.6 (excess 0) and is not chosen although it costs gender
// most. The gender targets' occurrences are 3% + 2% of the positions, so the concept's floor is ProbFloor(0.05, 1%);
// number's do not count.
func TestClassSelectivity_HandCase(t *testing.T) {
	iv := &Intervention{Prototypes: []string{"L0 P0", "L0 P1", "L0 P2"}, Classes: []string{"gender", ClassOther},
		ClassShare: []float64{0.25, 0.75}, MaxPPLChange: 0.01,
		Effects: []TargetEffect{{Target: "gender=male", Share: 0.03}, {Target: "number=plural", Share: 0.4},
			{Target: "gender=female", Share: 0.02}},
		Sweeps: []Sweep{{Kind: InterveneWrite, ClassLoss: [][]float64{{0.1, 0}, {0.4, 0.02}, {0.6, 0.6}},
			PPL: []float64{math.Expm1(0.025), math.Expm1(0.25*0.4 + 0.75*0.02), math.Expm1(0.6)}}}}
	got := ClassSelectivity(iv)
	require.Len(t, got, 1)
	require.Equal(t, "gender", got[0].Class)
	require.Equal(t, "L0 P1", got[0].Prototype)
	require.InDelta(t, 0.4, got[0].Loss, 1e-15)
	require.InDelta(t, 0.02, got[0].Outside, 1e-12)
	require.InDelta(t, ProbFloor(0.05, 0.01), got[0].Floor, 1e-12)
	require.Nil(t, ClassSelectivity(nil))
	require.Equal(t, 0.0, OutsideLoss(1, 0.3, 0.5), "a class of every position leaves nothing outside")
}
