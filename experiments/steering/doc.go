// Package steering is the controller study of D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo, "Prototype Language
// Models", arXiv:2607.00510 (docs/spec/prism.md §9): a sparse linear controller over the prototypes of a frozen PRISM
// model (models/lm) is fitted per multiple-choice task, and its held-out accuracy gain measures how far a correction
// that names prototypes (and so their training neighbourhoods) can steer the model. The same fit over the features
// of a sparse autoencoder (spec §9's baseline) and a bias-only controller tell what the prototypes add.
//
// # Tasks and fit
//
// The spec's four tasks are unknown; ours come from the labels of the synthetic concept corpus (models/steer's
// BuildTasks), drawn from fresh documents (lm.Model.FreshCorpus, seed steering.doc_seed): number, gender, topic and
// country. Items are split by document into calibration and held-out parts (spec §9: 50/50).
//
// The controllers are theory/steer's (equations S1–S6 in its doc.go): gains fitted by Adam on the cross-entropy of
// the correct option with an L1 proximal step, steering.steps full-batch steps at steering.lr, at most max_active
// non-zero gains when it is > 0, β chosen among steering.betas on a steering.select fraction of the calibration
// items (ties: the larger β). models/steer reads the frozen model's rows at the option tokens.
//
// Accuracies count an item as right when its correct option has the strictly highest score; their standard errors
// are binomial, √(p(1−p)/n), and the gain's is the standard error of the mean paired difference (workbench/stats).
//
// # Controllers
//
// Every controller is fitted by (S2)–(S5) with the same β grid, steps and learning rate (steerTask in run.go):
//
//   - "prototype": (S1) on the PRISM model.
//   - "sae" (spec §9's baseline): (S1) with the features of an SAE (models/dictionary) for the prototypes: f_{t,j}
//     the codes of the dense baseline's final hidden state and W d_j the signatures of the unit decoder directions,
//     steering the dense model (the PRISM recipe with the dense head). F = K and a top-k encoder with k = prism.top_k,
//     so that as many features as prototypes are active per token (spec §9: "a dictionary of size K").
//   - "sae_prism" (our variant): the same SAE trained on the PRISM model's own z_t, steering the PRISM model, so that
//     only the basis differs from "prototype".
//   - "bias" (our control): (S6), what a controller gains without reading the context.
//
// The SAEs train on the hidden states of training batches, never on the items.
//
// # Protocol
//
// Small is protocol v2 (docs/PROTOCOL.md, "steering"): lm.PrismSmallV2's models on the synthetic corpus alone (its
// tasks are that corpus's concept labels), training seeds 1–5, every controller, SAEs of F = K features; protocol
// v1 (lm.PrismSmall's models) is Small at commit 8706f7f. A Config is a model recipe and its training seeds: one
// PRISM model (and dense baseline) per seed, each steered on every split seed (the split seed draws the items, their
// order, the document split and the β split). A model's figure is its held-out gain averaged over tasks and splits
// (splits of one model are not independent); the study's is the mean over models with its 95% Student-t interval,
// mean ± t_{n−1}·s.e. (Summary), and the comparisons are the same intervals of the differences to the prototype
// controller, paired by model. The Small preset's documents and split seeds were used by no choice of the recipe,
// which Quick still runs on its development evaluation; a second evaluation (held_back) is run by no preset:
// use_held_back switches to it once, when the settings are final.
//
// # Running
//
// LoadOrRun trains (or loads, under run.Out/models) the models of the Config and stores the Result under
// run.Out/steering/; Notebook shows the stored protocol result at the Small preset, or Quick's; Steer runs the
// study on models already at hand.
package steering
