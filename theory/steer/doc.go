// Package steer is the sparse linear controller of
//
//	D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo, "Prototype Language Models", arXiv:2607.00510
//
// (docs/spec/prism.md §9): gains on the prototype slices of a frozen PRISM model's logits, fitted in float64 to raise
// the score of the correct option of multiple-choice items, with an L1 penalty that keeps few gains non-zero. The
// same form steers over the features of a sparse autoencoder, and a bias over the vocabulary is its control. A
// Problem holds the frozen model's head outputs at the option tokens (models/steer builds it from a trained model);
// experiments/steering fits and scores it per task.
//
// # Equations
//
// Spec §9, with l_t the frozen logits, K_t the selected prototypes of position t and a_{t,i} their activations:
//
//	(S1) l′_t = l_t + Σ_{i∈K_t} γ_i·a_{t,i}·(W p_i)                         active prototype i scaled by 1 + γ_i
//	(S2) score(o) = Σ_{t ∈ tokens of option o} log softmax(l′_t)[y_t]
//	(S3) L(γ) = mean_items −log softmax_o(score(o))[correct] + β‖γ‖₁
//	(S4) ∂score(o)/∂γ_i = Σ_t a_{t,i}·((W p_i)[y_t] − E_{softmax(l′_t)}[W p_i])
//	(S5) γ_i ← sign(x_i)·max(|x_i| − lr·β/(√v̂_i + ε), 0),   x = the Adam step of the cross-entropy part
//	(S6) l′_t = l_t + b,   b ∈ R^V:   ∂score(o)/∂b_v = Σ_t (δ_{v,y_t} − softmax(l′_t)_v)     (bias-only controller)
//
// Adam (lr, β₁ = 0.9, β₂ = 0.999, full batch, a fixed number of steps) minimises the cross-entropy part of (S3); the
// L1 part is applied as its proximal step (S5) in Adam's diagonal metric, which leaves exact zeros (the study's
// choice; the spec names the penalty, not the solver). With MaxActive > 0 only the MaxActive largest |γ_i| survive
// each step. SelectBeta chooses β on a held-aside fraction of the calibration items (ties: the larger β). With
// γ_i = −1 on a set Ω, (S1) is layers/prism's zero-mode suppression (spec §10); models/steer's tests check it.
//
// For an SAE's features the units of (S1) are the non-zero codes f_{t,j} and the signatures W d_j of the unit
// decoder directions d_j; the bias-only controller (S6) has one gain per token, added at every position.
//
// Accuracy counts an item as right when its correct option has the strictly highest score.
//
// Everything is float64 and depends only on the standard library: this package is part of the theory oracle and
// imports nothing else of ProtoLab (docs/STYLE.md §3). Tests: control_test.go checks (S2)–(S3) against the formulas
// written out, (S4) and (S6) against central finite differences, and the fit on problems whose answer is known.
package steer
