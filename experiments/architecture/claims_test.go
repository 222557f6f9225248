package architecture

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/docs"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/report"
)

// handComparison builds a comparison whose test perplexities per seed are base·factor[mixer]·(1, 1.02, 0.98): the
// per-seed ratio to attention is exactly the factor.
func handComparison(init, lrMode string, factors map[string]float64, seeds int) *Comparison {
	c := &Comparison{Source: "synthetic", Init: init, LRMode: lrMode, Width: 32, Steps: 640}
	for _, m := range []string{"attention", "protot", "deltanet", "mamba"} {
		var ppl, loss []float64
		for k := range seeds {
			p := 10 * factors[m] * []float64{1, 1.02, 0.98}[k%3]
			ppl, loss = append(ppl, p), append(loss, math.Log(p))
		}
		c.Scores = append(c.Scores, Score{Point: Point{Mixer: m, Init: init, LR: 3e-3}, Seeds: seeds, Tokens: 163840,
			Test: newEval(loss, 8192)})
	}
	return c
}

// paperRatio is the ratio of two of the paper's perplexities, read from docs/spec/papers.md.
func paperRatio(t *testing.T, a, b string) float64 {
	pa, err := docs.Paper(a)
	require.NoError(t, err)
	pb, err := docs.Paper(b)
	require.NoError(t, err)
	return pa.Value / pb.Value
}

func TestClaims_HandBuiltVerdicts(t *testing.T) {
	empty := Claims(nil)
	require.Len(t, empty, len(claimSpecs))
	for _, c := range empty {
		require.NoError(t, c.Validate(), c.Claim)
		require.Equal(t, report.Estimate{}, c.Ours)
		require.Empty(t, c.Untestable)
	}
	// ProtoT and DeltaNet at the paper's ratios, Mamba far above its own: ProtoT's and DeltaNet's ratios hold,
	// Mamba's does not, and the ranking (attention < DeltaNet ≈ ProtoT < Mamba here) puts 3 of the paper's 5
	// separated pairs in its order (not Mamba against DeltaNet and ProtoT).
	f := map[string]float64{"attention": 1, "protot": paperRatio(t, "protot_ppl_protot", "protot_ppl_llama"),
		"deltanet": paperRatio(t, "protot_ppl_deltanet", "protot_ppl_llama"), "mamba": 1.5}
	r := &Result{
		Tuning:  []Tuning{{Source: "synthetic", Init: "pytorch", Mixer: "attention", LRs: []float64{1e-3, 3e-3}}},
		Compare: []*Comparison{handComparison("pytorch", LRTuned, f, 3), handComparison("pytorch", LRShared, f, 1)},
	}
	got := Claims(r)
	require.Len(t, got, len(empty))
	for i, c := range got {
		require.NoError(t, c.Validate(), c.Claim)
		require.Equal(t, empty[i].ID, c.ID)
		require.Equal(t, empty[i].Claim, c.Claim)
	}
	protot, mamba, deltanet, ranking := got[0], got[1], got[2], got[3]
	require.Equal(t, "protot_ppl_ratio_protot", protot.ID)
	require.InDelta(t, f["protot"], protot.Ours.Value, 1e-12)
	require.InDelta(t, 0, protot.Ours.SE, 1e-12) // every seed has the same ratio
	require.Equal(t, 3, protot.Ours.Seeds)
	require.True(t, protot.Rule.Holds)
	require.True(t, deltanet.Rule.Holds)
	require.InDelta(t, 1.5, mamba.Ours.Value, 1e-12)
	require.False(t, mamba.Rule.Holds)
	require.Equal(t, 3.0, ranking.Ours.Value)
	require.Contains(t, ranking.Ours.Unit, "of 5 pairs")
	require.False(t, ranking.Rule.Holds)
	require.Contains(t, protot.Method, "over [0.001 0.003]")
	v, _ := report.Verdict(protot, report.Paper{})
	require.Equal(t, report.Reproduced, v)
	v, _ = report.Verdict(mamba, report.Paper{})
	require.Equal(t, report.NotReproduced, v)
	// No GPT-2 comparison; the shared-rate one has a single seed.
	require.Contains(t, got[4].Untestable, "init gpt2")
	require.Contains(t, got[5].Untestable, "init gpt2")
	require.Contains(t, got[6].Untestable, "needs ≥ 3 training seeds; this run has 1")

	// No Brown comparison: its rows say so. With one, they read it and only it.
	for _, c := range got[7:] {
		require.Contains(t, c.Untestable, "no comparison on the brown corpus", c.Claim)
		require.Contains(t, c.Claim, "Brown")
	}
	fb := map[string]float64{"attention": 1, "protot": 2, "deltanet": 1, "mamba": 1}
	br := handComparison("pytorch", LRTuned, fb, 3)
	br.Source = "brown"
	r.Compare = append(r.Compare, br)
	got = Claims(r)
	require.Equal(t, "protot_ppl_ratio_protot", got[7].ID)
	require.InDelta(t, 2, got[7].Ours.Value, 1e-12)
	require.False(t, got[7].Rule.Holds)
	require.Contains(t, got[7].Method, "the Brown test split")
	require.InDelta(t, f["protot"], got[0].Ours.Value, 1e-12, "the synthetic rows keep reading the synthetic comparison")
	require.Contains(t, got[11].Untestable, "no comparison on the brown corpus with init pytorch and lr shared")
	r.Compare = r.Compare[:2]

	// With Mamba in the paper's place every separated pair is in order (the DeltaNet–ProtoT tie is not judged).
	f["mamba"] = paperRatio(t, "protot_ppl_mamba", "protot_ppl_llama")
	r.Compare[0] = handComparison("pytorch", LRTuned, f, 3)
	got = Claims(r)
	require.True(t, got[1].Rule.Holds)
	require.Equal(t, 5.0, got[3].Ours.Value)
	require.True(t, got[3].Rule.Holds)

	// A ratio off by half the tolerance (every seed alike: s.e. 0) still holds; off by more than it does not.
	f["protot"] *= 1 + RatioTol/2
	r.Compare[0] = handComparison("pytorch", LRTuned, f, 3)
	require.True(t, Claims(r)[0].Rule.Holds)
	f["protot"] *= 1 + RatioTol
	r.Compare[0] = handComparison("pytorch", LRTuned, f, 3)
	require.False(t, Claims(r)[0].Rule.Holds)

	// A diverged seed makes the rows of that comparison untestable.
	r.Compare[0].Scores[1].Diverged = 1
	require.Contains(t, Claims(r)[0].Untestable, "diverged")
}

func TestComparisonRank_SettledHandCase(t *testing.T) {
	curve := func(losses ...float64) []CurvePoint {
		var out []CurvePoint
		for i, l := range losses {
			out = append(out, CurvePoint{Tokens: 100 * (i + 1), Loss: l})
		}
		return out
	}
	// b overtakes a at 200 tokens (first half of 400): settled.
	c := &Comparison{Scores: []Score{{Point: Point{Mixer: "a"}, Curve: curve(3, 2.5, 2.2, 2.0)},
		{Point: Point{Mixer: "b"}, Curve: curve(3.2, 2.4, 2.1, 1.9)}}}
	c.Rank()
	require.Len(t, c.Ranking, 4)
	require.Equal(t, []string{"a", "b"}, c.Ranking[0].Order)
	require.Equal(t, []string{"b", "a"}, c.Ranking[3].Order)
	require.True(t, c.Settled)
	// b overtakes a only at 400 tokens: the order at 200 and 300 (the last half) differs from the final one.
	c.Scores[1].Curve = curve(3.2, 2.6, 2.3, 1.9)
	c.Rank()
	require.False(t, c.Settled)
}

// The ratio rows of papers.md are the quotients of the paper's perplexities, rounded to the digits typed.
func TestRatioIDs_AreThePerplexityQuotients(t *testing.T) {
	for mixer, id := range ratioIDs {
		p, err := docs.Paper(id)
		require.NoError(t, err)
		require.InDelta(t, paperRatio(t, paperIDs[mixer], paperIDs[decoder.MixerAttention]), p.Value, 5e-4, id)
	}
}
