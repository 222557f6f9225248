package prismhead

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/docs"
	"github.com/protolab/protolab/layers/prism"
	mprism "github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/report"
)

// paperSide is the paper's number of a docs row, as the scorecard reads it ("" → no number).
func paperSide(t *testing.T, id string) report.Paper {
	t.Helper()
	if id == "" {
		return report.Paper{}
	}
	p, err := docs.Paper(id)
	require.NoError(t, err)
	return report.Paper{Value: p.Value, HasValue: p.HasValue(), Text: p.Text, Source: p.Source}
}

// handSeed is one seed of a hand-built result: the configured model's quality, and per sweep weight (0.01, 1) C's
// off-diagonal mass and the extreme eigenvalues [lo, hi] of every diagonal block of the exact Hessian.
type handSeed struct {
	relLoss, relPPL, r1, r2 float64
	offDiag                 [2]float64
	blockEig                [2][2]float64
}

// handResult builds a stored result on the synthetic corpus from hand values (handCorpus).
func handResult(seeds []handSeed) *Result {
	return &Result{CorpusResult: handCorpus(lmdata.SourceSynthetic, 400, seeds)}
}

// handCorpus builds one corpus's result from hand values, evaluated on docs documents of seed 3001, with the fixed
// damping λ = 1 and M = 3 identical blocks.
func handCorpus(source string, docs int, seeds []handSeed) CorpusResult {
	r := CorpusResult{Protocol: Protocol{Source: source, Sweep: []float64{0.01, 1}, EvalDocs: docs, EvalSeed: 3001,
		R1Weight: 0.1, R2Weight: 0.1, Steps: 400, BatchSize: 8, SeqLen: 32, PrismLR: 3e-3, DenseLR: 3e-3}}
	for i, s := range seeds {
		rep := Replicate{Seed: uint64(i + 2), FixedDamping: 1,
			Quality: mprism.Quality{RelLoss: s.relLoss, RelPerplexity: s.relPPL,
				Coverage: prism.CoverageMetrics{R1Bar: s.r1, R2: s.r2}}}
		for w, weight := range []float64{0.01, 1} {
			lo, hi := s.blockEig[w][0], s.blockEig[w][1]
			exact := mprism.CurvatureScore{Name: "exact", MinEig: lo, MaxEig: hi,
				BlockMinEig: []float64{lo, lo, lo},
				BlockMaxEig: []float64{hi, hi, hi}}
			rep.Sweep = append(rep.Sweep, SweepPoint{Weight: weight,
				Curvature: mprism.Curvature{OffDiagonalMass: s.offDiag[w], Exact: exact, CERec: exact}})
		}
		r.Protocol.Seeds = append(r.Protocol.Seeds, rep.Seed)
		r.Replicates = append(r.Replicates, rep)
	}
	return r
}

// verdicts judges every claim of r against the papers' numbers, in order.
func verdicts(t *testing.T, cs []report.Claim) []string {
	t.Helper()
	out := make([]string, len(cs))
	for i, c := range cs {
		require.NoError(t, c.Validate(), c.Claim)
		out[i], _ = report.Verdict(c, paperSide(t, c.ID))
	}
	return out
}

// TestClaims_NilResult: without a result every claim is listed, with a valid rule, an id of docs/spec/papers.md (or
// none) and no value: the synthetic corpus's six rows, then the Brown corpus's six with the same ids and rules and
// the corpus named in the claim and the method.
func TestClaims_NilResult(t *testing.T) {
	cs := Claims(nil)
	require.Len(t, cs, 12)
	for i, b := range cs[6:] {
		require.Equal(t, cs[i].ID, b.ID)
		require.Equal(t, cs[i].Rule, b.Rule)
		require.Equal(t, "Brown corpus: "+cs[i].Claim, b.Claim)
		require.Contains(t, b.Method, "Brown")
		require.NotContains(t, cs[i].Claim+cs[i].Method, "Brown")
	}
	for _, c := range cs {
		require.NoError(t, c.Validate(), c.Claim)
		require.Zero(t, c.Ours.Value, c.Claim)
		require.Zero(t, c.Ours.Seeds, c.Claim)
		require.Empty(t, c.Untestable)
		require.NotEmpty(t, c.Method)
		paperSide(t, c.ID) // the id exists
	}
	require.Equal(t, idLossVsDense, cs[0].ID)
	require.Equal(t, idLocalisation, cs[5].ID)
}

// TestClaims_HandResult checks the estimates and verdicts on a hand-built result of three seeds whose outcome is
// known:
//
//   - loss +1, +2, +3%: 2 ± 1/√3 %, at most the paper's 5% → reproduced;
//   - perplexity +4, +5, +6%: 5 ± 1/√3 %, 5 + 2·s.e. > 5 → not reproduced;
//   - R̄1 0.97, 0.98, 0.99: 0.98 ± 0.01/√3 ≥ 0.94 → reproduced; R2 0.91, 0.93, 0.95: 0.93 → not reproduced;
//   - C's off-diagonal mass from 0.90, 0.88, 0.86 to 0.80, 0.79, 0.75: changes −0.10, −0.09, −0.11, so
//     −0.10 ± 0.01/√3 → holds;
//   - every block's spectrum [1, 9] at λ = 0.01 and [3, 9] at λ = 1, damping 1: κ̃ from 10/2 to 10/4, a change of
//     log10(1/2) in every seed (s.e. 0) → holds.
func TestClaims_HandResult(t *testing.T) {
	r := handResult([]handSeed{
		{0.01, 0.04, 0.97, 0.91, [2]float64{0.90, 0.80}, [2][2]float64{{1, 9}, {3, 9}}},
		{0.02, 0.05, 0.98, 0.93, [2]float64{0.88, 0.79}, [2][2]float64{{1, 9}, {3, 9}}},
		{0.03, 0.06, 0.99, 0.95, [2]float64{0.86, 0.75}, [2][2]float64{{1, 9}, {3, 9}}},
	})
	all := Claims(r)
	require.Len(t, all, 12)
	for _, c := range all[6:] {
		require.Contains(t, c.Untestable, "no run on the brown corpus", c.Claim)
		require.Equal(t, report.NotTestable, verdicts(t, []report.Claim{c})[0])
	}
	cs := all[:6]
	for _, c := range cs {
		require.Empty(t, c.Untestable, c.Claim)
		require.Equal(t, 3, c.Ours.Seeds, c.Claim)
	}
	require.InDelta(t, 2, cs[0].Ours.Value, 1e-12)
	require.InDelta(t, 1/math.Sqrt(3), cs[0].Ours.SE, 1e-12)
	require.Equal(t, "%", cs[0].Ours.Unit)
	require.InDelta(t, 5, cs[1].Ours.Value, 1e-12)
	require.InDelta(t, 0.98, cs[2].Ours.Value, 1e-12)
	require.InDelta(t, 0.01/math.Sqrt(3), cs[2].Ours.SE, 1e-12)
	require.InDelta(t, 0.93, cs[3].Ours.Value, 1e-12)
	require.InDelta(t, -0.10, cs[4].Ours.Value, 1e-12)
	require.InDelta(t, 0.01/math.Sqrt(3), cs[4].Ours.SE, 1e-12)
	require.InDelta(t, math.Log10(0.5), cs[5].Ours.Value, 1e-12)
	require.InDelta(t, 0, cs[5].Ours.SE, 1e-12)
	require.Equal(t, []string{report.Reproduced, report.NotReproduced, report.Reproduced, report.NotReproduced,
		report.Reproduced, report.Reproduced}, verdicts(t, cs))
	require.Contains(t, cs[0].Method, "3001")
}

// TestClaims_BrownRows: the Brown rows read the Brown corpus's part of the result and only it, with the same rules:
// a Brown run whose loss is +6, +7, +8% (7 ± 1/√3 %) is not reproduced on Brown while the synthetic rows keep their
// values and verdicts; its method names the Brown test split.
func TestClaims_BrownRows(t *testing.T) {
	good := [2][2]float64{{1, 9}, {3, 9}}
	syn := []handSeed{
		{0.01, 0.04, 0.97, 0.91, [2]float64{0.90, 0.80}, good},
		{0.02, 0.05, 0.98, 0.93, [2]float64{0.88, 0.79}, good},
		{0.03, 0.06, 0.99, 0.95, [2]float64{0.86, 0.75}, good},
	}
	r := handResult(syn)
	r.Others = []CorpusResult{handCorpus(lmdata.SourceBrown, 28, []handSeed{
		{0.06, 0.10, 0.97, 0.96, [2]float64{0.80, 0.90}, good},
		{0.07, 0.11, 0.98, 0.97, [2]float64{0.80, 0.90}, good},
		{0.08, 0.12, 0.99, 0.98, [2]float64{0.80, 0.90}, good},
	})}
	all := Claims(r)
	require.Len(t, all, 12)
	require.Equal(t, verdicts(t, Claims(handResult(syn))[:6]), verdicts(t, all[:6]), "the synthetic rows unchanged")
	require.InDelta(t, 2, all[0].Ours.Value, 1e-12)
	b := all[6:]
	for _, c := range b {
		require.Empty(t, c.Untestable, c.Claim)
		require.Contains(t, c.Method, "the Brown test split's first 28 documents (seed 3001)")
	}
	require.InDelta(t, 7, b[0].Ours.Value, 1e-12)
	require.InDelta(t, 1/math.Sqrt(3), b[0].Ours.SE, 1e-12)
	require.InDelta(t, 0.97, b[3].Ours.Value, 1e-12)
	require.InDelta(t, 0.10, b[4].Ours.Value, 1e-12)
	require.Equal(t, []string{report.NotReproduced, report.NotReproduced, report.Reproduced, report.Reproduced,
		report.NotReproduced, report.Reproduced}, verdicts(t, b))

	// A result stored before protocol v2 names no corpus: it ran on the synthetic corpus, whose rows read it.
	v1 := handResult(syn)
	v1.Protocol.Source = ""
	old := Claims(v1)
	require.Empty(t, old[0].Untestable)
	require.InDelta(t, 2, old[0].Ours.Value, 1e-12)
	require.Contains(t, old[6].Untestable, "no run on the brown corpus")
}

// TestClaims_TrendsThatDoNotHold: one seed whose C grows more coupled and whose blocks worsen outweighs the others.
// Off-diagonal changes −0.05, −0.05, +0.10: mean 0, not below 0 → fails. κ̃ changes log10(1/2), log10(1/2),
// log10(2): mean −log10(2)/3 with s.e. log10(2)/√3, and −log10(2)/3 + 2·log10(2)/√3 > 0 → fails.
func TestClaims_TrendsThatDoNotHold(t *testing.T) {
	good := [2][2]float64{{1, 9}, {3, 9}}
	bad := [2][2]float64{{3, 9}, {1, 9}}
	r := handResult([]handSeed{
		{0.01, 0.01, 0.99, 0.99, [2]float64{0.90, 0.85}, good},
		{0.01, 0.01, 0.99, 0.99, [2]float64{0.90, 0.85}, good},
		{0.01, 0.01, 0.99, 0.99, [2]float64{0.80, 0.90}, bad},
	})
	cs := Claims(r)
	require.InDelta(t, 0, cs[4].Ours.Value, 1e-12)
	require.InDelta(t, -math.Log10(2)/3, cs[5].Ours.Value, 1e-12)
	v := verdicts(t, cs)
	require.Equal(t, report.NotReproduced, v[4])
	require.Equal(t, report.NotReproduced, v[5])
}

// TestClaims_Untestable: two seeds, the validation split, a single sweep weight, or κ undefined for a seed each make
// the affected rows untestable, with the reason.
func TestClaims_Untestable(t *testing.T) {
	s := handSeed{0.01, 0.01, 0.99, 0.99, [2]float64{0.9, 0.8}, [2][2]float64{{1, 9}, {3, 9}}}
	two := Claims(handResult([]handSeed{s, s}))[:6]
	for _, c := range two {
		require.Contains(t, c.Untestable, "2 training seed(s)")
		require.Equal(t, report.NotTestable, verdicts(t, []report.Claim{c})[0])
	}
	val := handResult([]handSeed{s, s, s})
	val.Protocol.EvalDocs = 0
	for _, c := range Claims(val)[:6] {
		require.Contains(t, c.Untestable, "validation split")
	}
	one := handResult([]handSeed{s, s, s})
	for i := range one.Replicates {
		one.Replicates[i].Sweep = one.Replicates[i].Sweep[:1]
	}
	cs := Claims(one)
	require.Empty(t, cs[0].Untestable)
	require.Contains(t, cs[4].Untestable, "fewer than two")
	require.Contains(t, cs[5].Untestable, "fewer than two")
	indef := s
	indef.blockEig[1] = [2]float64{-2, 9} // −2 + λ < 0: κ undefined for this seed
	cs = Claims(handResult([]handSeed{s, s, indef}))
	require.Empty(t, cs[4].Untestable)
	require.Contains(t, cs[5].Untestable, "2 of 3 seeds")
	cs = Claims(handResult([]handSeed{indef, indef, indef}))
	require.Contains(t, cs[5].Untestable, "0 of 3 seeds")
	require.True(t, math.IsNaN(cs[5].Ours.Value), "κ defined for no seed: no value, not a measured 0")
	require.Equal(t, "—", cs[5].Ours.String())
}

// TestSummarize_SweepStatsAndFixedDamping checks the per-weight statistics of a hand-built result: C's off-diagonal
// mass at λ = 1 over the three seeds of TestClaims_HandResult (0.80, 0.79, 0.75: mean 0.78), and κ at the seed's
// fixed damping rather than the model's own: spectrum [1, 9] + 1 → κ = 5, whereas the model's own damping
// (Curvature.Damping, here 3) would give 12/4 = 3.
func TestSummarize_SweepStatsAndFixedDamping(t *testing.T) {
	r := handResult([]handSeed{
		{0.01, 0.04, 0.97, 0.91, [2]float64{0.90, 0.80}, [2][2]float64{{1, 9}, {3, 9}}},
		{0.02, 0.05, 0.98, 0.93, [2]float64{0.88, 0.79}, [2][2]float64{{1, 9}, {3, 9}}},
		{0.03, 0.06, 0.99, 0.95, [2]float64{0.86, 0.75}, [2][2]float64{{1, 9}, {3, 9}}},
	})
	for i := range r.Replicates {
		r.Replicates[i].Sweep[0].Curvature.Damping = 3
	}
	s := Summarize(r.Replicates)
	require.Len(t, s.Sweep, 2)
	require.Equal(t, 1.0, s.Sweep[1].Weight)
	require.InDelta(t, 0.78, s.Sweep[1].OffDiagonalMass.Mean, 1e-12)
	require.Equal(t, 3, s.Sweep[1].OffDiagonalMass.N)
	require.InDelta(t, math.Log10(5), s.Sweep[0].LogCond.Mean, 1e-12)
	require.InDelta(t, math.Log10(5), s.Sweep[0].LogBlockCond.Mean, 1e-12)
	require.InDelta(t, math.Log10(3), s.Sweep[0].LogCondSpecDamping.Mean, 1e-12)
	require.Equal(t, 0, s.Sweep[0].LogCondStructuredCos.N, "no such approximation stored: no value")
	require.Contains(t, s.String(), "largest − smallest")
}
