// Package fvec is the function-vector study of
//
//	R. Raj, G. Reddy, "Adaptive inference and function vectors in deep transformers", arXiv:2606.16694 (2026),
//
// as reconstructed in docs/spec/function_vectors.md (shape letters and symbols as there: D dimension of x and θ, N
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
// model's step graph is compiled once. With Data.SharedTokens the contexts of a training batch share x_{1:N} (each
// keeps its own θ and label noise, GenerateShared), so the key MLPs of B and the x-products of A run once per batch
// (linattn.ForwardA); evaluation always uses independent contexts. With Sweep.Grow a model at budget M starts from
// the trained model at the previous M of the sweep; each seed's sweep is one chain, and Sweep.Workers chains train
// at once. Every model is evaluated on one fixed evaluation set per prior; a point's standard error combines the
// spread over seeds with the finite evaluation set (Curve.StdErr).
//
// # Findings beyond the spec
//
// The non-adaptive theory curve of spec §4.3 (BFS node keys) is not a bound for B. B's statistics are linear in θ
// (E[f(x)y | θ] = uᵀθ), but u need not be a node: a key that weights the nodes of several levels packs several path
// bits into one channel, and the MLP readout decodes them. Trained with one channel, B (and A, which is then the same
// model) reaches about 0.21 at K = 6, N = 128, against 0.56 for one node key. The reference for B is the best linear
// design with a Bayes readout: meanfield.BestLevelDesign (channels that weight whole levels, eq. 4.12 of
// theory/meanfield, per-channel token noise) finds 0.0645 ± 0.0025 at K = 6, N = 128, M = 4 (an earlier search outside
// theory/ found 0.059), against 0.027 for greedy adaptive node keys: the theory's adaptive advantage at depth 4 is
// about 2.2–2.4×, not the 6× of the node-key curves (2.3× at N = 64, 1.6× at N = 256, 2.9× at K = 7, L = 5, from the
// earlier search). Trained models pack levels too, so the patching zeros for j ≥ ℓ of spec §7 do not hold for A′:
// patched at layer 2 with a donor diverging at level 2 it loses accuracy, because its first layer already resolved
// level 2.
//
// Model A learns adaptivity far more slowly than A′: its key MLP must realise a workspace-gated linear function of a
// 63-dimensional x with no offset (any workspace-dependent mean of the key adds noise ∝ (1/N) Σ_i y_i), and gating on
// statistics of size α^{ℓ−1} needs workspace weights far larger than N(0, 1/fan_in) gives. With one gain for keys and
// readout (workspace_gain 1, 4 or 16) A stays at the best non-adaptive level (depth 4, one seed: 0.061, 0.061, 0.067);
// a key gain of 16 with the readout at 1 (model.key_gain) gives 0.046. More steps keep helping, slowly; what counts is
// their total over the chain more than how they are spread over the depths (two seeds, depth-4 MSE against the
// steps at depths 1…4): [6000, 6000, 6000, 12,000] 0.0359 ± 0.0005 (B/A 1.97 ± 0.04); [6000, 6000, 6000, 16,000]
// 0.0354 (B/A 2.00 ± 0.05); [3000, 3000, 6000, 20,000] 0.0348; [3000, 3000, 9000, 18,000] (the Small preset,
// sweep.a_depth_steps, same cost as the previous list and better at depth 3: 0.052 against 0.057) 0.0348 ± 0.0006:
// B/A 2.03 ± 0.05, B/A′ 1.83 ± 0.07, log-linear R² 0.971. A's keys are then workspace-gated: its patching ratio
// (max |ΔMSE| for j ≥ ℓ over j < ℓ) is 0.09 (0.03 at the 12,000-step budget), the shared-prefix zeros of spec §7.
// What did not help A (one seed, depth 2 or 4; depth-4 MSE after 3000 steps per depth against 0.0463): GELU, lr 3e-3
// or 2e-2, H = 64 (0.0456 at twice the cost) or 96 (gain 1: 0.056 against 0.061 at 2.5× the cost), H = 16 (0.0491),
// batch 64, batch 8 for twice the steps (0.0514), Adam β₂ 0.99 (0.0509), init scale 0.1, mirrored "looks-linear" key
// initialisation, per-coordinate key gains g_k·r^{j−1} for workspace coordinate j (r = 0.6, 1/α, 1/α²: 0.0486,
// 0.0471, 0.0494), zero-initialised new readout rows when growing (0.0549), training without Grow (worse: 0.104 at
// depth 2 against 0.094). Nor is A's step easy to make cheaper: at depth 4 it takes 8–10 ms (16 contexts, one core;
// BenchmarkTrainStep), spent in the pure-Go backend's elementwise passes over [B, N, H]; a Max gradient built from
// one Where instead of two Sign passes, or ReLU as x·1[x > 0] with the indicator held out of the gradient, changed
// it by less than the run-to-run noise (9.5 against 9.7 ms) and was not kept. A deeper tree does
// not help either: at K = 7, depths 1…5, one seed, B/A is 1.08 and B/A′ 1.68 (gain 1). Result.Checks states the values
// of each run.
//
// Result holds every curve as plain data, the provenance (config, versions, timings) and the study's Checks;
// figures.go draws it (series named "theory: …" and "simulation: …").
package fvec
