// Package prism computes what the PRISM studies ask of a trained PRISM language model (models/lm with the head
// "prism"), as D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo, "Prototype Language Models", arXiv:2607.00510, describe
// it (docs/spec/prism.md §3–§10):
//
//   - training-data attribution (§5–§8; attributor.go, graph.go, methods.go, query.go, reference.go, ekfac*.go,
//     lds.go, runs.go, costmodel.go): it ranks the model's training sequences for a query from cached
//     prototype-space statistics, with the full prototype-space reference, EK-FAC and gradient dot products beside
//     them, and the counterfactual retraining the linear datamodeling score needs. It runs the model's graph passes
//     (layers/decoder, layers/prism) and hands plain float slices to the paper-agnostic methods of
//     models/influence. The attribution study (experiments/attribution) chooses the queries and methods, times and
//     scores them, and reports;
//   - the head's quality and curvature (§3, §4; quality.go, curvature*.go): perplexity, coverage and throughput
//     against the dense model, and the prototype-space Hessian's structure, for experiments/prismhead;
//   - concept suppression (§10; suppress*.go): choosing the prototypes of a concept by its keywords and measuring
//     the model with them switched off, for experiments/suppression.
//
// # Attribution: equations
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
// layers/hook) or over P alone (A = C/N_tok). The ground truth (spec §8):
//
//	(9) LDS = mean_q Spearman_m(Σ_{s∈S_m} I(q, s), −L_q(θ_m))     θ_m retrained from scratch on the subset S_m
//
// whose retrained models (Attributor.Retrain: lm.TrainOn, the model's own recipe: seed, updates, batch, warm-up,
// bank seeding) share no computation with any method.
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
// that drops REC and R2 would compute the same scores, so the package keeps the cached one (which also has its own
// latency and memory); its agreement with the reference measures those terms only, and is no evidence for caching.
//
// # Speed and memory
//
// RunCached and RunReference time every query one by one after a warm-up query. RunBlockEKFAC and RunBankEKFAC time
// EK-FAC end to end at the memory budget the caller gives (spec §8, "matched memory": the default method's): it
// stores the training gradients that fit beside its factors and recomputes the others per query.
//
// # Cost model
//
// NewCostModel (costmodel.go) counts the FLOPs per query and the memory of every method as formulas in D, K, k, V,
// T, the attributed tokens T_c and N_seq, with uniform prototype usage; banks above direct_max_k are costed with CG
// at a given iteration count (Attributor.Conditioning counts one). It is a model, not a measurement.
//
// # Running
//
// NewAttributor runs one pass over the corpus (the first train_seqs packed training sequences): the head's forward
// pass and its backward pass alone (backbone frozen). It caches each token's code and u_t with postings per
// prototype (influence.CodeCache, option B), each sequence's gradient columns with ∂a/∂P (influence.ColumnCache,
// option A), and S, c_j, c^rec_j, n_j, C and C_rec; the cache is written once under the model's run folder
// (<run>/attribution/<hash>/) and loaded afterwards. Attributor.Query ranks the corpus for a text query
// ("prompt|completion"), Attributor.Scores scores queries with any of Methods.
package prism
