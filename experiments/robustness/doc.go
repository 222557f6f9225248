// Package robustness is the lexical-robustness study of the Prototype Transformer (docs/spec/protot.md §7.5): it
// perturbs held-out prompts with typos (and, on WordNet glosses, synonyms) and compares how much the next-token
// distributions of ProtoT and of a LLaMA (attention) baseline of equal non-embedding size move, with the change of
// ProtoT's routing. The two models are those of experiments/interp (models/pair, the same presets), so with run.Out
// set the two studies share the trained runs.
//
// # Protocol
//
// Prompts are held-out document prefixes that end just before the last word of a sentence, the longest that fit
// max_tokens − 4 tokens after the EOS the model saw before every training document, so the compared prediction is a
// sentence's final word. (Spec §7.5 compares "the last position of each sentence"; after the final punctuation the
// next token is a near-certain sentence start, which no perturbation moves.) Each prompt is perturbed once per kind
// (data.Perturb): an adjacent-letter swap, a letter drop, a random letter insertion (each in a word of ≥ 3 letters)
// and, on corpora with synonyms (WordNet), a one-word synonym from WordNet; the prompt's last word is never touched.
// A perturbed prompt longer than max_tokens (with its EOS) is dropped. Prompts and rows are run in batches of
// batch_size rows, right-padded with EOS (the models are causal: padding after the last position changes nothing
// before it).
//
// # Measures
//
// With p (original) and p′ (perturbed) the next-token distributions at the prompt's last position, k = top_k:
//
//	JS         JS(p ‖ p′) = ½ KL(p ‖ m) + ½ KL(p′ ‖ m), m = ½(p + p′), natural log   (stats.JensenShannon; ↓ robust)
//	overlap    |top_k(p) ∩ top_k(p′)| / k                                          (naming.TopKOverlap; ↑ robust)
//	Spearman   ρ of p and p′ over top_k(p) ∪ top_k(p′), 0 where undefined           (naming.SpearmanTopK; ↑ robust)
//	top-1      [argmax p = argmax p′]                                              (naming.Top1Agree; ↑ robust)
//
// each reported as mean ± sd over the pairs of a kind. For ProtoT the routing change is, per layer ℓ, JS(π̄ ‖ π̄′)
// of the position-averaged write routing π̄ = (1/n) Σ_t π_t of the two prompts (n tokens each, the EOS included), and
// likewise for the read routing ρ.
//
// # Files
//
// With run.Out set: the two models of each corpus under run.Out/models/ (models/lm) and the result under
// run.Out/robustness/ (Result). LoadOrRun reuses the stored result when its config matches.
package robustness
