// Package fvec is the function-vector study of
//
//	R. Raj, G. Reddy, "Adaptive inference and function vectors in deep transformers", arXiv:2606.16694 (2026),
//
// as reconstructed in spec/function_vectors.md (shape letters and symbols as there: D dimension of x and θ, N
// tokens per context, M measurements, L layers, K tree depth, α tree scale ratio, s label noise). It trains the
// constrained linear-attention models of layers/linattn — A (deep, adaptive MLP keys), A′ (deep, adaptive
// queries, linear keys), B (one layer, M MLP-key heads) and C (one layer, M linear channels) — on regression
// contexts drawn in Go from the priors of theory/prior, and sets their MSE beside the theory of theory/meanfield:
//
//   - Tree prior (spec §2.2, §6 item 2): MSE against depth (A, A′) or channels (B, C), with the greedy adaptive
//     curve (ideal A on N tokens and its τ → 0 form), the dynamic programme's optimal adaptive strategy over node
//     keys (τ → 0; greedy binary search is not optimal, so trained models may land below the greedy curve), the
//     non-adaptive Bayes readout of BFS nodes (ideal B), model C's LMMSE baseline with the per-node noise
//     τ_n² = (E‖θ‖² + s² + λ_n)/N, and the unconstrained Bayes bound.
//   - Gaussian prior (spec §2.1, §4.1, §6 item 1): A, B, C against the optimal MSE at τ² = (D + 1 + s²)/N, the
//     linear-key curve (flat beyond M = D) and the normalised-MLP-key level.
//   - Key patching (spec §7): for target–donor pairs sharing x and ξ whose paths first differ at level j, the
//     target's layer-ℓ keys are replaced by the donor's; ΔMSE(j, ℓ) as a heatmap, beside the ideal model's.
//   - Function vectors: the workspaces p_ℓ of the patched model, a logistic-regression probe of each path bit from
//     each p_ℓ (spec §6 item 4) and the mean of φ_ℓ per path prefix.
//
// Training (our choice, see Config and the presets): fit.Train with AdamW (no weight decay), warm-up and cosine
// decay, gradient clipping at 1, fresh contexts every step (Stream), loss ‖θ̂ − θ‖² per context (spec §5); each
// model's step graph is compiled once. With Sweep.Grow a model at budget M starts from the trained model at the
// previous M of the sweep. Every model is evaluated on one fixed evaluation set per prior; a point's standard error
// combines the spread over seeds with the finite evaluation set (Curve.StdErr).
//
// Result holds every curve as plain data, the provenance (config, versions, timings) and the study's Checks;
// figures.go draws it (series named "theory: …" and "simulation: …").
package fvec
