// Package stats holds the generic statistics every study shares, once: moments and standard errors, the median, a
// bootstrap interval, ranks and rank correlations, top-k agreement, softmax, the Jensen–Shannon divergence, the Gini
// coefficient and the binomial upper tail. Everything is float64 on plain slices, and no function modifies its input.
// The ProtoT diagnostics (docs/spec/protot.md §6: Gini of the hub masses, read/write JS) and robustness metrics (§7.5:
// JS divergence in nats, top-k overlap, Spearman over the union of the top-k sets) are computed with these, and so are
// the attribution comparisons of docs/spec/prism.md §8 (Overlap@k, Spearman over the union of the top-k sets, the
// bootstrap interval over queries, the median latency).
//
// Undefined values are NaN (the mean of nothing, the spread of one value, the correlation with a constant). A study
// that must write such a value into JSON replaces it with its own documented choice at the call site.
//
// # Moments (stats.go)
//
// For x_1 … x_n, summed left to right in a plain loop:
//
//	(1) Mean:      x̄ = (1/n) Σ_i x_i                                              NaN for n = 0
//	(2) Variance:  s² = Σ_i (x_i − x̄)² / (n − 1)   (two-pass, Bessel's n − 1)      NaN for n < 2
//	(3) StdDev:    s = √s²
//	(4) MeanSE:    x̄ and se = √(s²/n), the standard error of the mean             se NaN for n < 2
//
// # Median (stats.go)
//
// With x_(1) ≤ … ≤ x_(n) the sorted values (1-based),
//
//	(5) median = x_((n+1)/2)                      for odd n
//	    median = (x_(n/2) + x_(n/2+1)) / 2        for even n (the mean of the two middle values); NaN for n = 0
//
// # Bootstrap interval (stats.go)
//
//	(6) MeanCI: x̄ of the non-NaN values and the percentile interval [m*_(⌊α(R−1)⌋+1), m*_(⌊(1−α)(R−1)⌋+1)],
//	    α = (1 − level)/2, over R resampled means m*_(1) ≤ … ≤ m*_(R) (resampling with replacement, seeded PCG).
//
// # Ranks and correlations (rank.go)
//
//	(7) Ranks: rank 1 is the smallest value. Ties share the average of the positions they span: a run of equal
//	    values at sorted positions i … j (1-based) gets rank (i + j)/2 each, so the ranks always sum to n(n+1)/2.
//	(8) Pearson:  r = Σ_i (x_i − x̄)(y_i − ȳ) / √( Σ_i (x_i − x̄)² · Σ_i (y_i − ȳ)² )   NaN for n < 2 or a constant
//	(9) Spearman: ρ = Pearson(Ranks(x), Ranks(y))
//	(10) TopK(x, k): the indices of the k largest values, largest first; ties go to the lower index; k is clipped
//	    to n.
//	(11) Overlap(a, b) = |a ∩ b| / |a| for two top-k index lists of equal length (0 for empty lists).
//	(12) SpearmanTopK(x, y, k) = ρ of x and y restricted to U = TopK(x, k) ∪ TopK(y, k). The ranks are multiples
//	    of ½, so every sum in (8) is exact and ρ does not depend on the order of U.
//
// # Distributions (dist.go)
//
//	(13) Softmax: softmax(l)_i = exp(l_i − m) / Σ_j exp(l_j − m),  m = max_j l_j. Subtracting m leaves the value
//	     unchanged and keeps every exp in (0, 1], so logits of 1000 do not overflow.
//	(14) JensenShannon: JS(p, q) = ½ KL(p‖m) + ½ KL(q‖m),  m = ½(p + q),  KL(p‖m) = Σ_i p_i ln(p_i/m_i) with
//	     0·ln 0 = 0; in nats, within [0, ln 2] (a rounding error below 0 is returned as 0).
//	(15) Gini: G = Σ_i Σ_j |x_i − x_j| / (2 n Σ_i x_i) for non-negative x: 0 when all are equal, (n − 1)/n when
//	     one value holds everything; 0 for n = 0 or Σ x = 0.
//	(16) BinomialTail: Pr[X ≥ k] for X ~ Binomial(n, q),
//	     Σ_{j=k}^{n} exp( lnΓ(n+1) − lnΓ(j+1) − lnΓ(n−j+1) + j ln q + (n−j) ln(1−q) ),
//	     clipped to 1; 1 for k ≤ 0 and 0 for k > n.
//
// # Why not gonum/stat
//
// The studies' published numbers come from the plain loops above, and gonum differs from them in the last bits:
// stat.Mean sums with floats.Sum (unrolled assembly on amd64, another summation order), stat.Variance, StdDev and
// Correlation use the corrected two-pass formula (they subtract (Σ(x_i − x̄))²/n), stat.Quantile(0.5, …) returns a
// middle value rather than the mean of the two for an even n, and stat.JensenShannon computes ln p − ln m instead of
// ln(p/m). On 1000 random samples (2–200 values) stat.Mean differed from (1) in 67% of cases, stat.Variance from (2)
// in 46% and stat.Correlation from (8) in 69%, by about 1e-16 relative. So this package keeps the loops, and gonum
// stays what it is elsewhere in ProtoLab: linear algebra.
package stats
