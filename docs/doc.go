// Package docs embeds the three paper specs of docs/spec and the table of the numbers the papers report
// (spec/papers.md), and parses that table.
//
// spec/papers.md is the only place where a paper's number is typed. A study, a test or the scorecard that needs one
// asks for it by its stable id with Paper (see ExamplePaper), or lists them all with Papers.
//
// Each row (a PaperNumber) carries the claim in words, the measured quantity, the value as written, its uncertainty
// and unit, the setting it comes from (model size, data, preset), its source (spec file and section, then the paper
// table or figure the spec cites) and the spec's provenance label ("paper", "reported, unconfirmed", "our
// computation", ...). A claim the spec states only in words has no value (HasValue is false).
//
// The specs themselves are available through Spec, by file name ("protot.md"), stem ("protot") or paper key ("fvec").
//
// The package imports nothing of ProtoLab (scripts/checkdeps.sh checks this), so any package may import it.
package docs
