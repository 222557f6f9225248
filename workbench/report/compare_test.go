package report

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// row is a scorecard row of study "s" for claim id with a value ± s.e. (spread 2·se), preset small.
func row(id string, value, se float64, verdict string) Row {
	return Row{Study: "s", Claim: Claim{ID: id, Claim: "claim " + id, Ours: Estimate{Value: value, SE: se, Seeds: 3}},
		Preset: "small", Verdict: verdict}
}

// Every status from hand-made rows: within the shipped spread, outside it (in spreads, and without a spread),
// verdicts that differ, rows on one side only, rows not run, rows of another preset, and untestable rows: without a
// value on either side, with values compared like any other, with a value on one side only.
func TestCompare_EveryStatus(t *testing.T) {
	quick := row("q", 1, 0.1, Reproduced)
	quick.Preset = "quick"
	shipped := []Row{
		row("a", 10, 0.5, Reproduced),        // spread 1
		row("b", 10, 0.5, Reproduced),        // new 13: 3 spreads away
		row("c", 10, 0.5, Reproduced),        // new verdict: not reproduced
		row("d", 5, 0, NotReproduced),        // no spread, new equal
		row("e", 5, 0, NotReproduced),        // no spread, new 5.5
		row("f", 1, 0.1, Reproduced),         // not in the new scorecard
		row("g", 1, 0.1, Reproduced),         // not run anew
		row("q", 1, 0.1, Reproduced),         // new only from the quick preset
		row("u", math.NaN(), 0, NotTestable), // untestable, nothing measured on either side
		row("v", 0.4, 0.01, NotTestable),     // untestable with a reported value; new 0.5: 5 spreads away
		row("x", 0.4, 0.01, NotTestable),     // untestable with a reported value; new 0.41: within the spread
		row("y", 0.4, 0.01, NotTestable),     // untestable with a value; new measured nothing
		row("n", 0, 0, NotRun),               // not run for the shipped scorecard
		row("w", 10, 0.5, NotReproduced),     // new 9.1 with its own spread 1: outside the shipped spread of 1
	}
	fresh := []Row{
		row("a", 10.9, 0.4, Reproduced),
		row("b", 13, 0.5, Reproduced),
		row("c", 10.2, 0.5, NotReproduced),
		row("d", 5, 0, NotReproduced),
		row("e", 5.5, 0, NotReproduced),
		row("g", 0, 0, NotRun),
		quick,
		row("u", math.NaN(), 0, NotTestable),
		row("v", 0.5, 0.01, NotTestable),
		row("x", 0.41, 0.01, NotTestable),
		row("y", math.NaN(), 0, NotTestable),
		row("n", 2, 0.1, Reproduced),
		row("w", 8.9, 0.5, NotReproduced),
		row("z", 1, 0.1, Reproduced), // only in the new scorecard
	}
	cs := Compare(shipped, fresh)
	want := map[string]string{"a": Agrees, "b": Differs, "c": VerdictChanged, "d": Agrees, "e": Differs,
		"f": Missing, "g": Missing, "q": Missing, "u": Agrees, "v": Differs, "x": Agrees, "y": Differs, "n": Missing,
		"w": Differs, "z": Missing}
	require.Len(t, cs, len(want))
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
		require.Equal(t, want[c.ID], c.Status, "claim %s: %s", c.ID, c.StatusText())
		require.Equal(t, c.Status == Differs || c.Status == VerdictChanged, c.Failed(), c.ID)
	}
	require.Equal(t, "a b c d e f g q u v x y n w z", strings.Join(ids, " "), "shipped's order, then new-only claims")
	text := map[string]string{}
	for _, c := range cs {
		text[c.ID] = c.StatusText()
	}
	require.Equal(t, "differs: 3 shipped spreads", text["b"])
	require.Equal(t, "differs: by 0.5; the shipped row has no spread", text["e"])
	require.Equal(t, "differs: 1.1 shipped spreads", text["w"])
	require.Equal(t, "differs: 5 shipped spreads", text["v"])
	require.Equal(t, "differs: a value on one side only", text["y"])
	require.Equal(t, "missing: not in the new scorecard", text["f"])
	require.Equal(t, "missing: not run", text["g"])
	require.Equal(t, "missing: new is the quick preset, shipped the small", text["q"])
	require.Equal(t, "missing: not run for the shipped scorecard", text["n"])
	require.Equal(t, "missing: not in the shipped scorecard", text["z"])
	require.Equal(t, "15 claims compared: 4 agrees, 5 differs, 1 verdict changed, 5 missing", CompareSummary(cs))
}

// Agree is |new − shipped| ≤ the shipped spread (z·s.e., or half the interval), with equality up to rounding when
// the shipped row has none; the new row's own spread does not widen it. Estimates without a value agree only with
// each other.
func TestAgree_TheShippedSpread(t *testing.T) {
	s := Estimate{Value: 10, SE: 0.5}
	require.True(t, Agree(s, Estimate{Value: 11}))
	require.True(t, Agree(s, Estimate{Value: 9}))
	require.False(t, Agree(s, Estimate{Value: 11.01}))
	require.False(t, Agree(s, Estimate{Value: 11.5, SE: 5}), "the new spread does not count")
	require.True(t, Agree(Estimate{Value: 1, Lo: 0, Hi: 4}, Estimate{Value: 2.9}), "half the interval: 2")
	require.True(t, Agree(Estimate{Value: 3}, Estimate{Value: 3 + 1e-12}))
	require.False(t, Agree(Estimate{Value: 3}, Estimate{Value: 3.001}))
	require.True(t, Agree(Estimate{Value: math.NaN()}, Estimate{Value: math.NaN()}), "nothing measured on either side")
	require.False(t, Agree(Estimate{Value: 0.4, SE: 1}, Estimate{Value: math.NaN()}), "a value on one side only")
	require.False(t, Agree(Estimate{Value: math.NaN()}, Estimate{Value: 0.4}), "a value on one side only")
}

// The comparison table has one line per claim with both values ± spread, both verdicts and the status.
func TestCompareMarkdown_Table(t *testing.T) {
	cs := Compare([]Row{row("a", 10, 0.5, Reproduced), row("b", 1, 0, NotRun), row("m", 0.4, 0.01, NotTestable),
		row("u", math.NaN(), 0, NotTestable)},
		[]Row{row("a", 13, 0.5, NotReproduced), row("m", 0.4, 0.01, NotTestable), row("u", math.NaN(), 0, NotTestable)})
	md := CompareMarkdown(cs, "Reproduction", "intro")
	require.True(t, strings.HasPrefix(md, "# Reproduction\n\nintro\n\n4 claims compared: 2 agrees, 0 differs, "+
		"1 verdict changed, 1 missing.\n"))
	require.Contains(t, md, "| s | m | claim m | 0.4 ± 0.02 | 0.4 ± 0.02 | not testable at this preset → not testable "+
		"at this preset | agrees |\n", "an untestable row's measured value is shown")
	require.Contains(t, md, "| s | u | claim u | — | — | not testable at this preset → not testable at this preset "+
		"| agrees |\n", "nothing measured: —")
	require.Contains(t, md, "| s | a | claim a | 10 ± 1 | 13 ± 1 | reproduced → not reproduced | verdict changed |\n")
	require.Contains(t, md, "| s | b | claim b | — | — | not run → — | missing: not in the new scorecard |\n")
}
