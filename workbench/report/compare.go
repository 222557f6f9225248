package report

import (
	"fmt"
	"math"
	"strings"
)

// Statuses of a compared row (doc.go, "Comparing two scorecards").
const (
	Agrees         = "agrees"
	Differs        = "differs"
	VerdictChanged = "verdict changed"
	Missing        = "missing"
)

// Comparison is one claim of two scorecards side by side: the shipped row and the new one (`protolab report
// --compare`).
type Comparison struct {
	Study string
	ID    string // the docs/spec/papers.md id ("" for a claim without one)
	Claim string
	// Shipped and New are the two rows; nil when that scorecard has no row for the claim.
	Shipped, New *Row
	Status       string  // Agrees, Differs, VerdictChanged or Missing
	Spreads      float64 // Differs: |new − shipped| in shipped spreads (+Inf when the shipped row has no spread)
	Why          string  // Missing: which side lacks the row and why
}

// Agree reports whether two measurements of the same claim agree: |new − shipped| ≤ shipped.Spread(), the
// half-width the verdict rules use (2 s.e., or half the 95% interval). A shipped value without a spread (one seed,
// an exact count) agrees only with an equal value, up to a relative 1e-9 (printing and rounding). Two estimates
// without a value (NaN: nothing measured) agree; one without a value agrees with nothing measured. This is the one
// definition `protolab report --compare` applies.
func Agree(shipped, fresh Estimate) bool {
	if math.IsNaN(shipped.Value) || math.IsNaN(fresh.Value) {
		return math.IsNaN(shipped.Value) && math.IsNaN(fresh.Value)
	}
	return math.Abs(fresh.Value-shipped.Value) <= math.Max(shipped.Spread(), 1e-9*math.Max(1, math.Abs(shipped.Value)))
}

// Compare pairs the rows of two scorecards by study, claim id and claim text (shipped's order first, then the claims
// only the new scorecard has) and judges each pair:
//
//   - Missing: a side has no row for the claim, or its row was not run, or the two rows come from different presets
//     (a quick run is no reproduction of a protocol run);
//   - VerdictChanged: the verdicts differ;
//   - Agrees: the same verdict and the values Agree (which includes both rows having measured nothing, NaN: an
//     untestable claim without a value). An untestable row that carries a measured value (a reported metric with
//     no paper number, a cost model) is compared like any other;
//   - Differs: the same verdict, but the new value lies outside the shipped spread (Spreads says by how much; NaN
//     when only one side has a value).
func Compare(shipped, fresh []Row) []Comparison {
	type key struct{ study, id, claim string }
	keyOf := func(r Row) key { return key{r.Study, r.Claim.ID, r.Claim.Claim} }
	newRows := map[key]*Row{}
	for i := range fresh {
		newRows[keyOf(fresh[i])] = &fresh[i]
	}
	seen := map[key]bool{}
	var out []Comparison
	for i := range shipped {
		k := keyOf(shipped[i])
		seen[k] = true
		out = append(out, compareRow(&shipped[i], newRows[k]))
	}
	for i := range fresh {
		if !seen[keyOf(fresh[i])] {
			out = append(out, compareRow(nil, &fresh[i]))
		}
	}
	return out
}

// compareRow judges one pair (either row may be nil, not both).
func compareRow(s, n *Row) Comparison {
	base := s
	if base == nil {
		base = n
	}
	c := Comparison{Study: base.Study, ID: base.Claim.ID, Claim: base.Claim.Claim, Shipped: s, New: n}
	switch {
	case s == nil:
		c.Status, c.Why = Missing, "not in the shipped scorecard"
	case n == nil:
		c.Status, c.Why = Missing, "not in the new scorecard"
	case s.Verdict == NotRun:
		c.Status, c.Why = Missing, "not run for the shipped scorecard"
	case n.Verdict == NotRun:
		c.Status, c.Why = Missing, "not run"
	case s.Preset != n.Preset:
		c.Status, c.Why = Missing, fmt.Sprintf("new is the %s preset, shipped the %s", n.Preset, s.Preset)
	case s.Verdict != n.Verdict:
		c.Status = VerdictChanged
	case Agree(s.Claim.Ours, n.Claim.Ours):
		c.Status = Agrees
	default:
		c.Status = Differs
		switch sp := s.Claim.Ours.Spread(); {
		case math.IsNaN(s.Claim.Ours.Value) || math.IsNaN(n.Claim.Ours.Value):
			c.Spreads = math.NaN()
		case sp > 0:
			c.Spreads = math.Abs(n.Claim.Ours.Value-s.Claim.Ours.Value) / sp
		default:
			c.Spreads = math.Inf(1)
		}
	}
	return c
}

// StatusText is the status column: "agrees", "differs: 3.2 shipped spreads" (or "differs: by 0.012; the shipped
// row has no spread", or "differs: a value on one side only"), "verdict changed", "missing: <why>".
func (c Comparison) StatusText() string {
	switch c.Status {
	case Differs:
		if math.IsNaN(c.Spreads) {
			return "differs: a value on one side only"
		}
		if math.IsInf(c.Spreads, 1) {
			return fmt.Sprintf("differs: by %.3g; the shipped row has no spread",
				math.Abs(c.New.Claim.Ours.Value-c.Shipped.Claim.Ours.Value))
		}
		return fmt.Sprintf("differs: %.2g shipped spreads", c.Spreads)
	case Missing:
		return Missing + ": " + c.Why
	}
	return c.Status
}

// Failed reports whether the comparison fails a reproduction check: the row differs or changed verdict.
func (c Comparison) Failed() bool { return c.Status == Differs || c.Status == VerdictChanged }

// CompareSummary is the one-line summary of a comparison: the count of each status.
func CompareSummary(cs []Comparison) string {
	n := map[string]int{}
	for _, c := range cs {
		n[c.Status]++
	}
	return fmt.Sprintf("%d claims compared: %d %s, %d %s, %d %s, %d %s", len(cs), n[Agrees], Agrees, n[Differs],
		Differs, n[VerdictChanged], VerdictChanged, n[Missing], Missing)
}

// CompareMarkdown writes a comparison as a markdown document: the title, the preamble, the summary, then one table
// (study, claim id, claim, shipped value ± spread, new value ± spread, verdict shipped → new, status).
func CompareMarkdown(cs []Comparison, title, preamble string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n%s.\n\n", title, preamble, CompareSummary(cs))
	b.WriteString("| study | id | claim | shipped | new | verdict (shipped → new) | status |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s → %s | %s |\n", c.Study, cell(c.ID), cell(c.Claim),
			cell(valueText(c.Shipped)), cell(valueText(c.New)), verdictText(c.Shipped), verdictText(c.New),
			cell(c.StatusText()))
	}
	return b.String()
}

// valueText is a row's value ± its spread (the half-width the rules use), "—" for a missing row, a row not run or
// one without a measured value (NaN). An untestable row's measured value is shown: the comparison judges it.
func valueText(r *Row) string {
	if r == nil || r.Verdict == NotRun || math.IsNaN(r.Claim.Ours.Value) {
		return "—"
	}
	e := r.Claim.Ours
	s := fmt.Sprintf("%.4g", e.Value)
	if sp := e.Spread(); sp > 0 {
		s += fmt.Sprintf(" ± %.2g", sp)
	}
	if e.Unit != "" {
		s += " " + e.Unit
	}
	return s
}

// verdictText is a row's verdict, "—" for a missing row.
func verdictText(r *Row) string {
	if r == nil {
		return "—"
	}
	return r.Verdict
}
