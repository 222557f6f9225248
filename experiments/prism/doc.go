// Package prism is the PRISM study (D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo, "Prototype Language Models",
// arXiv:2607.00510; docs/spec/prism.md): a decoder whose output pathway is the sparse prototype head of layers/prism,
// trained beside a dense-head decoder with the same backbone, data and token budget.
//
// Base API (config.go, model.go): Config with the presets Tiny, Small and Paper; LoadOrTrain trains a PRISM or a
// dense-head model once and loads the cached run folder afterwards. Model carries the trained context, the prepared
// data (tokenizer, training sequences) and the run folder, and exposes the head's per-token outputs (HeadStats),
// which the quality, curvature, attribution and steering analyses start from.
//
// Training schedule (spec §2.3, our choice): the first Config.ProtoWarmup updates use the cross-entropy alone (the
// REC, R1 and R2 weights are multiplied by 0 in the graph, read from the optimizer's step counter); after update
// ProtoWarmup the bank is overwritten with K distinct hidden states z_t drawn uniformly from Config.SeedBatches
// training batches and (Config.RescaleSeed, our addition) multiplied by the least-squares scale that matches the
// reconstructions ẑ to z on those tokens; then the full loss L = L_CE + λ_rec·L_REC + λ_1·L_R1 + λ_2·L_R2 trains for
// the remaining updates. Without the rescale, k seeded prototypes with cosines near 1 reconstruct z about k times too
// large, and L_REC's gradient through the cosines drives the backbone's z away from every prototype: at Small,
// coverage R2 fell to 0.12 and the perplexity doubled in a 200-step check.
// Under the default residual variant ("autodiff") L_CE sends no gradient to the bank, so the warm-up trains the
// backbone exactly as the dense model's loss would. The dead-prototype reset of §2.3 is not implemented; the dead
// fraction is reported instead.
//
// Quality (quality.go): validation perplexity of the PRISM model and of the dense model at equal backbone, coverage
// R̄1 and R2 and their thresholded fractions (spec §4), usage statistics (dead fraction, entropy, co-usage
// off-diagonal mass).
//
// Curvature (curvature.go; theory/curvature is the float64 oracle): the Hessian of the prototype-pathway objective
// with respect to the bank, backbone frozen (spec §5, §6.3),
//
//	L(P) = Σ_t [ CE(W sg(r_t) + W P a_t(P), y_t) + λ_rec·REC_t(P) + λ_2·R2_t(P) ] + λ_1·Σ_j R1_j(P)
//
// computed exactly (double backpropagation in float64, top-k and nearest-neighbour choices held at their forward
// values) on the principal submatrix of the most used prototypes, against the structured approximation
// H ≈ C ⊗ S + 2λ_rec·C_rec ⊗ I + Δ ⊗ I built from per-token statistics. A sweep over λ_1 = λ_2 shows how the
// coupling (off-diagonal mass of C, block mass) and the conditioning change.
//
// Run folders: Config.Out/runs/<name>-<hash>/ holds config.json, tokenizer.json, weights.safetensors, result.json
// (written last: its presence marks a finished run) and checkpoints/; derived results are cached beside them as
// <name>-<hash>.json.
package prism
