// Package attribution is the training-data attribution study of D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo,
// "Prototype Language Models", arXiv:2607.00510 (docs/spec/prism.md §6–§8): it ranks the training sequences of a
// PRISM model (models/lm) for a query from cached prototype-space statistics, and measures that ranking against
// counterfactual retraining (the linear datamodeling score), against a full prototype-space reference and against
// EK-FAC, with its speed at equal memory (the generic methods are in models/influence).
//
// # Equations
//
// Per token t with code a_t (k non-zeros), hidden state z_t, logits l_t and gold token y_t (spec §5, §6.1):
//
//	(1) u_t = Wᵀ(softmax(l_t) − e_{y_t}),   ũ_t the same with a label sampled from softmax(l_t)
//	(2) G_s = Σ_{t∈s} u_t a_tᵀ,   column j: g_{s,j} = Σ_{t∈s} a_{t,j} u_t                     (option B)
//	(3) I(q, s) = vec(G_q)ᵀ (H + λI)⁻¹ vec(G_s) / N_tok                    positive = helpful (kronfluence's sign)
//	(4) H = C ⊗ S + 2λ_rec C_rec ⊗ I + Δ ⊗ I,   S = (1/N_tok) Σ_t ũ_t ũ_tᵀ,   C = Σ_t a_t a_tᵀ,
//	    Δ = diag(δ_j),   δ_j = 2λ_1 + 2λ_2 n_j
//	(5) H_jj + λI = c_j S + (2λ_rec c_j^rec + δ_j + λ) I                  (diagonal C, spec §5)
//	(6) λ = damping_scale × the mean over (j, m) of c_j σ_m + 2λ_rec c_j^rec + δ_j   (σ_m the eigenvalues of S)
//
// with C_rec = Σ_t a_t a_tᵀ/(‖z_t‖² + ε) (C when rec_norm is false), c_j = C_jj, c_j^rec = (C_rec)_jj and n_j the
// tokens whose nearest prototype is j. In the eigenbasis of S, (4) splits into D sparse K×K systems
// (σ_m C + 2λ_rec C_rec + Δ + λI) x_m = b_m, solved exactly for banks of up to direct_max_k prototypes and by CG
// (preconditioned by (5)) otherwise. The reference (spec §6.3) replaces (2) by
//
//	(7) G_s^ref = ∇_P Σ_{t∈s} [CE(W sg(r_t) + W P a_t(P), y_t) + λ_rec·REC_t + λ_2·R2_t]   (z fixed; with ∂a/∂P)
//
// and solves (4) with the full sparse C. EK-FAC (spec §7.1) uses, per linear module with inputs a and pre-activation
// output gradients g (labels sampled for the factors, gold for the scores),
//
//	(8) A = E[a aᵀ] = Q_A Λ_A Q_Aᵀ,  S = E[g gᵀ] = Q_S Λ_S Q_Sᵀ,  Λ = mean_n (Q_Sᵀ G_n Q_A)^{∘2},
//	    Ĝ = Q_S [(Q_Sᵀ G Q_A) ⊘ (Λ + λ)] Q_Aᵀ,   I(q, n) = Σ_modules ⟨Ĝ_q, G_n⟩_F / N_tok
//
// over the backbone's linear layers (FFN gate, up, down and the attention output of every block, captured through
// layers/hook) or over P alone (A = C/N_tok). Quality (spec §8):
//
//	(9)  LDS = mean_q Spearman_m(Σ_{s∈S_m} I(q, s), −L_q(θ_m))     θ_m retrained from scratch on the subset S_m
//	(10) Overlap@k = |TopK(method) ∩ TopK(reference)| / k
//
// The LDS is the ground truth: its retrained models (lm.TrainOn, the model's own recipe: seed, updates, batch,
// warm-up, bank seeding) share no computation with any method. The overlap with the reference is a secondary
// column: the reference is itself an approximation of the same prototype-space influence.
//
// # Methods
//
// The cached methods differ in two choices (spec §6.2 leaves both open: option A or B, diagonal-C blocks or a
// solve "per connected component of the co-usage graph"); spec §6.2 and §12 name option B with the diagonal-C
// blocks, which is the default:
//
//	method           gradient columns                              curvature                  cache
//	prism            Σ_t a_{t,j} u_t, codes fixed (option B)       diagonal-C blocks (5)      per token + postings
//	prism_full_c     Σ_t a_{t,j} u_t, codes fixed (option B)       full co-usage H (4)        per token + postings
//	prism_dot        Σ_t a_{t,j} u_t, codes fixed (option B)       none (§7.2)                per token + postings
//	exact_ce         ∇_P Σ_t CE_t with ∂a/∂P (option A)            full co-usage H (4)        per sequence columns
//	exact_ce_diag_c  ∇_P Σ_t CE_t with ∂a/∂P (option A)            diagonal-C blocks (5)      per sequence columns
//
// beside reference (7), ekfac and graddot (the backbone's layers) and ekfac_bank (P only). exact_ce is the §6.3
// reference without the training sequences' REC and R2 gradients: the same query gradient, the same solver and the
// cross-entropy part of the same per-sequence gradients, read from a float32 cache. An ablation of the reference
// that drops REC and R2 would compute the same scores, so the study keeps the cached one (which also has its own
// latency and memory); its agreement with the reference measures those terms only, and is no evidence for caching.
//
// # Speed and memory
//
// Every query of the prototype-space methods and of the reference is timed, one by one after a warm-up query
// (median and quartiles). EK-FAC on the blocks and on P is timed end to end on timed_queries queries at the memory of
// the default method (spec §8, "matched memory"): it stores the training gradients that fit beside its factors and
// recomputes the others per query. The speed-up is EK-FAC's median over prism's, per model.
//
// # Uncertainty
//
// Settings.ModelSeeds models (same data and recipe, seeds seed, seed+1, …) are each attributed and scored. Every
// interval is a 95% percentile interval of a two-stage bootstrap: models resampled, then queries (and for the LDS the
// retrained subsets) within each; standard errors over models are reported beside it (summary.go).
//
// # Cost model
//
// costModel (costmodel.go) counts the FLOPs per query and the memory of every method as formulas in D, K, k, V, T,
// the attributed tokens T_c and N_seq, with uniform prototype usage. It is evaluated at this run's scale and at the
// Paper preset's (K = 4096 > direct_max_k, so the full-curvature methods are costed with CG at the iteration count
// measured on this run's curvature). It is a model, not a measurement; the scorecard shows it as such.
//
// # Running
//
//   - NewAttributor runs one pass over the corpus (the first train_seqs packed training sequences): the head's
//     forward pass and its backward pass alone (backbone frozen). It caches each token's code and u_t with postings
//     per prototype (influence.CodeCache, option B), each sequence's gradient columns with ∂a/∂P
//     (influence.ColumnCache, option A), and S, c_j, c^rec_j, n_j, C and C_rec; the cache is written once under the
//     model's run folder (<run>/attribution/<hash>/) and loaded afterwards. Attributor.Query ranks the corpus for a
//     text query ("prompt|completion").
//   - AttributeModel runs every method on one model: latencies, memory, overlaps, the CG iteration count and the
//     LDS. LoadOrRun trains (or loads) the models, attributes each, summarises them and evaluates the cost model,
//     storing the result under run.Out/attribution/; Claims turns a stored result into scorecard rows. RunSweep
//     repeats the prototype-space part over clustering weights λ_1 = λ_2 (spec §8, "Conditioning sweep").
package attribution
