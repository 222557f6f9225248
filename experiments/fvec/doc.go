// Package fvec is the function-vector study of
//
//	R. Raj, G. Reddy, "Adaptive inference and function vectors in deep transformers", arXiv:2606.16694 (2026),
//
// as reconstructed in docs/spec/function_vectors.md (shape letters and symbols as there: D dimension of x and θ, N
// tokens per context, M measurements, L layers, K tree depth, α tree scale ratio, s label noise). It trains, with
// models/icl, the constrained linear-attention models of layers/linattn — A (deep, adaptive MLP keys), A′ (deep,
// adaptive queries, linear keys), B (one layer, M MLP-key heads) and C (one layer, M linear channels) — on
// regression contexts drawn from the priors of theory/prior, and sets their MSE beside the theory of
// theory/meanfield:
//
//   - Tree prior (spec §2.2, §6 item 2): MSE against depth (A, A′) or channels (B, C), with the greedy adaptive
//     curve (ideal A on N tokens and its τ → 0 form), the dynamic programme's optimal adaptive strategy over node
//     keys (τ → 0; greedy binary search is not optimal, so trained models may land below the greedy curve), the
//     non-adaptive Bayes readout of BFS nodes (ideal B), the best non-adaptive level design (below), model C's
//     LMMSE baseline with the per-node noise τ_n² = (E‖θ‖² + s² + λ_n)/N, and the unconstrained Bayes bound.
//   - Gaussian prior (spec §2.1, §4.1, §6 item 1): A, B, C against the optimal MSE at τ² = (D + 1 + s²)/N, the
//     linear-key curve (flat beyond M = D) and the normalised-MLP-key level.
//   - Key patching (spec §7): for target–donor pairs sharing x and ξ whose paths first differ at level j, the
//     target's layer-ℓ keys are replaced by the donor's; ΔMSE(j, ℓ) as a heatmap, beside the ideal model's.
//   - Function vectors: the workspaces p_ℓ of the patched model, a logistic-regression probe of each path bit from
//     each p_ℓ (spec §6 item 4) and the mean of φ_ℓ per path prefix.
//
// # Protocol
//
// The protocol is fixed in the configuration before a run (Small is the study's protocol preset) and stated in the
// result (Result.Protocol):
//
//   - One recipe for every model (spec §5): the same batch (data.batch), the same optimiser steps at each M
//     (Sweep.DepthSteps on the tree prior, Sweep.GaussianSteps on the Gaussian one) and the same optimiser and
//     schedule (Train: AdamW without weight decay, warm-up then cosine decay, clipping at 1), fresh contexts every
//     step (icl.Stream), loss ‖θ̂ − θ‖² per context. With Sweep.Grow each seed's sweep over M is one chain
//     (icl.Chain): the model at M starts from the one at the previous M (layers, heads or key rows it has keep their
//     weights), for every kind alike. With data.shared_tokens the contexts of a step share x_{1:N} (each keeps its
//     own θ and label noise), for every kind alike. Linattn's key gain acts on model A's keys alone, so it is not
//     part of the common recipe: Config.Validate refuses model.key_gain, and Sweep.KeyGainAblation trains A with it
//     as an extra row (AblationKeyGain) with the same budget and seeds.
//   - Four seeds keep the data of each use apart: training streams and weights (Seed + s for model seed s), the
//     validation set (ValSeed), on which every choice is made — the plateau criterion and which seed's model the
//     figures show; the test set (TestSeed), on which every reported number is measured, and the patching pairs and
//     probe contexts; and a held-out test set (HeldOutSeed) of the same size, reported separately and never used
//     for a choice. Validation and test contexts have their own tokens.
//   - Every trained model records its validation curve (icl.Training); the plateau criterion is that its validation MSE
//     improves by less than Sweep.PlateauTol (relative) over the last Sweep.PlateauTail of its steps. It is checked
//     for every model (Result.Checks), as is model B against the best non-adaptive design.
//   - At least three seeds per claim; every MSE is a mean over seeds with a standard error that combines the seeds'
//     spread with the finite test set (icl.Scores.StdErr); the spec's median and best over seeds are kept too.
//
// Claims turns a stored result into the scorecard's rows (the papers.md ids and the verdict rules are in
// claims.go); Checks say whether the run followed its protocol.
//
// # The non-adaptive reference for model B
//
// The non-adaptive theory curve of spec §4.3 (BFS node keys) is not a bound for B, whose keys can weight the nodes of
// several levels (theory/meanfield's doc, "Beyond the spec"). The reference for B is the best level design with a
// Bayes readout (meanfield.ReestimatedLevelDesign): TreeResult.BestDesign at every M of the sweep. It is a local
// search over a subclass of designs, so B may land below it. For the same reason the patching zeros for j ≥ ℓ of
// spec §7 hold for the ideal model, not necessarily for a trained model whose early layers resolve several levels.
//
// Why model A can need a key gain: its key MLP must realise a workspace-gated linear function of x with no offset
// (any workspace-dependent mean of the key adds noise ∝ (1/N) Σ_i y_i), and gating on statistics of size α^{ℓ−1}
// needs workspace weights far larger than N(0, 1/fan_in) gives; the gain g_k of linattn eq. 8 scales the workspace
// where it enters A's keys, which changes the optimisation, not the function class.
//
// # Progress
//
// With run.Options.Out set, each finished chain (one row, prior and seed over every M) is stored at once in
// Out/fvec/progress-<hash>/<prior>-<row>-seed<k>/ (icl.Chain.Dir: the last model and the chain's scores and
// records), where <hash> is the configuration's, the one its result file result-<hash>.json is named by. A rerun of
// the same configuration (LoadOrRun, Run or Notebook) after an interruption loads the stored chains instead of
// training them (icl.Chain.Run), so its result equals an uninterrupted run's (wall times aside); a chain cut short
// is retrained from its first M. A changed configuration has another hash, so it never loads another's progress.
// Once the result file of a configuration exists, its progress folder is removed; with Out empty nothing is stored.
//
// Result holds every curve as plain data, the protocol, the provenance (config, versions, timings) and the checks;
// figures.go draws it (series named "theory: …" and "simulation: …").
package fvec
