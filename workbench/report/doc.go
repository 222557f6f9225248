// Package report is the scorecard: one row per claim of a paper that a study tests, with the paper's number, ours
// with its uncertainty and seeds, the preset and method it was measured with, the stored result it comes from, and
// a verdict computed by a stated rule. Studies compute their Claims from stored results; the CLI (`protolab
// report`) fills in the papers' numbers (docs/spec/papers.md, through package docs) and writes REPORT.md and an
// HTML page. Nothing here measures anything.
//
// # Verdicts
//
// A claim is judged by one rule, stated in the row:
//
//	within      reproduced when |ours − paper| ≤ max(z·s.e., tol·|paper|)       (ours agrees with the paper's number)
//	at_least    reproduced when ours − z·s.e. ≥ bound                           (bound: the paper's number unless given)
//	at_most     reproduced when ours + z·s.e. ≤ bound
//	holds       reproduced when the study's stated test holds (a qualitative claim, e.g. a ranking)
//
// with z = 2 (about a 95% two-sided interval for a mean over seeds). A claim the preset cannot test (too small a
// model, data the machine does not have) is "not testable at this preset" with the reason; a claim whose result is
// missing is "not run". Verdicts are never loosened to fit a measurement: the rule is fixed with the claim, in code,
// before any result is read.
//
// # Comparing two scorecards
//
// `protolab report --compare results/` sets a new scorecard (a `make reproduce` run) beside the shipped one, claim by
// claim (Compare). Two rows agree when their verdicts are the same and the new value lies within the shipped row's
// spread, the half-width the rules use (Estimate.Spread: z·s.e., or half the 95% interval):
//
//	agrees           same verdict, and |new − shipped| ≤ spread(shipped)     (Agree), or no value on either side
//	differs          same verdict, |new − shipped| > spread(shipped); the size is the difference in shipped spreads
//	                 (or a value on one side only)
//	verdict changed  the verdicts differ
//	missing          a row only one scorecard has, a row not run, or rows of different presets
//
// A shipped value without a spread agrees only with an equal value. A "not testable" row is compared by its value
// too when it has one (a reported metric without a paper number, a cost model); only rows that measured nothing
// (NaN on both sides) agree without a value. "differs" and "verdict changed" fail the check.
package report
