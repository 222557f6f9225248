package report

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVerdict_Rules(t *testing.T) {
	paper := Paper{Value: 10, HasValue: true, Text: "10"}
	for _, tc := range []struct {
		name string
		c    Claim
		want string
	}{
		{"within by s.e.", Claim{Ours: Estimate{Value: 11, SE: 0.6}, Rule: Rule{Kind: RuleWithin}}, Reproduced},
		{"outside 2 s.e.", Claim{Ours: Estimate{Value: 11.3, SE: 0.6}, Rule: Rule{Kind: RuleWithin}}, NotReproduced},
		{"within by tolerance", Claim{Ours: Estimate{Value: 10.9}, Rule: Rule{Kind: RuleWithin, Tol: 0.1}}, Reproduced},
		{"CI half-width", Claim{Ours: Estimate{Value: 12, Lo: 9, Hi: 15}, Rule: Rule{Kind: RuleWithin}}, Reproduced},
		{"at least the paper", Claim{Ours: Estimate{Value: 12, SE: 0.9}, Rule: Rule{Kind: RuleAtLeast}}, Reproduced},
		{"at least, too noisy", Claim{Ours: Estimate{Value: 12, SE: 1.1}, Rule: Rule{Kind: RuleAtLeast}}, NotReproduced},
		{"at most a bound", Claim{Ours: Estimate{Value: 0.5, SE: 0.2},
			Rule: Rule{Kind: RuleAtMost, Bound: 1, HasBound: true}}, Reproduced},
		{"at most, over", Claim{Ours: Estimate{Value: 0.7, SE: 0.2},
			Rule: Rule{Kind: RuleAtMost, Bound: 1, HasBound: true}}, NotReproduced},
		{"holds", Claim{Rule: Rule{Kind: RuleHolds, Holds: true, Test: "B/A > 1"}}, Reproduced},
		{"does not hold", Claim{Rule: Rule{Kind: RuleHolds, Test: "B/A > 1"}}, NotReproduced},
		{"untestable", Claim{Untestable: "needs D = 512", Rule: Rule{Kind: RuleWithin}}, NotTestable},
	} {
		got, why := Verdict(tc.c, paper)
		require.Equal(t, tc.want, got, tc.name)
		require.NotEmpty(t, why, tc.name)
	}
	got, why := Verdict(Claim{Ours: Estimate{Value: 1}, Rule: Rule{Kind: RuleWithin}}, Paper{})
	require.Equal(t, NotTestable, got)
	require.Contains(t, why, "no number")
	got, _ = Verdict(Claim{Ours: Estimate{Value: 2}, Rule: Rule{Kind: RuleAtLeast, Bound: 1, HasBound: true}}, Paper{})
	require.Equal(t, Reproduced, got, "a stated bound needs no paper number")
}

func TestClaim_Validate(t *testing.T) {
	require.NoError(t, Claim{Rule: Rule{Kind: RuleWithin}}.Validate())
	require.ErrorContains(t, Claim{Rule: Rule{Kind: "close"}}.Validate(), `"close"`)
	require.ErrorContains(t, Claim{Rule: Rule{Kind: RuleHolds}}.Validate(), "test in words")
	require.ErrorContains(t, Claim{Ours: Estimate{Value: math.NaN()}, Rule: Rule{Kind: RuleWithin}}.Validate(),
		"untestable")
}

func TestMarkdown_RowsAndCounts(t *testing.T) {
	rows := []Row{
		{Study: "a", Claim: Claim{Claim: "x | y", Ours: Estimate{Value: 1.5, SE: 0.1, Seeds: 3}}, Preset: "small",
			Paper: Paper{Text: "1.4", Source: "s.md §1"}, Verdict: Reproduced, Why: "rule", From: "runs/a/r.json"},
		{Study: "b", Claim: Claim{Claim: "z"}, Preset: "small", Verdict: NotRun, Why: "no stored result"},
	}
	md := Markdown(rows, "Scorecard", "intro")
	require.Contains(t, md, "2 claims: 1 reproduced, 0 not reproduced, 0 not testable at this preset, 1 not run.")
	require.Contains(t, md, `x \| y`)
	require.Contains(t, md, "1.5 ± 0.1 (3 seeds)")
	require.Contains(t, md, "1.4 — s.md §1")
	require.Equal(t, 3, strings.Count(md, "\n| "), "the header and two rows")
	require.Equal(t, "0.5 [0.4, 0.6] bits", Estimate{Value: 0.5, Lo: 0.4, Hi: 0.6, Unit: "bits"}.String())
	require.Equal(t, "0 log10 (3 seeds)", Estimate{Value: 0, Unit: "log10", Seeds: 3}.String(), "a measured 0 shows")
	require.Equal(t, "—", Estimate{Value: math.NaN(), Unit: "log10"}.String(), "no value is not a 0")
}

func TestHTML_EscapesAndMarksVerdicts(t *testing.T) {
	page := HTML([]Row{{Study: "a", Claim: Claim{Claim: "<b>x</b>"}, Verdict: NotReproduced}}, "Scorecard", "p")
	require.Contains(t, page, "&lt;b&gt;x&lt;/b&gt;")
	require.Contains(t, page, `class="not-reproduced"`)
	require.True(t, strings.HasPrefix(page, "<!DOCTYPE html>"))
}

// A caveat is printed beside the verdict and counted in the summary, in both formats, and leaves the verdict as
// the rule gave it; a row that did not run shows none.
func TestCaveat_BesideTheVerdict(t *testing.T) {
	rows := []Row{
		{Study: "a", Claim: Claim{Claim: "x", Ours: Estimate{Value: 1}, Caveat: "plateau not reached (A: 7.9%)"},
			Verdict: Reproduced},
		{Study: "a", Claim: Claim{Claim: "y", Caveat: "plateau not reached"}, Verdict: NotRun},
		{Study: "b", Claim: Claim{Claim: "z", Ours: Estimate{Value: 2}}, Verdict: NotReproduced},
	}
	md := Markdown(rows, "Scorecard", "intro")
	require.Contains(t, md, "1 rows carry a caveat")
	require.Contains(t, md, "**reproduced** — caveat: plateau not reached (A: 7.9%) |")
	require.Contains(t, md, "| **not run** |")
	require.Contains(t, md, "| **not reproduced** |")
	page := HTML(rows, "Scorecard", "p")
	require.Contains(t, page, "<td>reproduced — caveat: plateau not reached (A: 7.9%)</td>")
	require.Contains(t, page, "1 rows carry a caveat")
	require.NotContains(t, Markdown(rows[2:], "S", "i"), "caveat")
}
