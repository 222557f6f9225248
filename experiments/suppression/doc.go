// Package suppression is the concept-suppression study of D. Ley, G. Nguyen, H. Lakkaraju, J. Adebayo, "Prototype
// Language Models", arXiv:2607.00510 (docs/spec/prism.md §10): the prototypes Ω of a concept are chosen by keyword
// selection, then switched off at inference in a PRISM model (models/lm), and the study measures how much less the
// model writes about the concept and what that costs on other text.
//
// # Equations
//
// Selection (spec §10; select.go), for a prototype i with its top-activating training contexts c (a window of
// window_before tokens before and window_after after the activating position) and a keyword set W:
//
//	(1) "contexts":  hit_i = #{c ∈ top_contexts(i) : c contains a keyword} / |top_contexts(i)|
//	(2) "mass":      hit_i = Σ_{c ∋ keyword} a_c / Σ_c a_c        over every activation of i (our variant)
//	(3) "signature": hit_i = #{v ∈ TopK(W p_i, s) : v begins a keyword and no other word} / s,   s = signature_tokens
//	(4) Ω = {i : hit_i ≥ min_hit_rate and i has ≥ min_contexts contexts}     (or suppress.prototypes as given)
//
// Suppression (spec §10; layers/prism (14)–(16), lm.SuppressedStep for generation), with r_t kept at its
// unsuppressed value:
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
