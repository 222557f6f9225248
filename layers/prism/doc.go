// Package prism implements the PRISM prototype output head of D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo,
// "Prototype Language Models", arXiv:2607.00510 (PRISM: Prototypes for Interpretable Sequence Modeling), as
// specified in docs/spec/prism.md §1–§4: a decoder's final hidden state is reconstructed from a sparse, non-negative mix
// of k of K learned prototypes, and the logits split exactly into per-prototype slices plus a residual slice.
// It also computes the spec's coverage metrics and prototype-usage statistics.
//
// Shapes: B batch, T tokens, D width, K bank size, k selected prototypes per token (Config.TopK), V vocabulary,
// N tokens of a set. The bank is stored as P [K, D] with row i = p_i (the spec's P ∈ R^{D×K} is its transpose);
// the LM head W [V, D] is the decoder's (tied to the embedding or not).
//
// Head equations (spec §2.1; ε = Eps = 1e−6; sg = stop-gradient):
//
//	(1) s_{t,i} = ⟨z_t, p_i⟩ / (‖z_t‖·‖p_i‖ + ε)                              cosines [B, T, K]
//	(2) K_t = the k largest s_{t,i} (ties to the lower index)                   Indices [B, T, k]
//	(3) a_{t,i} = ReLU(s_{t,i}) for i ∈ K_t, else 0                            ("cos"); ·‖z_t‖/(‖p_i‖ + ε) for "norm"
//	(4) ẑ_t = Σ_{i∈K_t} a_{t,i} p_i,   r_t = z_t − ẑ_t
//	(5) l_t = W(r′_t + ẑ_t),  r′_t = r_t ("autodiff") or z_t − sg(ẑ_t) ("stopgrad")      so l_t = W z_t in value
//	(6) l_t[y] = (W r_t)[y] + Σ_{i∈K_t} a_{t,i}·(W p_i)[y]                     exact additivity (slices)
//
// Because the order of ReLU(s) is the order of s wherever ReLU(s) > 0, selecting on s is a TopK of ReLU(s) whose
// ties among the non-positive entries (all 0 after ReLU) are broken by the raw cosine; those entries get a = 0 and
// no gradient either way.
//
// Top-k and gradients (spec §2.2). Pass 1 computes (1) for the whole bank under stop-gradient and selects K_t with
// k rounds of ArgMax, each setting its pick to −∞ (gomlx has no TopK; ArgMax returns the first maximum). Pass 2
// gathers the k selected prototypes and recomputes their cosines with gradients, so gradients reach z_t and p_i
// only through selected entries with a positive cosine; unselected prototypes get exactly zero gradient. Under
// "autodiff" the two ẑ paths of (5) cancel exactly in the backward pass, so ∂L_CE/∂P = 0 exactly and ∂L_CE/∂z is
// the dense model's; under "stopgrad" L_CE reaches P (through a and p) and z (through the cosine and directly).
// L_REC uses r_t with ordinary autodiff in both variants.
//
// Losses (spec §3; the means run over B_tok, the non-pad tokens, N_B = |B_tok|):
//
//	(7)  L_CE  = mean_t −log softmax(l_t)[y_t]
//	(8)  L_REC = mean_t ‖r_t‖²/(‖z_t‖² + ε)   (RecNorm; else mean_t ‖r_t‖²)
//	(9)  L_R1  = (1/K) Σ_j (1/m) Σ_{t ∈ m nearest tokens of p_j} dist(p_j, sg(z_t))     m = R1Nearest
//	(10) L_R2  = (1/N_B) Σ_t min_j dist(sg(p_j), z_t)
//	(11) L = L_CE + λ_rec·L_REC + λ_1·L_R1 + λ_2·L_R2
//
// with dist = 1 − cos ("cos") or ‖·−·‖² ("sqL2"). The stop-gradients of (9) and (10) apply with ClusterGrad
// "split"; "both" removes them. The minima pick their token or prototype without gradients (the cosines of pass 1
// for "cos"), then recompute the chosen distance with gradients; this is the subgradient of min.
//
// Coverage (spec §4) over a held-out token set E, N_E = |E|, τ = CoverageThreshold:
//
//	(12) R̄1 = (1/K) Σ_j max_{t∈E} cos(p_j, z_t),   R2 = (1/N_E) Σ_{t∈E} max_j cos(z_t, p_j)
//	(13) #{j : max_t cos > τ}/K,   #{t : max_j cos > τ}/N_E
//
// CoverageStats reduces one batch in the graph; Coverage accumulates batches in Go (with the mean of
// Decomposition.RecRatio, E[‖r‖²/‖z‖²]). Usage accumulates, in Go from Indices and Activations, per-prototype use
// counts (a prototype is used when selected with a > 0), Σa and c_j = Σa², the co-usage matrix C = Σ_t a_t a_tᵀ
// (sparse), its off-diagonal mass, the usage entropy, the mean number of positive activations per token, the
// dead fraction, and the prototypes unused over a window of steps (dead-prototype resets, spec §2.3).
//
// Decomposition.TokenSlices gives the slices of (6) for one token per position; PositionSlices gives the full
// [N, k, V] slices at chosen positions (the [B, T, K, V] tensor is never formed); Signatures gives W p_i for the
// whole bank. Later analyses (curvature, attribution, steering) use Codes or Indices/Activations, the bank as a
// variable (BankVariable) and gradients through Decompose; DecomposeMasked removes prototypes before the top-k.
//
// Suppression (spec §10; suppress.go). A set Ω of prototypes, given as omega [K] with 1 for i ∈ Ω, is suppressed
// while r_t keeps its unsuppressed value (otherwise r = z − ẑ would restore the logits):
//
//	(14) SuppressZero: l′_t = l_t − Σ_{i∈Ω∩K_t} a_{t,i}·(W p_i)
//	(15) SuppressMask: l′_t = l_t + W(ẑ′_t − ẑ_t),   ẑ′_t the reconstruction of DecomposeMasked with Ω removed
//	     before the top-k, so that the next-best prototypes fill the slots
//	(16) active_t = 1 if some i ∈ Ω ∩ K_t has a_{t,i} > 0, else 0      (its mean: the fraction of tokens where Ω acts)
//
// SuppressedLogits computes (14) and (15) from a Decomposition, SuppressedActive (16); with Ω = ∅ both modes return
// the logits exactly. Tests: TestSuppressedLogits_MatchesReference (plain loops, every head variant),
// TestSuppressedLogits_EmptySetIsIdentity, TestSuppressedLogits_HandCase and TestSuppressedLogits_Panics.
//
// Bank objective (spec §5; objective.go). The curvature study differentiates the loss in P with the backbone frozen
// (z, W fixed), every loss summed over the N = B·T tokens and the K prototypes, no stop-gradient in R1 and R2:
//
//	(17) L(P) = N·(L_CE + λ_rec·L_REC + λ_2·L_R2) + K·λ_1·L_R1,   l_t = W(r_0,t + ẑ_t(P))
//
// BankObjective computes it. With r0 nil, r_0 = z − ẑ(P_0) is frozen at the current bank through the "stopgrad"
// residual (the value is W z; the first and second derivatives in P are those of (17)); with r0 given, the logits
// are (17)'s explicitly, which finite differences can see. Tests: TestBankObjective_MatchesReference (plain loops)
// and TestBankObjective_GradientsMatchFiniteDifferences (wbtest.CheckGradients in P; both r0 forms' gradients agree
// at P_0).
//
// Scope and variable (checkpoint path): Head creates VarPrototypes "prototypes" [K, D] under scope.At("prism") with
// N(0, InitStd²) entries; NoDecay lists it, so the optimizer exempts it from weight decay by name. The spec's
// default schedule (CE-only warm-up, then seeding the bank with sampled hidden states) is the training code's job.
//
// Defaults (spec §12): DefaultConfig is the small-scale plan (TestDefaultConfig_Spec pins it). The spec's own test
// list for the head is TestDecompose_SlicesSumToLogit, TestResidualVariants_DifferWhereSpecSays (∂L_CE/∂P = 0
// exactly under "autodiff") and TestTopK_GradientMatchesDenseMask.
//
// Stateless functions (Decompose, DecomposeMasked, Losses, SuppressedLogits, SuppressedActive, BankObjective,
// Cosines, CoverageStats, Signatures) take every weight as an argument; Head creates the variable. Graph functions
// panic on bad shapes; Config.Validate and the Go accumulators return errors.
package prism
