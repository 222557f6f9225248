// Package prismhead is the PRISM head study of D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo, "Prototype Language
// Models", arXiv:2607.00510 (docs/spec/prism.md): a decoder whose output pathway is the sparse prototype head of
// layers/prism (the PRISM LM of models/lm), compared with the dense-head decoder of the same backbone, data and token
// budget (lm.Config.Dense). It measures
//
//   - quality (quality.go; spec §3 "Weights", §4, §12 "Logging"): the loss and perplexity of both models on held-out
//     evaluation data, the head's coverage and usage on it (the dead-prototype reset of spec §2.3 is not
//     implemented; the dead fraction is reported instead), parameter counts and training throughput;
//   - curvature (curvature.go, curvature_problem.go; spec §5): the Hessian of the prototype-pathway objective with
//     respect to the bank, backbone frozen, computed exactly on the most used prototypes, split into its CE+REC and
//     clustering parts, and compared with the approximations of theory/curvature (its float64 oracle);
//   - the clustering-weight sweep (run.go, summary.go; spec §3 "Weights", §5, §8 "Conditioning sweep"): one PRISM
//     model per λ_1 = λ_2 and seed, with its quality, the coupling of its prototypes and the conditioning of its
//     Hessian.
//
// # Protocol
//
// Fixed in the Config before any result is read (Small is the protocol preset):
//
//   - Equal budgets. The dense and the PRISM models share the backbone, data, steps × batch and schedule; the PRISM
//     model's cross-entropy-only warm-up is part of its steps. Each kind's learning rate is chosen from the same
//     grid (tune.lrs) by its final loss on the validation split of a tuning seed (tune.seed) that no reported model
//     uses; every PRISM model of the sweep trains at the PRISM rate.
//   - Replicates. Each training seed (seeds) trains its own dense model and PRISM models, with its own data split,
//     tokenizer, batch order and bank seeding; comparisons are paired within a seed, and every number is a mean ±
//     s.e. over seeds.
//   - Held-out evaluation. Quality, coverage and curvature are measured on fresh documents of the synthetic corpus
//     (eval.seed), which no training run saw and no setting was chosen on. A second set (eval.held_seed) is kept
//     back until the settings are frozen (eval.use_held).
//   - Claims (claims.go) are judged by rules fixed in code (workbench/report): at least three seeds, else the row is
//     untestable.
//
// # Equations
//
// Coverage on the evaluation tokens E, N_E = |E|, τ = prism.coverage_threshold (spec §4; layers/prism (12)–(13)):
//
//	(1) R̄1 = (1/K) Σ_j max_{t∈E} cos(p_j, z_t),   R2 = (1/N_E) Σ_{t∈E} max_j cos(z_t, p_j)
//	(2) #{j : max_t cos > τ}/K,   #{t : max_j cos > τ}/N_E
//
// Quality: RelLoss = L_PRISM/L_dense − 1 (spec §3 "Weights": the validation loss within about 5% of the dense model)
// and RelPerplexity = PPL_PRISM/PPL_dense − 1; ThroughputRatio is the ratio of training tokens/s (spec §4).
//
// The curvature study differentiates, on the N tokens of curvature.batches evaluation batches with z_t, W and the
// residual r_t of the logits frozen (spec §5; layers/prism (17), prism.BankObjective),
//
//	(3) L(P) = Σ_t [ CE(W sg(r_t) + W P a_t(P), y_t) + λ_rec·REC_t(P) + λ_2·R2_t(P) ] + λ_1·Σ_j R1_j(P)
//
// exactly (double backpropagation in float64; the top-k and nearest-neighbour choices held at their forward values),
// on the principal submatrix of the M = curvature.prototypes most used prototypes J. Against it (theory/curvature
// equations 3–17; spec §5):
//
//	(4) H_CE ≈ C ⊗ S,   C = Σ_t a_t a_tᵀ,   S = (1/N) Σ_t Wᵀ(diag π_t − π_t π_tᵀ)W,   π_t = softmax(l_t)
//	(5) H ≈ C ⊗ S + 2λ_rec·C_rec ⊗ I + Δ ⊗ I,   Δ = diag(δ_j),   δ_j = 2λ_1 + 2λ_2·n_j         ("structured")
//	(5′) H ≈ C ⊗ S + 2λ_rec·C_rec ⊗ I + B_cos                              ("structured, cosine blocks")
//	(6) H_jj ≈ c_j S + (2λ_rec c_j^rec + δ_j) I,   off-diagonal blocks 0                         ("diagonal C")
//
// with C_rec = Σ_t a_t a_tᵀ/(‖z_t‖² + ε) (C with rec_norm false), n_j the tokens whose nearest prototype is j, and B_cos
// the block-diagonal Hessian of the cosine clustering terms the model trains with (theory/curvature (10), nearest
// choices frozen), in place of the spec's isotropic squared-L2 surrogate Δ ⊗ I. "GN routed" keeps the routing's
// Jacobian ∂a/∂P in the Gauss–Newton matrix of CE and REC (theory/curvature (17)), "frozen routing" drops it
// (theory/curvature (3)), both with B_cos. Every matrix A is scored against the exact H by ‖A − H‖_F/‖H‖_F, its mass on
// the D×D diagonal blocks, its spectrum and
//
//	(7) κ(A + λI) = (λ_max + λ)/(λ_min + λ),   λ = 0.1 × the mean diagonal entry of (5)        (spec §5 damping)
//
// The clustering terms involve one prototype each, so their Hessian H_clust is block-diagonal by construction, and
// the spec §5 damping grows with λ_1, λ_2 through δ_j: a block share of H or a κ at the model's own damping rises or
// falls with the clustering weight whatever C does. The sweep therefore also reports
//
//	(8) H_CE+REC = H − H_clust                    (H_clust: the exact Hessian of the λ_1, λ_2 terms alone)
//	(7′) κ(A + λ_fix I),   λ_fix = the damping (7) of the seed's smallest-weight model, held fixed across the sweep
//
// and spec §5's own coupling metric, the off-diagonal mass Σ_{i≠j}|C_ij| / Σ_ij |C_ij| of C over the whole bank. Raising
// λ_1 = λ_2 raises the floor δ_j and, by spec §5's argument ("Why clustering helps"), makes C more nearly diagonal; the
// sweep measures both and the loss they cost, and the claims test the second on C itself.
//
// # Storage
//
// Models are trained once under run.Out/models (lm.LoadOrTrain; the dense baseline of a seed is shared by every PRISM
// variant of that seed). Quality and curvature are cached per model in its run folder (quality-<hash>.json,
// curvature-<hash>.json), keyed by the model configs and the evaluation data; the study's result is stored under
// run.Out/prismhead/ (LoadOrRun).
package prismhead
