// Package robustness is the lexical-robustness study of the Prototype Transformer (docs/spec/protot.md §7.5): it
// perturbs held-out prompts with typos (and, on WordNet glosses and the Brown corpus, synonyms) and compares how
// much the next-token distributions of ProtoT and of a LLaMA (attention) baseline of equal non-embedding size move,
// with the change of ProtoT's routing. The two models are those of experiments/interp (models/pair, the same
// presets), so with run.Out set the two studies share the trained runs.
//
// # Protocol
//
// Prompts are held-out document prefixes that end just before the last word of a sentence, the longest that fit
// max_tokens − 4 tokens after the EOS the model saw before every training document, so the compared prediction is a
// sentence's final word. (Spec §7.5 compares "the last position of each sentence"; after the final punctuation the
// next token is a near-certain sentence start, which no perturbation moves.) The Brown corpus has few long
// documents, so its prompts are sentences instead, each from its start to just before its last word, several per
// document (pair.SentencePrompts), drawn from the first brown_docs documents of its test split (eval_seed odd;
// protocol v2, docs/PROTOCOL.md), a split no model trained or chose anything on; HeldBackEvalSeed (its held-out
// split) is kept back. Each prompt is perturbed once per kind (data.Perturb): an adjacent-letter swap, a letter
// drop, a random letter insertion (each in a word of ≥ 3 letters) and, on corpora with synonyms (WordNet glosses,
// the Brown corpus), a one-word synonym from WordNet where WordNet gives one; the prompt's last word is never
// touched. A perturbed prompt longer than max_tokens (with its EOS) is dropped. Prompts and rows are run in batches
// of batch_size rows, right-padded with EOS (the models are causal: padding after the last position changes nothing
// before it).
//
// # Measures
//
// The next-token distributions at the prompt's last position are compared with models/pair (MeasureRobustness; its
// doc.go, "Robustness", states the measures): the JS divergence, the top-k overlap and the Spearman correlation over
// the union of the two top-k sets (k = overlap_k), top-1 agreement, and ProtoT's routing change per layer, each
// reported as mean ± sd over the pairs of a kind.
//
// # Files
//
// With run.Out set: the two models of each corpus under run.Out/models/ (models/lm) and the result under
// run.Out/robustness/ (Result). LoadOrRun reuses the stored result when its config matches.
package robustness
