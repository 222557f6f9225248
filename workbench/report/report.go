package report

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/pkg/errors"
)

// Rule kinds (doc.go, "Verdicts").
const (
	RuleWithin  = "within"
	RuleAtLeast = "at_least"
	RuleAtMost  = "at_most"
	RuleHolds   = "holds"
)

// Z is the number of standard errors the rules allow: about a 95% two-sided interval.
const Z = 2.0

// Verdicts.
const (
	Reproduced    = "reproduced"
	NotReproduced = "not reproduced"
	NotTestable   = "not testable at this preset"
	NotRun        = "not run"
)

// Estimate is one measured quantity: a mean over seeds with its standard error, or a value with a confidence
// interval (Lo < Hi).
type Estimate struct {
	Value float64 `json:"value"`
	SE    float64 `json:"se,omitempty"` // standard error over seeds (0: none given)
	Lo    float64 `json:"lo,omitempty"` // a 95% confidence interval [Lo, Hi] when Lo < Hi
	Hi    float64 `json:"hi,omitempty"`
	Seeds int     `json:"seeds"` // independent training seeds behind the value
	Unit  string  `json:"unit,omitempty"`
}

// Spread returns the half-width the rules use: Z·SE, or half the confidence interval when one is given.
func (e Estimate) Spread() float64 {
	if e.Hi > e.Lo {
		return (e.Hi - e.Lo) / 2
	}
	return Z * e.SE
}

// String formats the estimate: "0.731 ± 0.012 (3 seeds)" or "0.731 [0.70, 0.76] (3 seeds)"; "—" for no value
// (NaN, the convention of an untestable claim with nothing measured).
func (e Estimate) String() string {
	if math.IsNaN(e.Value) {
		return "—"
	}
	v := fmt.Sprintf("%.4g", e.Value)
	switch {
	case e.Hi > e.Lo:
		v += fmt.Sprintf(" [%.4g, %.4g]", e.Lo, e.Hi)
	case e.SE > 0:
		v += fmt.Sprintf(" ± %.2g", e.SE)
	}
	if e.Unit != "" {
		v += " " + e.Unit
	}
	if e.Seeds > 0 {
		v += fmt.Sprintf(" (%d seed", e.Seeds)
		if e.Seeds > 1 {
			v += "s"
		}
		v += ")"
	}
	return v
}

// Rule is how a claim is judged.
type Rule struct {
	Kind string `json:"kind"` // RuleWithin, RuleAtLeast, RuleAtMost or RuleHolds
	// Tol is RuleWithin's relative tolerance (0: the standard error alone).
	Tol float64 `json:"tol,omitempty"`
	// Bound replaces the paper's number as the bound of RuleAtLeast and RuleAtMost when HasBound is set.
	Bound    float64 `json:"bound,omitempty"`
	HasBound bool    `json:"has_bound,omitempty"`
	// Holds is RuleHolds' outcome, computed by the study from its stated Test.
	Holds bool `json:"holds,omitempty"`
	// Test states RuleHolds' test in words (and may say more for the other kinds).
	Test string `json:"test,omitempty"`
}

// Text states the rule in words for the report.
func (r Rule) Text() string {
	bound := "the paper's number"
	if r.HasBound {
		bound = fmt.Sprintf("%.4g", r.Bound)
	}
	var s string
	switch r.Kind {
	case RuleWithin:
		s = fmt.Sprintf("|ours − paper| ≤ max(%g·s.e., %g·|paper|)", Z, r.Tol)
	case RuleAtLeast:
		s = fmt.Sprintf("ours − %g·s.e. ≥ %s", Z, bound)
	case RuleAtMost:
		s = fmt.Sprintf("ours + %g·s.e. ≤ %s", Z, bound)
	case RuleHolds:
		s = r.Test
	}
	if r.Kind != RuleHolds && r.Test != "" {
		s += "; " + r.Test
	}
	return s
}

// Claim is one row as a study reports it.
type Claim struct {
	// ID is the docs/spec/papers.md id of the paper's number this row compares with ("" for a claim without one).
	ID string `json:"id"`
	// Claim says what is tested, in a few words.
	Claim string   `json:"claim"`
	Ours  Estimate `json:"ours"`
	// Method says how ours was measured: the protocol in a phrase (method, budget, evaluation data).
	Method string `json:"method"`
	Rule   Rule   `json:"rule"`
	// Untestable, when set, says why the preset cannot test the claim; the verdict is then NotTestable.
	Untestable string `json:"untestable,omitempty"`
	// Caveat, when set, names the study's own protocol checks that failed in the run this row comes from (a model
	// short of its plateau, say). It does not change the verdict, whose rule was fixed before the run; the
	// scorecard prints it beside the verdict so that no reader takes the row without it.
	Caveat string `json:"caveat,omitempty"`
}

// Validate reports a claim that cannot be judged.
func (c Claim) Validate() error {
	switch c.Rule.Kind {
	case RuleWithin, RuleAtLeast, RuleAtMost, RuleHolds:
	default:
		return errors.Errorf("claim %q: rule kind %q, want within, at_least, at_most or holds", c.Claim, c.Rule.Kind)
	}
	if c.Rule.Kind == RuleHolds && c.Rule.Test == "" {
		return errors.Errorf("claim %q: a holds rule needs its test in words", c.Claim)
	}
	if math.IsNaN(c.Ours.Value) && c.Untestable == "" {
		return errors.Errorf("claim %q: no value and no reason why it is untestable", c.Claim)
	}
	return nil
}

// Paper is the paper's side of a row, filled in from docs/spec/papers.md.
type Paper struct {
	Value    float64 `json:"value"`
	HasValue bool    `json:"has_value"`
	Text     string  `json:"text"`   // as the paper writes it, with its uncertainty and unit
	Source   string  `json:"source"` // spec section and paper table
}

// Verdict judges a claim against the paper's number by the claim's rule; the string says why in a phrase.
func Verdict(c Claim, p Paper) (string, string) {
	if c.Untestable != "" {
		return NotTestable, c.Untestable
	}
	o, s := c.Ours.Value, c.Ours.Spread()
	bound := p.Value
	if c.Rule.HasBound {
		bound = c.Rule.Bound
	}
	needPaper := (c.Rule.Kind == RuleWithin || (!c.Rule.HasBound && c.Rule.Kind != RuleHolds))
	if needPaper && !p.HasValue {
		return NotTestable, "the paper states no number to compare with"
	}
	var ok bool
	switch c.Rule.Kind {
	case RuleWithin:
		ok = math.Abs(o-p.Value) <= math.Max(s, c.Rule.Tol*math.Abs(p.Value))
	case RuleAtLeast:
		ok = o-s >= bound
	case RuleAtMost:
		ok = o+s <= bound
	case RuleHolds:
		ok = c.Rule.Holds
	}
	if ok {
		return Reproduced, c.Rule.Text()
	}
	return NotReproduced, c.Rule.Text()
}

// Row is one line of the scorecard.
type Row struct {
	Study   string `json:"study"`
	Claim   Claim  `json:"claim"`
	Paper   Paper  `json:"paper"`
	Preset  string `json:"preset"` // "small", "quick", "tiny", "paper" or "custom"
	From    string `json:"from"`   // the stored result file
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
}

// Markdown writes the scorecard as a markdown document: a summary of verdicts, then one table.
func Markdown(rows []Row, title, preamble string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", title, preamble)
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.Verdict]++
	}
	fmt.Fprintf(&b, "%d claims: %d %s, %d %s, %d %s, %d %s.", len(rows), counts[Reproduced], Reproduced,
		counts[NotReproduced], NotReproduced, counts[NotTestable], NotTestable, counts[NotRun], NotRun)
	if n := caveats(rows); n > 0 {
		fmt.Fprintf(&b, " %d rows carry a caveat: a protocol check of the run they come from failed (named beside "+
			"the verdict).", n)
	}
	b.WriteString("\n\n")
	b.WriteString("| study | claim | paper | ours | preset | method | verdict | rule | result |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		ours := r.Claim.Ours.String()
		if r.Verdict == NotRun {
			ours = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | **%s**%s | %s | %s |\n", r.Study, cell(r.Claim.Claim),
			cell(paperText(r.Paper)), cell(ours), r.Preset, cell(r.Claim.Method), r.Verdict,
			cell(caveatText(r)), cell(r.Why), cell(r.From))
	}
	return b.String()
}

// caveats counts the rows with a caveat.
func caveats(rows []Row) int {
	n := 0
	for _, r := range rows {
		if r.Claim.Caveat != "" && r.Verdict != NotRun {
			n++
		}
	}
	return n
}

// caveatText is what follows the verdict: the row's caveat, or "".
func caveatText(r Row) string {
	if r.Claim.Caveat == "" || r.Verdict == NotRun {
		return ""
	}
	return " — caveat: " + r.Claim.Caveat
}

func paperText(p Paper) string {
	s := p.Text
	if s == "" {
		s = "no number: the claim states it"
	}
	if p.Source != "" {
		s += " — " + p.Source
	}
	return s
}

// cell escapes a table cell: pipes and line breaks would end it.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

// HTML writes the scorecard as a standalone HTML page (no scripts, no external files): the same summary and table
// as Markdown.
func HTML(rows []Row, title, preamble string) string {
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n<style>\n"+
		"body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:90%%}"+
		"td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top}th{background:#f3f3f3}"+
		".reproduced{background:#e6f4e6}.not-reproduced{background:#fbe9e7}"+
		".not-testable-at-this-preset,.not-run{background:#f5f5f5;color:#666}\n</style></head><body>\n", esc(title))
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p>%s</p>\n", esc(title), esc(preamble))
	if n := caveats(rows); n > 0 {
		fmt.Fprintf(&b, "<p>%d rows carry a caveat: a protocol check of the run they come from failed (named beside "+
			"the verdict).</p>\n", n)
	}
	b.WriteString("<table>\n<tr>")
	for _, h := range []string{"study", "claim", "paper", "ours", "preset", "method", "verdict", "rule", "result"} {
		fmt.Fprintf(&b, "<th>%s</th>", h)
	}
	b.WriteString("</tr>\n")
	for _, r := range rows {
		ours := r.Claim.Ours.String()
		if r.Verdict == NotRun {
			ours = "—"
		}
		class := strings.ReplaceAll(r.Verdict, " ", "-")
		fmt.Fprintf(&b, "<tr class=\"%s\">", class)
		for _, c := range []string{r.Study, r.Claim.Claim, paperText(r.Paper), ours, r.Preset, r.Claim.Method,
			r.Verdict + caveatText(r), r.Why, r.From} {
			fmt.Fprintf(&b, "<td>%s</td>", esc(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n</body></html>\n")
	return b.String()
}
