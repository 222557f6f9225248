// Package attribution is the training-data attribution study of D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo,
// "Prototype Language Models", arXiv:2607.00510 (docs/spec/prism.md §6–§8): it ranks the training sequences of a
// PRISM model (models/lm) for a query from cached prototype-space statistics, and compares that ranking, its speed
// and its memory with a full prototype-space reference and with EK-FAC (the generic methods are in
// workbench/influence).
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
// layers/hook) or over P alone (A = C/N_tok). Agreement with the reference (spec §8):
//
//	(9) Overlap@k = |TopK(method) ∩ TopK(reference)| / k,   LDS = mean_q Spearman_subsets(Σ_{s∈subset} I(q, s), −L_q)
//
// the LDS retraining the model (lm.TrainOn, the model's own recipe) on random subsets of the corpus.
//
// # Methods
//
// The cached methods differ in two choices, each measured by an ablation (spec §6.2 leaves both open: option A or B,
// diagonal-C blocks or a solve "per connected component of the co-usage graph"):
//
//	method         gradient columns                         curvature
//	prism          g_{s,j} with ∂a/∂P (option A)             full co-usage H (direct or CG)
//	prism_diag_c   g_{s,j} with ∂a/∂P (option A)             diagonal-C blocks (H_jj + λI)⁻¹
//	prism_full_c   Σ_t a_{t,j} u_t, codes fixed (option B)   full co-usage H
//	prism_codes    Σ_t a_{t,j} u_t, codes fixed (option B)   diagonal-C blocks (spec §6.2 as written)
//	prism_dot      Σ_t a_{t,j} u_t, codes fixed (option B)   none (§7.2)
//
// beside reference and reference_ce (its cross-entropy-only ablation), ekfac and graddot (the backbone's layers) and
// ekfac_bank (P only). At the Small preset (k = 8 of K = 256 prototypes per token, off-diagonal co-usage mass 0.87)
// dropping the off-diagonal co-usage and the routing term each cost a quarter of the top-10 overlap with the
// reference, so the default keeps both; its exact solve costs D·K² floats, and banks above direct_max_k use CG.
//
// # Running
//
//   - NewAttributor runs one pass over the corpus (the first train_seqs packed training sequences): the head's
//     forward pass and its backward pass alone (backbone frozen). It caches each token's code and u_t with postings
//     per prototype (influence.CodeCache, option B), each sequence's gradient columns with ∂a/∂P
//     (influence.ColumnCache, option A), and S, c_j, c^rec_j, n_j, C and C_rec; the cache is written once under the
//     model's run folder (<run>/attribution/<hash>/) and loaded afterwards. Attributor.Query ranks the corpus for a
//     text query ("prompt|completion").
//   - AttributeModel times every method per query (wall-clock and process CPU, workbench/meter), accounts memory,
//     and compares the rankings; LoadOrRun stores its result under run.Out/attribution/. RunSweep repeats the
//     prototype-space part over clustering weights λ_1 = λ_2 (spec §8, "Conditioning sweep").
package attribution
