package attribution

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/report"
)

// paperSide reads the paper's number of a docs/spec/papers.md row (the value column), as the scorecard would.
func paperSide(t *testing.T, id string) report.Paper {
	text, err := os.ReadFile("../../docs/spec/papers.md")
	require.NoError(t, err)
	for _, line := range strings.Split(string(text), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) > 5 && strings.TrimSpace(cells[1]) == id {
			v := strings.TrimSpace(cells[5])
			if v == "" {
				return report.Paper{}
			}
			x, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, id)
			return report.Paper{Value: x, HasValue: true}
		}
	}
	t.Fatalf("docs/spec/papers.md has no row %q", id)
	return report.Paper{}
}

// TestClaims_NilListsEveryClaim: without a result every claim is listed, valid, with Ours empty and an id that
// docs/spec/papers.md has.
func TestClaims_NilListsEveryClaim(t *testing.T) {
	cs := Claims(nil)
	require.Len(t, cs, 12)
	for _, c := range cs {
		require.NotEmpty(t, c.Claim)
		require.NotEmpty(t, c.Method, c.Claim)
		require.Equal(t, report.Estimate{}, c.Ours, c.Claim)
		require.NoError(t, c.Validate())
		if c.ID != "" {
			paperSide(t, c.ID)
		}
	}
}

// handResult is a result whose verdicts are known: Overlap@10 0.9 [0.85, 0.95], LDS 0.2 [0.1, 0.3], LDS − EK-FAC
// −0.1 [−0.2, 0.0], overlap with EK-FAC 0.3, speed-up 50 ± 5, and a modelled Paper speed-up of 12,000.
func handResult() *Result {
	r := &Result{Config: Small().Attribution}
	for range 3 {
		r.Models = append(r.Models, ModelResult{Source: "synthetic", NumQueries: 100, NumSeqs: 500})
	}
	r.Summary = []Summary{
		{Name: prism.MethodPrism, Source: "synthetic", Models: 3,
			Overlap: []OverlapStat{{K: 10, Mean: 0.9, Lo: 0.85, Hi: 0.95, SE: 0.02}},
			LDS:     &Interval{0.2, 0.1, 0.3}, LDSSE: 0.03, LDSVsEKFAC: &Interval{-0.1, -0.2, 0},
			OverlapEKFAC: []OverlapStat{{K: 10, Mean: 0.3, Lo: 0.2, Hi: 0.4}}, SpeedUp: 50, SpeedUpSE: 5},
		{Name: prism.MethodEKFAC, Source: "synthetic", Models: 3, SpeedUp: 1},
	}
	r.Cost = []prism.CostModel{{Name: "this run"}, {Name: "paper", Methods: []prism.MethodCost{{Name: prism.MethodPrism,
		SpeedUp: 12000}}}}
	return r
}

func verdicts(t *testing.T, cs []report.Claim) []string {
	var out []string
	for _, c := range cs {
		require.NoError(t, c.Validate(), c.Claim)
		p := report.Paper{}
		if c.ID != "" {
			p = paperSide(t, c.ID)
		}
		v, _ := report.Verdict(c, p)
		out = append(out, v)
	}
	return out
}

// TestClaims_HandBuiltVerdicts checks every claim's value and verdict on hand-built results.
func TestClaims_HandBuiltVerdicts(t *testing.T) {
	r := handResult()
	cs := Claims(r)
	require.Equal(t, report.Estimate{Value: 0.9, SE: 0.02, Lo: 0.85, Hi: 0.95, Seeds: 3}, cs[0].Ours)
	require.Equal(t, report.Estimate{Value: 0.2, SE: 0.03, Lo: 0.1, Hi: 0.3, Seeds: 3}, cs[1].Ours)
	require.Equal(t, report.Estimate{Value: -0.1, Lo: -0.2, Hi: 0, Seeds: 3}, cs[2].Ours)
	require.Equal(t, 0.3, cs[3].Ours.Value)
	require.Equal(t, report.Estimate{Value: 50, SE: 5, Seeds: 3, Unit: "×"}, cs[4].Ours)
	require.Equal(t, 12000.0, cs[5].Ours.Value)
	require.True(t, math.IsNaN(cs[6].Ours.Value), "TinyStories: nothing measured, no value (not a 0)")
	require.Equal(t, "—", cs[6].Ours.String())
	require.Equal(t, []string{report.Reproduced, report.Reproduced, report.NotReproduced, report.NotTestable,
		report.NotReproduced, report.NotTestable, report.NotTestable}, verdicts(t, cs)[:7])

	// No Brown run: its five rows say so. With one, they read it and only it.
	for _, c := range cs[7:] {
		require.Contains(t, c.Untestable, "no run on the brown corpus", c.Claim)
		require.Contains(t, c.Claim, "Brown")
	}
	for i := range 2 {
		r.Models = append(r.Models, ModelResult{Source: "brown", NumQueries: 90, NumSeqs: 700})
		r.Summary = append(r.Summary, Summary{Name: []string{prism.MethodPrism, prism.MethodEKFAC}[i],
			Source: "brown", Models: 2, Overlap: []OverlapStat{{K: 10, Mean: 0.5, Lo: 0.45, Hi: 0.55, SE: 0.01}},
			LDS: &Interval{0.3, 0.25, 0.35}, LDSSE: 0.01, LDSVsEKFAC: &Interval{0.01, -0.02, 0.04},
			OverlapEKFAC: []OverlapStat{{K: 10, Mean: 0.6, Lo: 0.5, Hi: 0.7}}, SpeedUp: 700, SpeedUpSE: 20})
	}
	r.Config.BrownTrainDocs = 24
	cs = Claims(r)
	require.Len(t, cs, 12)
	require.Equal(t, report.Estimate{Value: 0.9, SE: 0.02, Lo: 0.85, Hi: 0.95, Seeds: 3}, cs[0].Ours,
		"the synthetic rows keep reading the synthetic run")
	require.Equal(t, report.Estimate{Value: 0.5, SE: 0.01, Lo: 0.45, Hi: 0.55, Seeds: 2}, cs[7].Ours)
	require.Equal(t, report.Estimate{Value: 0.3, SE: 0.01, Lo: 0.25, Hi: 0.35, Seeds: 2}, cs[8].Ours)
	require.Equal(t, report.Estimate{Value: 0.01, Lo: -0.02, Hi: 0.04, Seeds: 2}, cs[9].Ours)
	require.Equal(t, 0.6, cs[10].Ours.Value)
	require.Equal(t, report.Estimate{Value: 700, SE: 20, Seeds: 2, Unit: "×"}, cs[11].Ours)
	for i, c := range cs[7:] {
		require.Equal(t, cs[[]int{0, 1, 2, 3, 4}[i]].ID, c.ID, "the Brown rows keep the papers.md ids")
		require.Contains(t, c.Method, "Brown corpus: 2 models × 90 queries of its validation split, trained and "+
			"attributed on the first 24 documents of its training split (700 sequences)")
	}
	require.Equal(t, []string{report.NotReproduced, report.Reproduced, report.Reproduced, report.NotTestable,
		report.Reproduced}, verdicts(t, cs)[7:])
	r.Models, r.Summary = r.Models[:3], r.Summary[:2]

	// The overlap's interval reaches below 0.8; the LDS difference stays within the margin; the LDS is not above 0
	// by more than its half-width.
	sm := r.Method(prism.MethodPrism)
	sm.Overlap[0] = OverlapStat{K: 10, Mean: 0.8, Lo: 0.7, Hi: 0.9}
	sm.LDSVsEKFAC = &Interval{-0.01, -0.04, 0.02}
	sm.LDS = &Interval{0.05, -0.01, 0.11}
	require.Equal(t, []string{report.NotReproduced, report.NotReproduced, report.Reproduced, report.NotTestable,
		report.NotReproduced, report.NotTestable, report.NotTestable}, verdicts(t, Claims(r))[:7])

	// A quick run: no LDS, no EK-FAC.
	r = handResult()
	r.Summary = r.Summary[:1]
	sm = &r.Summary[0]
	sm.LDS, sm.LDSVsEKFAC, sm.OverlapEKFAC, sm.SpeedUp = nil, nil, nil, 0
	cs = Claims(r)
	for _, i := range []int{1, 2, 3, 4} {
		require.NotEmpty(t, cs[i].Untestable, cs[i].Claim)
	}
	require.Contains(t, cs[1].Untestable, "lds_subsets")
	require.Equal(t, report.Reproduced, verdicts(t, cs)[0])
}
