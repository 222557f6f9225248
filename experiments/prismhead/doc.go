// Package prismhead is the PRISM head study of D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo, "Prototype Language
// Models", arXiv:2607.00510 (docs/spec/prism.md): a decoder whose output pathway is the sparse prototype head of
// layers/prism (the PRISM LM of models/lm), compared with the dense-head decoder of the same backbone, data and token
// budget (lm.Config.Dense). It measures
//
//   - quality (models/prism's ComputeQuality; spec §3 "Weights", §4, §12 "Logging"): the loss and perplexity of both
//     models on held-out evaluation data, the head's coverage and usage on it (the dead-prototype reset of spec §2.3
//     is not implemented; the dead fraction is reported instead), parameter counts and training throughput;
//   - curvature (models/prism's ComputeCurvature; spec §5): the Hessian of the prototype-pathway objective with
//     respect to the bank, backbone frozen, computed exactly on the most used prototypes, split into its CE+REC and
//     clustering parts, and compared with the approximations of theory/curvature (its float64 oracle);
//   - the clustering-weight sweep (run.go, summary.go; spec §3 "Weights", §5, §8 "Conditioning sweep"): one PRISM
//     model per λ_1 = λ_2 and seed, with its quality, the coupling of its prototypes and the conditioning of its
//     Hessian.
//
// # Protocol
//
// Fixed in the Config before any result is read (Small is the protocol preset: protocol v2, docs/PROTOCOL.md). Each
// corpus of Config.Corpora (the synthetic corpus and the Brown corpus in Small; data.source alone when empty) runs
// the whole protocol alone, with the same settings:
//
//   - Equal budgets. The dense and the PRISM models share the backbone, data, steps × batch and schedule; the PRISM
//     model's cross-entropy-only warm-up is part of its steps. Each kind's learning rate is chosen from the same
//     grid (tune.lrs) by its final loss on the corpus's validation split with a tuning seed (tune.seed) that no
//     reported model uses; every PRISM model of the sweep trains at the PRISM rate of its corpus.
//   - Replicates. Each training seed (seeds) trains its own dense model and PRISM models, with its own data split
//     (the Brown corpus's split is fixed), tokenizer, batch order and bank seeding; comparisons are paired within a
//     seed, and every number is a mean ± s.e. over seeds.
//   - Held-out evaluation. Quality, coverage and curvature are measured on the corpus's evaluation documents, which
//     no training run saw and no setting was chosen on (lm.Model.FreshCorpus): eval.docs fresh documents of the
//     synthetic corpus (eval.seed), or the first eval.brown_docs documents of the Brown test split (eval.seed odd).
//     A second set (eval.held_seed: other synthetic documents, or the Brown held-out split, an even seed) is kept
//     back until the settings are frozen (eval.use_held).
//   - Claims (claims.go) are judged by rules fixed in code (workbench/report), one set of rows per corpus with the
//     same rules: at least three seeds, else the row is untestable.
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
// The curvature study (models/prism's ComputeCurvature, whose file curvature.go numbers the equations (3)–(8) cited
// here) differentiates the objective (3) of the pathway with z_t, W and the logits' residual frozen, on the N tokens
// of curvature.batches evaluation batches, exactly on the M = curvature.prototypes most used prototypes, and scores
// the approximations (4)–(6) of theory/curvature against it by relative error, block mass, spectrum and the damped
// condition number (7) at spec §5's damping. The clustering terms involve one prototype each, so their Hessian is
// block-diagonal by construction, and the spec §5 damping grows with λ_1, λ_2: a block share of H or a κ at the
// model's own damping rises or falls with the clustering weight whatever C does. The sweep therefore also reports
// H_CE+REC = H − H_clust (8) and
//
//	(7′) κ(A + λ_fix I),   λ_fix = the damping (7) of the seed's smallest-weight model, held fixed across the sweep
//
// and spec §5's own coupling metric, the off-diagonal mass Σ_{i≠j}|C_ij| / Σ_ij |C_ij| of C over the whole bank.
// Raising λ_1 = λ_2 raises the floor δ_j and, by spec §5's argument ("Why clustering helps"), makes C more nearly
// diagonal; the sweep measures both and the loss they cost, and the claims test the second on C itself.
//
// # Storage
//
// Models are trained once under run.Out/models (lm.LoadOrTrain; the dense baseline of a seed is shared by every PRISM
// variant of that seed). Quality and curvature are cached per model in its run folder (quality-<hash>.json,
// curvature-<hash>.json), keyed by the model configs and the evaluation data; the study's result is stored under
// run.Out/prismhead/ (Runs.LoadOrRun).
package prismhead
