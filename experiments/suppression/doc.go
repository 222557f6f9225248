// Package suppression is the concept-suppression study of D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo, "Prototype
// Language Models", arXiv:2607.00510 (docs/spec/prism.md §10): the prototypes Ω of a concept are chosen by keyword
// selection, then switched off at inference in a PRISM model (models/lm), and the study measures how much less the
// model writes about the concept and what that costs on other text.
//
// # Equations
//
// Selection (spec §10): Ω by the keyword rules (1)–(4) of models/prism (suppress_select.go, SelectByKeywords), rule
// "contexts" (spec §10) or our variants "mass" and "signature", or suppress.prototypes as given.
//
// Suppression (spec §10; layers/prism (14)–(16); measured by models/prism's GenerateSuppressed, SuppressedNLL and
// CompletionPerplexity), with r_t kept at its unsuppressed value:
//
//	(5) zero: l′_t = l_t − Σ_{i∈Ω∩K_t} a_{t,i}·(W p_i)
//	(6) mask: l′_t = l_t + W(ẑ′_t − ẑ_t),   ẑ′_t reconstructed with Ω removed before the top-k
//
// Scores (our choice; spec §10 names a pluggable judge, the default being the keyword hit rate), over the samples n
// generated from topic-free prompts (the first sentence of fresh synthetic documents):
//
//	(7) concept rate = mean_n (keywords in n / words in n),   any rate = mean_n [n has a keyword]     (± s.e.)
//	(8) reduction = 1 − rate(mode)/rate(none),   other change = PPL_other(mode)/PPL_other(none) − 1
//
// with PPL_other (PPL_concept) the perplexity of validation documents without (with) a keyword, PPL_val that of
// both together (spec §10's validation perplexity), and the judge perplexity that of the generations under the
// unsuppressed model. The fraction of tokens where some i ∈ Ω is active (layers/prism (16)) is reported beside them.
//
// # Protocol
//
// A Config is a model recipe, its training seeds and, optionally, a second bank size (spec_range_k): the study trains
// one model per (bank size, seed) and runs (1)–(8) on each (ModelRun). Each measurement is then averaged over the
// seeds of a bank size, with its standard error (Summary); those are the study's figures and the scorecard's
// (Claims). The validation text and the prompts come from fresh synthetic documents (text_seed, prompt_seed) that no
// model trained on; the Small preset's evaluation seeds were used by no choice of the recipe, which was fixed on the
// development evaluation that Quick still runs (the model's validation split, prompt seed 2002). A second evaluation
// (held_back) is run by no preset: use_held_back switches to it once, when the settings are final.
//
// # Running
//
// LoadOrRun trains (or loads, under run.Out/models) the models of the Config and stores the Result under
// run.Out/suppression/; Notebook shows the stored protocol result at the Small preset, or Quick's; CompareRules and
// TradeoffChart compare rules on the notebook's configuration. Suppress runs (1)–(8) on a model already at hand.
package suppression
