// Package interp is the interpretability study of the Prototype Transformer (docs/spec/protot.md §5, §6, §7.3, §7.4):
// it trains (or loads) the model pair of models/pair, a ProtoT decoder and a LLaMA (attention) decoder of equal
// non-embedding size, on the synthetic concept corpus (and on WordNet glosses when the database is installed; in the
// protocol also on the Brown corpus), once per training seed, then, with what models/pair computes on the pair (its
// doc.go, "Units" and "Interventions"),
//
//   - builds a dashboard per prototype and names and scores every unit kind without an outside judge, against the
//     corpus's ground-truth word labels, on the same evaluation tokens: ProtoT prototypes (by π and by ρ), LLaMA
//     attention heads, features of ReLU sparse autoencoders on the LLaMA block outputs and a null model of random
//     tokens (pair.ScoreUnits);
//   - intervenes on prototypes (write mask, read mask, re-initialisation; one prototype or the set named with a
//     label) and measures ΔProb of each label's tokens and ΔPPL, as a full prototype × label sweep run on one
//     compiled executable (pair.Intervene);
//   - states the paper claims it tests as scorecard rows (Claims), computed from the stored result.
//
// The robustness protocol of spec §7.5 (typos and synonyms) is its own study, experiments/robustness, on the same
// two models.
//
// # Protocol
//
// Every choice is made on data that no reported number is measured on. Per corpus and training seed the study uses
//
//   - the training split (the models' own): the SAEs train on the LLaMA block outputs of sae.train_sequences
//     training sequences, never on the tokens they are scored on;
//   - the selection split, the first half of the model's validation split: SAE features are selected on it
//     (eval.select_sequences sequences), the named prototype sets of the interventions are named on it, and the
//     intervention prototypes are chosen on it (the calibration split, intervene.sequences sequences);
//   - the evaluation text, which no training run and no choice of settings saw, tokenized and packed as the models'
//     data (lm.Model.FreshCorpus with seed eval.data_seed): eval.docs fresh documents of the synthetic generator; on
//     the Brown corpus the first eval.brown_docs documents of its test split (an odd seed; docs/PROTOCOL.md, "The
//     Brown corpus"); for a corpus without evaluation documents (WordNet), or with eval.data_seed 0, the second half
//     of the validation split. Every unit kind is scored on eval.sequences of its sequences, and every intervention
//     effect is measured on intervene.held_out of them. HeldBackEvalSeed names a second evaluation set that no
//     preset reads (fresh documents of another seed; the Brown held-out split), kept for one confirmation run once
//     the settings are frozen.
//
// The study repeats this for `seeds` training seeds of the pair (seed, seed+1, …: weights, split and batch order
// change; the evaluation documents stay the same), on each corpus for its first corpora[].seeds of them, and the
// claims pool the seeds of a corpus. Both models of a pair have the
// same data, schedule and number of updates (pair.Config). Settings that depart from the spec's defaults and bear on
// the claims (ProtoT initial routing temperatures other than the official ones, set with --set, which the LLaMA
// baseline has no counterpart of) are listed in Result.Departures and named in every claim's method.
//
// Unit counts: the prototypes are all L·R of them by π (and by ρ), unselected; the heads all L·H, unselected; each
// SAE selection keeps R features per layer (sae.features), so the selected SAE kinds have as many units as the
// prototypes but are the best R of F = 8·D by a rule measured on the selection split; the unselected SAE kind
// (every feature that fires on the selection split) gives the same treatment as prototypes and heads.
//
// # Claims
//
// Claims turns a stored result into scorecard rows (workbench/report), each with its rule fixed in code, one set of
// rows per corpus of ClaimSources: the synthetic corpus (its concepts' ground-truth labels), then the Brown corpus
// (its words' WordNet supersenses; the same ids, "Brown" in the claims and methods). A claim needs at least
// MinClaimSeeds training seeds; with fewer its row says it is not testable at the preset.
//
//   - Masking (protot_writemask_female_women, spec §7.4: the "female" prototype's mask on "women"). Per seed, the
//     (target, prototype) write mask with the most negative calibration ΔProb among those with calibration |ΔPPL| <
//     intervene.max_ppl_change is chosen on the calibration split (ChooseSelective); its ΔProb on the evaluation
//     text is the seed's value, or 0 when its held-out |ΔPPL| breaks the bound (MaskingEffect). Ours is the mean ±
//     s.e. over seeds, in percent; reproduced when ours + 2 s.e. ≤ the paper's number.
//   - Disentanglement (protot_disent_protot, _heads, _sae_var, _sae_freq, spec §8: the judge ranks prototypes above
//     SAE features above heads). The paper's scores are 1–10 judgements; ours is D ∈ [0, 1] below, so only the order
//     is compared. For each kind, the units of all seeds are pooled (PooledKindStats); D is averaged over the units
//     named with a concept label, because a unit whose top tokens all carry the label "none" (function words,
//     punctuation) has D = 1 without carrying a concept; the share of units labelled "none" is reported beside it.
//     Both come with 95% percentile bootstrap intervals over units (workbench/stats.MeanCI). Prototypes are more
//     disentangled than a kind when their interval lies entirely above the kind's; they are the most disentangled
//     kind when that holds for heads and both SAE selections.
//
// # Labels and metrics
//
// Every evaluation token carries a set of labels "concept=value" (naming.Labelling, workbench/naming/text.go):
// corpora[].labels "marked" (the synthetic corpus: the values the token's word expresses), "in_force" (the values in
// force in its context) or "lexical" (WordNet glosses and the Brown corpus: every supersense of the word).
//
// The lexical rule, the same for WordNet glosses and Brown text: the text is cut into words as WordNet's glosses are
// (runs of letters, digits, hyphens and apostrophes; any other mark a word of its own; wordnet.WordLabels), and a
// word carries "supersense=<lexicographer file>" for every lexicographer file of the WordNet synsets that list it
// as a lemma, looked up whole and case-insensitively, with no inflection undone (wordnet.DB.Supersenses: "food" →
// noun.Tops, noun.cognition, noun.food; "foods", "the", punctuation → none). Every token of a word carries its
// labels. On the Brown corpus these labels also name the intervention targets: a target is a supersense, its words
// those WordNet lists under it. With eval.none_label a token carrying
// no concept label carries "none", scored like any label but never a concept: it counts neither in the fraction of
// labels named nor as an intervention target. Labels carried by fewer than eval.min_label_count evaluation tokens
// are dropped. The unit metrics (eval.tokens_per_unit top tokens, eval.one_per_doc, eval.min_purity, eval.alpha,
// eval.theme_excess) and the intervention effects (intervene.*) are defined in models/pair's doc.go.
//
// # Files
//
// With run.Out set: the two models of each corpus under run.Out/models/ (models/lm, shared with every study that asks
// for the same lm.Config, experiments/robustness among them) and the result under run.Out/interp/ (Result).
// LoadOrRun reuses the stored result when its config matches.
package interp
