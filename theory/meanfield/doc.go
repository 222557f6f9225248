// Package meanfield computes the theory baselines of
//
//	R. Raj, G. Reddy, "Adaptive inference and function vectors in deep transformers", arXiv:2606.16694 (2026),
//
// as reconstructed in docs/spec/function_vectors.md §3, §4 and §8: the measurement-noise model of a linear-attention
// statistic, the optimal MSE under the Gaussian prior, the adaptive and non-adaptive MSE curves under the tree prior,
// the exact posterior over tree leaves, the linear (Model C) baseline, the full-data Bayes bound, a dynamic programme
// for the optimal adaptive strategy on small trees, and key patching in the measurement model. It is float64,
// depends only on the standard library, gonum and theory/prior, and is the independent oracle against which the
// trained linear-attention models A, B and C are plotted.
//
// # Notation (package-local, as in the spec)
//
// D dimension of x and θ; N tokens per context; L layers; d channels per layer; M = L·d measurements; K tree depth;
// α tree scale ratio; s label-noise std; τ² per-measurement noise variance; λ_n prior variance of node n; c the
// tree's normalisation factor (1 by default). Nodes n = 1 … 2^K − 1 are in heap order (package prior).
//
// # Equations
//
// Mean-field state (§3): a local embedding ψ, a uniform linear-attention statistic and a concatenated workspace,
//
//	(3.1)  φ_{ℓ+1} = (1/N) Σ_i ψ_{ℓ+1}(z_i; Φ_ℓ),   Φ_{ℓ+1} = Φ_ℓ ⊕ φ_{ℓ+1}
//
// Optimal adaptive design (dynamic programme over the class Ψ of embeddings):
//
//	(3.2)  V_L(Φ_L) = tr Cov(θ | Φ_L),   V_ℓ(Φ_ℓ) = min_{ψ∈Ψ} E[V_{ℓ+1}(Φ_ℓ ⊕ φ_{ℓ+1}) | Φ_ℓ],   optimum = E V_0
//
// Linear-attention measurement identity for ψ(z; u) = (uᵀx)·y on Gaussian tokens (Isserlis):
//
//	(3.3)  E[φ | θ] = uᵀθ
//	(3.4)  Var[φ | θ] = (‖u‖²(‖θ‖² + s²) + (uᵀθ)²)/N
//	(3.5)  Cov[φ_u, φ_u′ | θ] = ((uᵀu′)(‖θ‖² + s²) + (uᵀθ)(u′ᵀθ))/N
//	(3.6)  τ² = (E‖θ‖² + s² + E(uᵀθ)²)/N   (‖u‖ = 1; Gaussian: (D + 1 + s²)/N; tree key e_n: (E‖θ‖² + s² + λ_n)/N)
//
// Measurement model of §4 (independent noise; real tokens give correlated, θ-dependent noise, eqs. 3.4–3.5):
//
//	(4.1)  m_ℓ = u_ℓᵀθ + η_ℓ,   ‖u_ℓ‖ = 1,   η_ℓ ~ N(0, τ²)
//
// Gaussian prior θ ~ N(0, I_D) (§4.1): the posterior covariance does not depend on the m's, so adaptivity cannot
// help, and the optimum over unit designs is
//
//	(4.2)  Cov(θ | m) = (I + Σ_ℓ u_ℓu_ℓᵀ/τ²)^{−1}
//	(4.3)  MSE = D − L/(1 + τ²) (L ≤ D, orthonormal),   MSE = D/(1 + L/(Dτ²)) (L ≥ D, tight frame)
//	(4.4)  MSE_linear keys = D τ²/(1 + τ²) for all L ≥ D   (one context gives one D-vector (1/N)Σ_i x_i y_i)
//
// Tree prior (§4.2–4.4), with K_M = ⌊log₂(M + 1)⌋ and f = (M − 2^{K_M} + 1)/2^{K_M}:
//
//	(4.5)  MSE_A(L)  = c² Σ_{k=L+1..K} α^{2(k−1)} = c²(α^{2L} − α^{2K})/(1 − α²)            greedy adaptive, τ → 0
//	(4.6)  MSE_NA(M) = c²[(1 − f)α^{2K_M} + Σ_{k=K_M+2..K} α^{2(k−1)}]                       BFS nodes 1…M, τ → 0
//	(4.7)  MSE_NA(M) ≈ c²(M + 1)^{−2 log₂(1/α)}/(1 − α²)                                      power law
//	(4.8)  MSE_C(M)  = Σ_{n≤M} λ_n τ_n²/(λ_n + τ_n²) + Σ_{n>M} λ_n                             linear readout
//
// Exact posterior over the 2^K leaves (§4.5), for measured nodes S with values m_n and v_{σ,n} = e_nᵀθ_σ:
//
//	(4.9)  log w_σ = Σ_{n∈S} (2 m_n v_{σ,n} − v_{σ,n}²)/(2τ²),   θ̂ = Σ_σ w_σ θ_σ / Σ_σ w_σ
//
// Non-adaptive level designs (§4.3 generalised; our addition): channel j weights every node of level k alike,
// u_j = Σ_k W_jk·1_k/‖·‖, so that whatever the path
//
//	(4.12) u_jᵀθ_σ = Σ_k W_jk·c·α^{k−1}·g_k(σ)/‖u_j‖,   ‖u_j‖² = Σ_k W_jk²·2^{k−1},   τ_j² from eq. (3.6)
//
// and the readout is eq. (4.9) with u_j in place of e_n.
//
// Unconstrained bounds from full data X [N, D], y [N] (§4.6):
//
//	(4.10) w_σ ∝ exp(−‖y − Xθ_σ‖²/(2s²))                                                       Bayes bound
//	(4.11) MSE_lin = E_X tr(Λ^{−1} + XᵀX/s²)^{−1},   Λ = Cov θ   (the MMSE itself for the Gaussian prior: ridge)
//
// Key patching (§7): with target σ and donor σ′ first differing at level j, and the target reading the donor's key
// at layer ℓ only,
//
//	(7.1)  ΔMSE(j, ℓ) = E‖θ_σ − θ̂_patched‖² − E‖θ_σ − θ̂_clean‖²   (= 0 exactly for j ≥ ℓ with shared noise)
//
// # What is where
//
//   - measurement.go: eqs. (3.3)–(3.6): Statistic, StatisticVar, StatisticCov, GaussianTau2, NodeTau2, TokenTau2.
//   - gaussian.go: eqs. (4.2)–(4.4): GaussianOptimalMSE, GaussianLinearKeyMSE, OptimalGaussianDesign, DesignMSE,
//     and the Monte Carlo checks GaussianBayesMC (adaptive or not) and GaussianLinearReadoutMC (real tokens).
//   - treeforms.go: eqs. (4.5)–(4.8): AdaptiveNoiseless, NonAdaptiveNoiseless, PowerLaw, LMMSE, LMMSETokens.
//   - posterior.go, treemc.go: eq. (4.9) and the Monte Carlo curves AdaptiveMC, NonAdaptiveMC, LinearMC, in the
//     measurement model or on real tokens (AdaptiveMC on tokens is the hand-wired ideal Model A of spec §5).
//   - design.go: eq. (4.12): LevelDesign, LevelDesignMC and the local search BestLevelDesign.
//   - bound.go: eqs. (4.10)–(4.11): TreeBayesBound, FullDataLMMSE.
//   - dp.go: eq. (3.2) with Ψ = single node keys: OptimalNoiseless (exact, over leaf sets), DP (noisy, quadrature),
//     and OptimalNonAdaptiveNoiseless (brute force over node sets).
//   - patch.go: eq. (7.1): PatchDelta; patchstats.go: SharedPrefix and PatchDecay, the two summaries of a ΔMSE(j, ℓ)
//     matrix that the function-vector study's claims compare between a trained model and the ideal one.
//   - curves.go: TreeCurves and GaussianCurves, everything a figure needs as plain slices (the theory curves of
//     spec §6).
//   - tokencurves.go: TreeTokenCurves (the ideal models A and B on real tokens and the noise-free DP optimum beside
//     a trained model) and ReestimatedLevelDesign (the best level design with an unbiased MSE, model B's reference).
//
// Monte Carlo functions take a seed (never a generator) so that their results do not depend on GOMAXPROCS; they
// return Estimate values (mean, standard error, samples). Samplers in package prior take a *rand.Rand.
//
// # Beyond the spec: the optimal adaptive and non-adaptive designs
//
// Greedy binary search, the spec's ideal Model A, is not the optimal adaptive strategy over node keys: reading a
// deep node also reveals whether the path passes through it, so OptimalNoiseless lies at or below AdaptiveNoiseless
// (TestOptimalNoiseless_SpecialCases; with noise the gain shrinks, DP.Optimal against DP.Greedy). Likewise BFS is not the best non-adaptive node set for a Bayes readout
// (OptimalNonAdaptiveNoiseless); the depth-vs-width gap stays exponential vs power law.
//
// Neither node-key curve bounds a model whose keys are arbitrary linear functions of x (model B of the spec): one
// channel that weights several levels carries several path bits, each at a reduced signal-to-noise ratio. With the
// per-channel noise of real tokens (eq. 3.6), BestLevelDesign searches such level designs, and the adaptive advantage
// that is left is measured against it rather than against BFS node keys: experiments/fvec stores the design's MSE at
// every M of its sweep (TreeResult.BestDesign) beside greedy binary search on tokens.
package meanfield
