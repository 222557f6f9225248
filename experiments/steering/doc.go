// Package steering is the prototype-controller study of D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo, "Prototype
// Language Models", arXiv:2607.00510 (docs/spec/prism.md §9): a sparse linear controller over the prototypes of a
// frozen PRISM model (models/lm) is fitted per multiple-choice task, and its held-out accuracy gain measures how far
// a correction that names prototypes (and so their training neighbourhoods) can steer the model.
//
// # Tasks
//
// The spec's four tasks are unknown; ours come from the labels of the synthetic concept corpus (tasks.go), drawn
// from fresh documents (lm.Model.FreshCorpus, seed steering.doc_seed): the verb form after a subject (number), the
// possessive after a referent (gender), a topic verb among verbs of other topics (topic) and a city among cities of
// other countries (country). An item is a document prefix and candidate next words; the correct one is the word the
// document has. Items are split by document into calibration and held-out parts (spec §9: 50/50).
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
//
// Adam (lr, β₁ = 0.9, β₂ = 0.999, full batch, steering.steps steps) minimises the cross-entropy part of (S3); the L1
// part is applied as its proximal step (S5) in Adam's diagonal metric, which leaves exact zeros (our choice; the spec
// names the penalty, not the solver). With max_active > 0 only the max_active largest |γ_i| survive each step. β is
// chosen among steering.betas on a steering.select fraction of the calibration items (ties: the larger β). With
// γ_i = −1 on a set Ω, (S1) is layers/prism's zero-mode suppression (spec §10).
//
// Accuracies count an item as right when its correct option has the strictly highest score; their standard errors
// are binomial, √(p(1−p)/n), and the gain's is the standard error of the mean paired difference (workbench/stats).
//
// # Running
//
// LoadOrRun trains (or loads, under run.Out/models) the model of the Config and stores the Result under
// run.Out/steering/; Steer runs the study on a model already at hand.
package steering
