// Package influence computes training-data attribution scores from per-token activations and gradients, with no
// knowledge of the model that produced them: the caller runs its forward and backward passes and hands over plain
// float slices. It holds three families of methods and the tools to compare them: the attribution methods,
// baselines and measures of docs/spec/prism.md §6–§8 with the curvature of §5, checked by the tests of §12
// (TestBlocks_ExactWhenOnePrototypePerToken, TestKronSum_CGMatchesDenseSolve,
// TestEKFAC_KFACEigenvaluesGiveKroneckerInverse).
//
// Sign convention (Koh and Liang, as in kronfluence): I(q, s) = vec(G_q)ᵀ (H + λI)⁻¹ vec(G_s), where G is the
// gradient of a summed token loss; positive means helpful (up-weighting s lowers the query loss).
//
// # EK-FAC and gradient dot products over linear layers (ekfac.go)
//
// A tracked linear layer y = W x has W [Out, In]. Per token t it sees the input a_t [In] (append a 1 for a bias) and
// the pre-activation output gradient g_t [Out]; a sequence n has the gradient G_n = Σ_{t∈n} g_t a_tᵀ [Out, In].
// Factor fitting, as in kronfluence (pomonam/kronfluence, docs/spec/prism.md §7.1):
//
//	(1) A = (1/N_A) Σ_t a_t a_tᵀ,  S = (1/N_S) Σ_t g_t g_tᵀ,  each symmetrised as (M + Mᵀ)/2
//	(2) A = Q_A diag(λ_A) Q_Aᵀ,  S = Q_S diag(λ_S) Q_Sᵀ                       (float64 eigendecomposition)
//	(3) Λ = (1/N_seq) Σ_n (Q_Sᵀ G_n Q_A)^{∘2}   (EK-FAC)   or   Λ = λ_S λ_Aᵀ (K-FAC)      [Out, In]
//	(4) λ = DampingScale · mean(Λ) per layer, unless a damping is given
//	(5) Ĝ = Q_S [ (Q_Sᵀ G Q_A) ⊘ (Λ + λ) ] Q_Aᵀ                               (inverse-HVP of G)
//	(6) I(q, n) = Σ_layers ⟨Ĝ_q, G_n⟩_F,    I_GD(q, n) = Σ_layers ⟨G_q, G_n⟩_F  (gradient dot product)
//
// The g used in (1) and (3) should come from labels sampled from the model (true Fisher); the G scored in (6) from
// the true labels. Then (5) is the exact damped inverse of the Fisher F = (1/N_seq) Σ_n vec(G_n) vec(G_n)ᵀ whenever F
// is diagonal in the eigenbasis Q_A ⊗ Q_S (tests construct such a case), and K-FAC's (A ⊗ S + λI)⁻¹ with the K-FAC
// eigenvalues.
//
// # Sparse-coded linear layers: cached attribution (codes.go, blocks.go)
//
// A layer ẑ_t = P a_t with P [D, K] and a sparse code a_t [K] of at most k non-zeros (a PRISM prototype bank) has the
// token gradient u_t a_tᵀ, u_t [D] the output gradient, so a sequence's gradient has non-zero columns only at its
// active set act(s) = ∪_t supp(a_t):
//
//	(7) G_s = Σ_{t∈s} u_t a_tᵀ,   column j: g_{s,j} = Σ_{t∈s} a_{t,j} u_t
//
// ColumnGradients returns the non-zero columns g_{s,j}; CodeGradient the dense G [D, K] with a weight w_t per token,
// G = Σ_t w_t u_t a_tᵀ, the gradient with respect to P of L(P) = Σ_t w_t ℓ_t(P a_t) when u_t = ∂ℓ_t/∂ẑ_t (PRISM's
// cross-entropy with frozen codes: u_t = Wᵀ(softmax(l_t) − e_{y_t}), docs/spec/prism.md §5).
//
// Curvature model (docs/spec/prism.md §5): with C = Σ_t a_t a_tᵀ [K, K] (co-usage), S = (1/N) Σ_t ũ_t ũ_tᵀ [D, D] from
// sampled labels, and a symmetric [K, K] matrix E of extra terms acting as E ⊗ I_D (PRISM: 2λ_rec·C_rec + Δ),
//
//	(8) H = C ⊗ S + E ⊗ I_D + λI
//	(9) H_jj = C_jj S + (E_jj + λ) I = Q diag(C_jj σ_m + E_jj + λ) Qᵀ,  S = Q diag(σ) Qᵀ   (diagonal-C blocks)
//	(10) λ = DampingScale · mean_{j,m}(C_jj σ_m + E_jj)
//	(11) I(q, s) = Σ_{j ∈ act(q) ∩ act(s)} g_{q,j}ᵀ (H_jj)⁻¹ g_{s,j}
//	          = Σ_{j ∈ act(q)} Σ_{(s, t, a_{t,j}) ∈ post_j} a_{t,j} ⟨g̃_{q,j}, u_t⟩,   g̃_{q,j} = (H_jj)⁻¹ g_{q,j}
//
// CodeCache stores, once, each training token's code (k indices, k activations) and u_t, and the postings list of
// every column j: (sequence, token, a_{t,j}). A query then costs |act(q)|·D² for (9) plus Σ_{j∈act(q)} |post_j|·D for
// (11), with no backward pass over training data. Unpreconditioned, (11) is the prototype-space gradient dot product.
//
// ColumnCache (columns.go) stores instead the columns g_{s,j} themselves, once per sequence and used column, grouped
// by column. Any preconditioned query x = (H + λI)⁻¹ vec(G_q), with the blocks of (9) or the full H of (8), is then
// scored exactly as
//
//	(12) I(q, s) = Σ_{j ∈ supp(x) ∩ act(s)} ⟨x_j, g_{s,j}⟩
//
// at Σ_{j∈supp(x)} |post_j|·D per query. Because it keeps sums rather than per-token factors, its columns may carry
// terms that are not of the form a_{t,j} u_t (PRISM: the routing term ∂a/∂P through the cosine), which CodeCache
// cannot represent.
//
// # Reference solver (kron.go)
//
// KronSum is (8) with the full sparse C and E; Solve finds x = H⁻¹ b by conjugate gradients preconditioned with the
// blocks of (9), to a relative residual tolerance, using (C ⊗ S) vec(X) = vec(S X C) for X [D, K] (stored as K rows
// of D: row j is column j). KronEigenSolver solves (8) exactly: with S = Q diag(σ) Qᵀ and x̃_j = Qᵀ x_j, H splits
// into D independent K×K systems
//
//	(13) (σ_m C + E + λI) x̃_{·,m} = b̃_{·,m},   m = 1 … D
//
// # Co-usage solver (cousage.go)
//
// CoUsage holds one H of (8) and picks its solver once: (13) with one inverted K×K system per eigenvalue of S (D·K²
// floats) when K is at most a given bound, else the preconditioned CG of KronSum. SolveColumns takes and returns
// gradients in the column form of (7) and (12), so that a query's x = H⁻¹ vec(G_q) is scored by ColumnCache.Scores.
//
// # Comparisons (rank.go)
//
// The linear datamodeling score LDS = mean over queries of the Spearman correlation, across M training subsets,
// between the summed predicted influence of each subset and the query loss of a model retrained on it. The generic
// pieces (TopK, Overlap, Spearman, the bootstrap interval of a mean) are in workbench/stats.
//
// Layouts: matrices are row-major []float64; Q matrices hold eigenvectors as columns, eigenvalues ascending.
package influence
