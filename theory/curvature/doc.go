// Package curvature is the float64 algebra of the Hessian of a PRISM model's loss with respect to its prototype
// bank, backbone frozen (docs/spec/prism.md §5, "Hessian structure in prototype space"; D. Ley et al., "Prototype Language
// Models", arXiv:2607.00510). It builds the exact Gauss–Newton matrix of the prototype pathway, its Kronecker-factored
// (K-FAC) approximation, the spec's structured approximation with the co-usage coupling and block-diagonal clustering
// terms, and the metrics that compare them: relative Frobenius error, mass on the diagonal blocks, off-diagonal mass
// of the co-usage matrix and condition numbers. It depends only on the standard library and gonum, so it is an
// oracle independent of the gomlx graphs it is compared with.
//
// # Notation
//
// As in spec §1: K prototypes of width D; the bank P ∈ R^{D×K} has columns p_j (the workbench stores its transpose
// [K, D]). V is the vocabulary, W ∈ R^{V×D} the LM head. A token t has hidden state z_t, a sparse code a_t ∈ R^K
// (Code: the non-zero entries), gold token y_t and logits l_t. vec(P) stacks the columns, so entry m of prototype j
// is at index j·D + m, and vec(u aᵀ) = a ⊗ u. An H of size KD×KD has K×K blocks H_ij of size D×D.
//
// # Equations
//
// With the routing a_t held fixed, l_t(P) = W r_t + W P a_t is linear in P, and
//
//	(1) π_t = softmax(l_t),   G_t = Wᵀ(diag π_t − π_t π_tᵀ)W                      output curvature [D, D]
//	(2) ∂CE_t/∂P = u_t a_tᵀ,   u_t = Wᵀ(π_t − e_{y_t})                              per-token gradient
//	(3) H_GN = Σ_t (a_t a_tᵀ) ⊗ G_t                                                exact for frozen routing
//	(4) C = Σ_t w_t a_t a_tᵀ  (w_t = 1: co-usage C; w_t = 1/(‖z_t‖² + ε): C_rec)   [K, K]
//	(5) S = (1/N) Σ_t G_t   (expected Fisher; E_{ŷ∼π}[ũũᵀ] = G_t with ũ = Wᵀ(π − e_ŷ))
//	(6) H_KFAC = C ⊗ S
//	(7) δ_j = 2λ_1 + 2λ_2·n_j,   n_j = #{t : j is the nearest prototype of z_t}
//	(8) H_struct = C ⊗ S + 2λ_rec·C_rec ⊗ I_D + diag(δ) ⊗ I_D
//	(9) H_diagC: the blocks H_jj = c_j S + (2λ_rec c_j^rec + δ_j) I_D of (8), zero off-diagonal blocks
//
// (8) treats the losses as sums over tokens: L = Σ_t CE_t + λ_rec Σ_t w_t ‖z_t − P a_t‖² + λ_1 Σ_j ‖p_j − z_{t(j)}‖² +
// λ_2 Σ_t ‖z_t − p_{j(t)}‖² with squared-L2 clustering terms (the spec's isotropic surrogate). For the cosine
// distance the clustering Hessian of one pair is, with q = p/‖p‖, w = z/‖z‖, c = ⟨q, w⟩,
//
//	(10) ∇²_p (1 − cos(p, z)) = (w qᵀ + q wᵀ + c(I − 3 q qᵀ)) / ‖p‖²      (= (I − q qᵀ)/‖p‖² when p ∥ z)
//
// With the routing's dependence on P included (cosine activations a_i = ReLU(cos(z, p_i)), top-k set fixed), the
// reconstruction ẑ = Σ_i a_i p_i has the Jacobian blocks
//
//	(15) ∇_p a = (w − c q)/‖p‖  for c > 0 (else 0)
//	(16) J_i = ∂ẑ/∂p_i = a_i I + p_i (∇_{p_i} a_i)ᵀ
//	(17) H_GN,routed = Σ_t Σ_{i,j∈K_t} E_i J_iᵀ M_t J_j E_jᵀ,   M_t = G_t + 2λ_rec w_t I
//
// (E_i places a D×D block at prototype i), the Gauss–Newton matrix of the CE and REC terms; the exact Hessian adds
// the second-order terms Σ_t (∂L_t/∂ẑ)·∂²ẑ/∂P², which this package does not form.
//
// Metrics, for matrices A (approximation) and H (reference):
//
//	(11) relative Frobenius error ‖A − H‖_F / ‖H‖_F
//	(12) block mass Σ_j ‖H_jj‖_F² / ‖H‖_F²   (1 for a block-diagonal H)
//	(13) off-diagonal mass of C: Σ_{i≠j} |C_ij| / Σ_ij |C_ij|
//	(14) condition number κ = λ_max/λ_min of a symmetric matrix (+Inf when λ_min ≤ 0)
//
// All of (3)–(9) restrict to a set J of prototypes as principal submatrices: (C ⊗ S)_JJ = C_JJ ⊗ S, so Restrict
// maps the codes onto J and every builder then works on |J|·D × |J|·D matrices.
package curvature
