package interp

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/docs"
	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/report"
)

// paperSide is the paper's number of a docs row, as the scorecard reads it.
func paperSide(t *testing.T, id string) report.Paper {
	t.Helper()
	p, err := docs.Paper(id)
	require.NoError(t, err)
	return report.Paper{Value: p.Value, HasValue: p.HasValue(), Text: p.Text, Source: p.Source}
}

// unitsOf returns n units of a kind with the given label, named or not, and disentanglement d.
func unitsOf(kind string, n int, label string, named bool, d float64) []pair.Unit {
	var out []pair.Unit
	for i := range n {
		out = append(out, pair.Unit{Kind: kind, Index: i, Score: naming.Score{Label: label, Named: named,
			Disentanglement: d}})
	}
	return out
}

// handResult builds a result of len(masks) seeds on the synthetic corpus. Seed i's intervention has two targets:
// "a" with the more negative calibration ΔProb (−20%, so it is the chosen pair) and held-out effect masks[i] at
// held-out ΔPPL ppls[i], and "b" with a larger held-out drop (−40%) that the calibration split does not prefer.
// Every seed has the same units: prototypes 4 named with D 0.9 and one labelled none (D 1); heads 2 named with D
// 0.5, one named "none" and one unnamed; SAE top-variance 3 named with D 0.6; SAE top-frequency 3 named with D 0.95.
func handResult(masks, ppls []float64) *Result {
	r := &Result{}
	for i := range masks {
		var units []pair.Unit
		units = append(units, unitsOf(pair.KindProtoPi, 4, "gender=female", true, 0.9)...)
		units = append(units, unitsOf(pair.KindProtoPi, 1, naming.NoneLabel, true, 1)...)
		units = append(units, unitsOf(pair.KindHeads, 2, "topic=sport", true, 0.5)...)
		units = append(units, unitsOf(pair.KindHeads, 1, naming.NoneLabel, true, 1)...)
		units = append(units, unitsOf(pair.KindHeads, 1, "topic=sport", false, 0.2)...)
		units = append(units, unitsOf(pair.KindSAEVariance, 3, "number=plural", true, 0.6)...)
		units = append(units, unitsOf(pair.KindSAEFrequency, 3, "number=plural", true, 0.95)...)
		iv := &pair.Intervention{MaxPPLChange: 0.01, Effects: []pair.TargetEffect{
			{Target: "a", Selective: "L1 P2", SelectiveCalProb: -0.20, SelectiveProb: masks[i], SelectivePPL: ppls[i]},
			{Target: "b", Selective: "L0 P1", SelectiveCalProb: -0.10, SelectiveProb: -0.40, SelectivePPL: 0.001},
			{Target: "c", Selective: "", SelectiveCalProb: -0.90},
		}}
		seed := uint64(i + 1)
		cr := []*CorpusResult{{Source: ClaimSource, Seed: seed, UnitAnalysis: pair.UnitAnalysis{Units: units},
			Intervene: iv}}
		r.Seeds = append(r.Seeds, seed)
		if i == 0 {
			r.Corpora = cr
		} else {
			r.Replicates = append(r.Replicates, Replicate{Seed: seed, Corpora: cr})
		}
	}
	return r
}

func claimByID(t *testing.T, cs []report.Claim, id string) report.Claim {
	t.Helper()
	for _, c := range cs {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no claim %q", id)
	return report.Claim{}
}

// TestClaims_NilResult: without a result every claim is listed with a valid rule, an id of docs/spec/papers.md and
// no value: five rows on the synthetic corpus, then the same five ids on the Brown corpus, named so in their claims
// and methods.
func TestClaims_NilResult(t *testing.T) {
	cs := Claims(nil)
	require.Len(t, cs, 10)
	for i, c := range cs[:5] {
		require.Equal(t, c.ID, cs[5+i].ID)
		require.NotContains(t, c.Claim+c.Method, "Brown")
		require.Equal(t, "Brown corpus: "+c.Claim, cs[5+i].Claim)
		require.Contains(t, cs[5+i].Method, "Brown")
	}
	for _, c := range cs {
		require.NoError(t, c.Validate())
		require.NotEmpty(t, c.Claim)
		require.NotEmpty(t, c.Method)
		require.Equal(t, report.Estimate{}, c.Ours, c.ID)
		require.Empty(t, c.Untestable)
		_, err := docs.Paper(c.ID)
		require.NoError(t, err)
	}
}

// TestClaims_Masking: the chosen pair is the calibration's ("a", not the held-out best "b"); a seed whose chosen
// mask breaks the perplexity bound held out counts 0. Masks −10%, (−30% at ΔPPL 2% → 0), −20%: mean −10% with s.e.
// 10/√3 (sd 10 over three seeds): ours + 2 s.e. is above the paper's negative number, so not reproduced. Masks at
// twice the paper's effect with ±1 point spread are reproduced. One seed: not testable.
func TestClaims_Masking(t *testing.T) {
	paper := paperSide(t, "protot_writemask_female_women")
	require.Less(t, paper.Value, 0.0, "the paper's effect is a drop")

	c := claimByID(t, Claims(handResult([]float64{-0.10, -0.30, -0.20}, []float64{0.005, 0.02, -0.009})),
		"protot_writemask_female_women")
	require.NoError(t, c.Validate())
	require.Empty(t, c.Untestable)
	require.Equal(t, 3, c.Ours.Seeds)
	require.Equal(t, "%", c.Ours.Unit)
	require.InDelta(t, -10, c.Ours.Value, 1e-12)
	require.InDelta(t, 10/math.Sqrt(3), c.Ours.SE, 1e-12)
	v, _ := report.Verdict(c, paper)
	require.Equal(t, report.NotReproduced, v)

	strong := 2 * paper.Value / 100 // a fraction, twice the paper's drop
	c = claimByID(t, Claims(handResult([]float64{strong - 0.01, strong, strong + 0.01}, []float64{0, 0, 0})),
		"protot_writemask_female_women")
	require.InDelta(t, 100*strong, c.Ours.Value, 1e-9)
	require.InDelta(t, 1/math.Sqrt(3), c.Ours.SE, 1e-9)
	v, _ = report.Verdict(c, paper)
	require.Equal(t, report.Reproduced, v)

	c = claimByID(t, Claims(handResult([]float64{strong}, []float64{0})), "protot_writemask_female_women")
	require.Contains(t, c.Untestable, "1 training seed")
	v, _ = report.Verdict(c, paper)
	require.Equal(t, report.NotTestable, v)
}

// TestClaims_Disentanglement: pooled over three seeds, prototypes have 15 units, 12 named with a concept (D 0.9 each;
// the "none" unit does not count) and a share 1/5 labelled none; heads 12 units, 6 named with a concept (D 0.5),
// share 1/4 none. Prototypes are above heads and SAE top-variance (D 0.6) but below SAE top-frequency (D 0.95), so
// the "most disentangled" row is not reproduced. Constant values make every bootstrap interval a point.
func TestClaims_Disentanglement(t *testing.T) {
	r := handResult([]float64{0, 0, 0}, []float64{0, 0, 0})
	proto := PooledKindStats(r, ClaimSource, pair.KindProtoPi)
	require.Equal(t, []int{3, 15, 12}, []int{proto.Seeds, proto.Units, proto.Named})
	for _, d := range []float64{proto.D, proto.DLo, proto.DHi} {
		require.InDelta(t, 0.9, d, 1e-12)
	}
	require.InDelta(t, 0.2, proto.None, 1e-12)
	require.True(t, proto.NoneLo <= 0.2 && 0.2 <= proto.NoneHi)
	heads := PooledKindStats(r, ClaimSource, pair.KindHeads)
	require.Equal(t, []int{3, 12, 6}, []int{heads.Seeds, heads.Units, heads.Named})
	require.InDelta(t, 0.5, heads.D, 1e-12)
	require.InDelta(t, 0.25, heads.None, 1e-12)
	require.True(t, math.IsNaN(PooledKindStats(r, ClaimSource, pair.KindNull).D), "no unit: no D")

	cs := Claims(r)
	want := map[string]string{"protot_disent_protot": report.NotReproduced, "protot_disent_heads": report.Reproduced,
		"protot_disent_sae_var": report.Reproduced, "protot_disent_sae_freq": report.NotReproduced}
	for id, verdict := range want {
		c := claimByID(t, cs, id)
		require.NoError(t, c.Validate(), id)
		require.Empty(t, c.Untestable, id)
		require.Equal(t, 3, c.Ours.Seeds, id)
		got, _ := report.Verdict(c, paperSide(t, id))
		require.Equal(t, verdict, got, id)
	}
	require.InDelta(t, 0.9, claimByID(t, cs, "protot_disent_protot").Ours.Value, 1e-12)
	require.InDelta(t, 0.5, claimByID(t, cs, "protot_disent_heads").Ours.Value, 1e-12)

	// A kind without units (SAE disabled) or without a named unit cannot be compared.
	for _, c := range r.Runs(ClaimSource) {
		var keep []pair.Unit
		for _, u := range c.Units {
			switch {
			case u.Kind == pair.KindSAEVariance || u.Kind == pair.KindSAEFrequency:
			case u.Kind == pair.KindHeads:
				u.Score.Named = false
				keep = append(keep, u)
			default:
				keep = append(keep, u)
			}
		}
		c.Units = keep
	}
	cs = Claims(r)
	require.Contains(t, claimByID(t, cs, "protot_disent_sae_var").Untestable, "has no")
	require.Contains(t, claimByID(t, cs, "protot_disent_heads").Untestable, "named")
	require.NotEmpty(t, claimByID(t, cs, "protot_disent_protot").Untestable)
	for _, c := range cs {
		require.NoError(t, c.Validate(), c.ID)
	}
}

// TestMaskingEffect_HandCase: the pair of most negative calibration ΔProb among targets with a selective prototype
// (ties: the earlier), its held-out ΔProb when its held-out |ΔPPL| is under the bound, else 0; none: 0 and nil.
func TestMaskingEffect_HandCase(t *testing.T) {
	iv := &pair.Intervention{MaxPPLChange: 0.01, Effects: []pair.TargetEffect{
		{Target: "a", Selective: "L0 P0", SelectiveCalProb: -0.1, SelectiveProb: -0.5, SelectivePPL: 0},
		{Target: "b", Selective: "L0 P1", SelectiveCalProb: -0.3, SelectiveProb: -0.05, SelectivePPL: -0.004},
		{Target: "c", Selective: "L0 P2", SelectiveCalProb: -0.3, SelectiveProb: -0.9, SelectivePPL: 0},
		{Target: "d", SelectiveCalProb: -0.8},
	}}
	v, e := MaskingEffect(iv)
	require.Equal(t, "b", e.Target)
	require.Equal(t, -0.05, v)
	iv.Effects[1].SelectivePPL = -0.01
	v, e = MaskingEffect(iv)
	require.Equal(t, "b", e.Target)
	require.Equal(t, 0.0, v, "|ΔPPL| at the bound is not below it")
	v, e = MaskingEffect(&pair.Intervention{MaxPPLChange: 0.01, Effects: iv.Effects[3:]})
	require.Nil(t, e)
	require.Equal(t, 0.0, v)
}

// TestClaims_BrownRows: the Brown rows read the Brown corpus's runs and only them. A result whose synthetic runs
// are handResult's and whose Brown runs (three seeds) have prototypes at D 0.3, below every other kind, and masks
// of −30% within the bound: the Brown masking row is reproduced where the synthetic one is not, and the Brown
// disentanglement rows are not; without Brown runs the Brown rows are untestable, saying so.
func TestClaims_BrownRows(t *testing.T) {
	r := handResult([]float64{-0.10, -0.30, -0.20}, []float64{0.005, 0.02, -0.009})
	cs := Claims(r)
	for _, c := range cs[5:] {
		require.Contains(t, c.Untestable, "on the brown corpus", c.Claim)
	}
	b := handResult([]float64{-0.30, -0.30, -0.30}, []float64{0, 0, 0})
	for _, cr := range b.Runs(ClaimSource) {
		cr.Source = lmdata.SourceBrown
		for i := range cr.Units {
			if cr.Units[i].Kind == pair.KindProtoPi {
				cr.Units[i].Score.Disentanglement = 0.3
			}
		}
	}
	r.Corpora = append(r.Corpora, b.Corpora...)
	for i := range r.Replicates {
		r.Replicates[i].Corpora = append(r.Replicates[i].Corpora, b.Replicates[i].Corpora...)
	}
	cs = Claims(r)
	want := []string{report.NotReproduced, report.NotReproduced, report.Reproduced, report.Reproduced,
		report.NotReproduced, report.Reproduced, report.NotReproduced, report.NotReproduced, report.NotReproduced,
		report.NotReproduced}
	for i, c := range cs {
		require.NoError(t, c.Validate(), c.ID)
		require.Empty(t, c.Untestable, c.Claim)
		got, _ := report.Verdict(c, paperSide(t, c.ID))
		require.Equal(t, want[i], got, c.Claim)
	}
	require.InDelta(t, -10, cs[0].Ours.Value, 1e-12, "the synthetic row keeps reading the synthetic runs")
	require.InDelta(t, -30, cs[5].Ours.Value, 1e-12)
	require.InDelta(t, 0.9, cs[1].Ours.Value, 1e-12)
	require.InDelta(t, 0.3, cs[6].Ours.Value, 1e-12)
}
