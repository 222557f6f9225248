// Package naming names and scores units against ground-truth token labels, without an outside judge (docs/spec/
// protot.md §7.3, where an LLM judge gives a label, a disentanglement and a coverage score and counts themes), and
// compares two next-token distributions (§7.5). It is paper-agnostic: a unit is anything with one activation per
// token (a prototype's routing weight, an attention head's output norm, a sparse-autoencoder feature), and a label
// is any string a token carries ("gender=female", "noun.person").
//
// # Tokens and top sets (tokens.go)
//
// Tokens is the labelled evaluation set: N tokens, each with its document and the ids of the labels it carries.
// The base rate b_ℓ is the fraction of the N tokens carrying label ℓ (Tokens.BaseRates). A unit's top set is the K
// tokens of largest activation, at most one per document when onePerDoc (ties: the earlier token; NaN is never
// selected) (TopTokens). A null unit's top set is K random tokens from K random documents (NullTokens): the chance
// level of every metric.
//
// # Metrics (score.go)
//
// For each label ℓ, with c_ℓ the number of the K top tokens carrying it (ScoreUnit):
//
//	(1) purity      p_ℓ = c_ℓ / K
//	(2) excess      e_ℓ = (p_ℓ − b_ℓ) / (1 − b_ℓ)            0 at chance, 1 when every top token carries ℓ
//	(3) label       ℓ* = argmax_ℓ e_ℓ over e_ℓ > 0           (no label when none is over-represented)
//	(4) coverage    C = p_ℓ*                                 "how much of the examples the main label explains"
//	(5) disentangl. D = e_ℓ* / Σ_ℓ max(e_ℓ, 0)               1 when one label alone is over-represented; 1/m for m equal
//	(6) themes      #{ℓ : e_ℓ ≥ θ}                           θ = ScoreParams.ThemeExcess
//	(7) p-value     P = min(1, L · Pr[Bin(K, b_ℓ*) ≥ c_ℓ*])  L eligible labels (Bonferroni; stats.BinomialTail)
//	(8) named       C ≥ ScoreParams.MinPurity and P ≤ ScoreParams.Alpha
//
// C, D and the theme count are 0, 0 and 0 for a unit with no over-represented label, and P is 1. Labels with
// b_ℓ ∈ {0, 1} are not eligible. Higher C and D and fewer themes are better.
//
// # Summaries (summary.go)
//
// A unit kind reports (Summarize) the mean ± sd of C, D and the theme count over its units (MeanSD: the sample
// standard deviation, n − 1), the fraction of named units, the fraction of the given concept labels that name at
// least one of its units, and the fraction of concepts (the part of a label before "=", ConceptOf) one of whose
// labels does. SelectFeatures picks the columns of an activation matrix to score: the k of largest variance, or of
// largest firing frequency #{n : a_nf > 0}/N.
//
// # Next-token comparisons (compare.go)
//
// For two next-token distributions p and p′ (spec §7.5; the Jensen–Shannon divergence is stats.JensenShannon):
//
//	(9)  top-k overlap   |top_k(p) ∩ top_k(p′)| / k                                      (TopKOverlap)
//	(10) top-1 agreement argmax p = argmax p′                                            (Top1Agree)
//	(11) Spearman        ρ of p and p′ over U = top_k(p) ∪ top_k(p′); 0 where undefined (SpearmanTopK)
package naming
